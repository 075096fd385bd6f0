// GLPK 5.0 backend: builds a glp_prob from a milp::Model, runs glp_intopt and maps the outcome to a Status.
//
// Thread safety. GLPK keeps all of its state (allocated memory, hooks, terminal settings) in one
// "environment". Debian's GLPK 5.0 is built with thread-local environments (glp_config("TLS") returns
// "_Thread_local"), so threads that each solve their own problems share nothing and need no lock; the
// Milp.ConcurrentSolvesInSeveralThreads test exercises this. A GLPK built without TLS shares one environment
// between threads, so then solves are serialised by a mutex. A thread's environment is freed only by
// glp_free_env() in that thread: each solving thread does that when it exits (otherwise every thread that
// ever solved would leak its environment).
//
// Fatal errors. GLPK reports internal errors through glp_error(), which calls the error hook and then
// abort(). As GLPK's manual describes, the hook may longjmp out instead, after which the application must
// call glp_free_env(); that frees every GLPK object of the thread. Everything that runs between the setjmp
// and a possible longjmp (build_and_solve and the callbacks) therefore holds only trivially destructible
// locals, and every buffer it uses lives in a Run outside that region.
#include "milp/glpk/glpk_solver.h"

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <csetjmp>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/log.h"

namespace rltune::milp::glpk {
namespace {

using Clock = std::chrono::steady_clock;

// Integrality and warm-start feasibility tolerance, relative to max(1, |bound|).
constexpr double kFeasTol = 1e-6;
// GLPK marks "no bound yet" with +-DBL_MAX; bounds this large are treated as unknown.
constexpr double kNoBound = 1e300;
// Floor of the denominator of the relative gap, so an objective of 0 does not divide by zero.
constexpr double kGapFloor = 1e-9;
// Enough of GLPK's own text to explain a failure, without letting a chatty run grow a message unboundedly.
constexpr std::size_t kMaxCapturedOutput = 2000;

// The model in GLPK's form: 1-based arrays, integer bounds rounded inward, duplicate terms merged.
struct Prepared {
  int n = 0;
  int m = 0;
  std::vector<int> col_kind;  // [1..n] GLP_CV, GLP_IV or GLP_BV
  std::vector<double> col_lb, col_ub;  // [1..n]
  std::vector<double> row_lb, row_ub;  // [1..m]
  // Row i's nonzeros are ind/val[row_start[i] + 1 .. row_start[i + 1]]; element 0 is unused, because
  // glp_set_mat_row reads its arrays from index 1.
  std::vector<int> row_start;  // [1..m+1]
  std::vector<int> ind;
  std::vector<double> val;
  std::string empty_domain;  // names an integer variable whose rounded bounds leave no value, if any
};

Prepared prepare(const Model& model) {
  Prepared p;
  p.n = static_cast<int>(model.variables.size());
  p.m = static_cast<int>(model.constraints.size());
  p.col_kind.assign(static_cast<std::size_t>(p.n) + 1, GLP_CV);
  p.col_lb.assign(static_cast<std::size_t>(p.n) + 1, 0);
  p.col_ub.assign(static_cast<std::size_t>(p.n) + 1, 0);
  for (int j = 1; j <= p.n; ++j) {
    const Variable& v = model.variables[static_cast<std::size_t>(j) - 1];
    double lb = v.lower;
    double ub = v.upper;
    if (v.kind != VarKind::continuous) {
      if (v.kind == VarKind::binary) {
        lb = std::max(lb, 0.0);
        ub = std::min(ub, 1.0);
      }
      // GLPK rejects integer columns with fractional bounds (GLP_EBOUND); the integer domain is the same.
      if (std::isfinite(lb)) lb = std::ceil(lb - kFeasTol);
      if (std::isfinite(ub)) ub = std::floor(ub + kFeasTol);
      if (lb > ub && p.empty_domain.empty())
        p.empty_domain = fmt::format("variable {} '{}' has no integer value within [{}, {}]", j - 1, v.name,
                                     v.lower, v.upper);
    }
    p.col_kind[static_cast<std::size_t>(j)] =
        v.kind == VarKind::continuous ? GLP_CV : (v.kind == VarKind::binary ? GLP_BV : GLP_IV);
    p.col_lb[static_cast<std::size_t>(j)] = lb;
    p.col_ub[static_cast<std::size_t>(j)] = ub;
  }
  p.row_lb.assign(static_cast<std::size_t>(p.m) + 1, 0);
  p.row_ub.assign(static_cast<std::size_t>(p.m) + 1, 0);
  p.row_start.assign(static_cast<std::size_t>(p.m) + 2, 0);
  p.ind.assign(1, 0);
  p.val.assign(1, 0);
  // GLPK aborts on a row that names a column twice, so repeated terms are summed.
  std::vector<int> position(static_cast<std::size_t>(p.n) + 1, -1);  // column -> index in ind/val, this row
  for (int i = 1; i <= p.m; ++i) {
    const Constraint& c = model.constraints[static_cast<std::size_t>(i) - 1];
    p.row_lb[static_cast<std::size_t>(i)] = c.lower;
    p.row_ub[static_cast<std::size_t>(i)] = c.upper;
    const std::size_t first = p.ind.size();
    p.row_start[static_cast<std::size_t>(i)] = static_cast<int>(first) - 1;
    for (const Term& t : c.terms) {
      const int col = t.var + 1;
      int& pos = position[static_cast<std::size_t>(col)];
      // `position` outlives rows and dropping zeros compacts ind/val, so a stale entry can point into
      // this row: it names this column only if ind says so.
      if (pos >= static_cast<int>(first) && static_cast<std::size_t>(pos) < p.ind.size() &&
          p.ind[static_cast<std::size_t>(pos)] == col) {
        p.val[static_cast<std::size_t>(pos)] += t.coef;
      } else {
        pos = static_cast<int>(p.ind.size());
        p.ind.push_back(col);
        p.val.push_back(t.coef);
      }
    }
    // Drop exact zeros (given, or left by merging): they carry no information.
    std::size_t kept = first;
    for (std::size_t k = first; k < p.ind.size(); ++k) {
      if (p.val[k] == 0) continue;
      p.ind[kept] = p.ind[k];
      p.val[kept] = p.val[k];
      ++kept;
    }
    p.ind.resize(kept);
    p.val.resize(kept);
  }
  p.row_start[static_cast<std::size_t>(p.m) + 1] = static_cast<int>(p.ind.size()) - 1;
  return p;
}

int bound_type(double lb, double ub) {
  if (lb == -kInfinity && ub == kInfinity) return GLP_FR;
  if (ub == kInfinity) return GLP_LO;
  if (lb == -kInfinity) return GLP_UP;
  if (lb == ub) return GLP_FX;
  return GLP_DB;
}

// glp_set_*_bnds ignores the bound a type does not use; pass 0 there rather than an infinity.
double finite_or_zero(double b) { return std::isfinite(b) ? b : 0.0; }

// GLPK time limits are whole milliseconds, INT_MAX meaning none. Rounds up, so a positive limit is at least 1.
int to_glpk_ms(double ms) {
  if (!(ms > 0)) return INT_MAX;
  const double up = std::ceil(ms);
  return up >= static_cast<double>(INT_MAX) ? INT_MAX : std::max(1, static_cast<int>(up));
}

double slack(double bound) { return kFeasTol * std::max(1.0, std::fabs(bound)); }

// Why `x` is not a feasible point of the prepared model, or "" when it is.
std::string infeasibility(const Model& model, const Prepared& p, const std::vector<double>& x) {
  for (int j = 1; j <= p.n; ++j) {
    const double v = x[static_cast<std::size_t>(j) - 1];
    const double lb = p.col_lb[static_cast<std::size_t>(j)];
    const double ub = p.col_ub[static_cast<std::size_t>(j)];
    if (v < lb - slack(lb) || v > ub + slack(ub))
      return fmt::format("variable {} = {} is outside [{}, {}]", j - 1, v, lb, ub);
    if (p.col_kind[static_cast<std::size_t>(j)] != GLP_CV && std::fabs(v - std::round(v)) > kFeasTol)
      return fmt::format("integer variable {} = {} is fractional", j - 1, v);
  }
  for (std::size_t i = 0; i < model.constraints.size(); ++i) {
    const Constraint& c = model.constraints[i];
    double activity = 0;
    for (const Term& t : c.terms) activity += t.coef * x[static_cast<std::size_t>(t.var)];
    if (activity < c.lower - slack(c.lower) || activity > c.upper + slack(c.upper))
      return fmt::format("constraint {} '{}': activity {} is outside [{}, {}]", i, c.name, activity, c.lower,
                         c.upper);
  }
  return "";
}

const char* return_code_name(int code) {
  switch (code) {
    case GLP_EBADB: return "GLP_EBADB (invalid basis)";
    case GLP_ESING: return "GLP_ESING (singular matrix)";
    case GLP_ECOND: return "GLP_ECOND (ill-conditioned matrix)";
    case GLP_EBOUND: return "GLP_EBOUND (invalid bounds)";
    case GLP_EFAIL: return "GLP_EFAIL (solver failed)";
    case GLP_EROOT: return "GLP_EROOT (root LP optimum not provided)";
    case GLP_ESTOP: return "GLP_ESTOP (search terminated by application)";
    case GLP_EITLIM: return "GLP_EITLIM (iteration limit exceeded)";
    default: return "an unexpected code";
  }
}

// Everything build_and_solve() and the GLPK callbacks read or write. It lives outside the longjmp region.
struct Run {
  // Inputs.
  const Model* model = nullptr;
  const Prepared* prep = nullptr;
  const double* warm = nullptr;  // [1..n] values to offer GLPK (integers exact), or nullptr
  double time_limit_ms = 0;
  long node_limit = 0;
  bool node_limit_hit = false;
  double mip_gap = 0;
  Clock::time_point start;

  // State and outcome.
  glp_prob* lp = nullptr;  // deleted by ProblemGuard, or already freed by glp_free_env after a fatal error
  bool simplex_ran = false;
  int simplex_ret = 0;
  int lp_status = GLP_UNDEF;
  bool budget_spent = false;  // the time limit ran out before glp_intopt could start
  int intopt_ret = 0;
  int mip_status = GLP_UNDEF;
  double objective = 0;
  std::vector<double> values;  // [0..n-1], filled when mip_status is GLP_OPT or GLP_FEAS
  bool have_bound = false;
  double bound = 0;  // tightest bound on the optimum seen by the callback
  bool warm_offered = false;
  bool warm_accepted = false;
  std::string output;  // GLPK's terminal text (fatal error messages)
};

struct ProblemGuard {
  glp_prob*& lp;
  ~ProblemGuard() {
    if (lp != nullptr) glp_delete_prob(lp);
  }
};

// Terminal hook: GLPK's text goes to the debug log (and into Run::output), never to stdout. With terminal
// output off and msg_lev GLP_MSG_OFF, only fatal-error text arrives (glp_error turns output back on).
int on_glpk_output(void* info, const char* text) {
  try {
    std::string_view s(text);
    while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
    if (!s.empty()) spdlog::debug("glpk: {}", s);
    std::string& out = static_cast<Run*>(info)->output;
    if (out.size() < kMaxCapturedOutput) out.append(text);
  } catch (...) {
    // Exceptions must not cross GLPK's C frames; losing a log line is harmless.
  }
  return 1;  // handled
}

// Branch-and-cut callback (every reason): records the best bound for the gap, and offers the warm start
// once, at the first request for a heuristic solution.
void on_tree_event(glp_tree* tree, void* info) {
  Run& r = *static_cast<Run*>(info);
  if (r.node_limit > 0 && glp_ios_reason(tree) == GLP_ISELECT) {
    int active = 0, current = 0, total = 0;
    glp_ios_tree_size(tree, &active, &current, &total);
    if (total >= r.node_limit) {
      r.node_limit_hit = true;
      glp_ios_terminate(tree);
      return;
    }
  }
  const int best = glp_ios_best_node(tree);
  if (best != 0) {
    const double b = glp_ios_node_bound(tree, best);
    if (std::fabs(b) < kNoBound) {
      // Every recorded value is a valid bound; keep the tightest.
      if (!r.have_bound) r.bound = b;
      else r.bound = r.model->maximize ? std::min(r.bound, b) : std::max(r.bound, b);
      r.have_bound = true;
    }
  }
  if (r.warm != nullptr && !r.warm_offered && glp_ios_reason(tree) == GLP_IHEUR) {
    r.warm_offered = true;
    r.warm_accepted = glp_ios_heur_sol(tree, r.warm) == 0;  // rejected when GLPK already has a better one
  }
}

// The GLPK part of a solve; runs inside run_guarded (see the file comment for what it may hold).
void build_and_solve(void* arg) {
  Run& r = *static_cast<Run*>(arg);
  const Prepared& p = *r.prep;
  glp_term_out(GLP_OFF);
  glp_term_hook(on_glpk_output, &r);

  r.lp = glp_create_prob();
  glp_set_obj_dir(r.lp, r.model->maximize ? GLP_MAX : GLP_MIN);
  glp_set_obj_coef(r.lp, 0, r.model->objective_constant);
  if (p.n > 0) glp_add_cols(r.lp, p.n);
  for (int j = 1; j <= p.n; ++j) {
    const std::size_t k = static_cast<std::size_t>(j);
    glp_set_col_kind(r.lp, j, p.col_kind[k]);  // before the bounds: GLP_BV resets them to [0, 1]
    glp_set_col_bnds(r.lp, j, bound_type(p.col_lb[k], p.col_ub[k]), finite_or_zero(p.col_lb[k]),
                     finite_or_zero(p.col_ub[k]));
    glp_set_obj_coef(r.lp, j, r.model->variables[k - 1].objective);
  }
  if (p.m > 0) glp_add_rows(r.lp, p.m);
  for (int i = 1; i <= p.m; ++i) {
    const std::size_t k = static_cast<std::size_t>(i);
    glp_set_row_bnds(r.lp, i, bound_type(p.row_lb[k], p.row_ub[k]), finite_or_zero(p.row_lb[k]),
                     finite_or_zero(p.row_ub[k]));
    const int first = p.row_start[k];
    const int len = p.row_start[k + 1] - first;
    if (len > 0) glp_set_mat_row(r.lp, i, len, p.ind.data() + first, p.val.data() + first);
  }

  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  parm.tm_lim = to_glpk_ms(r.time_limit_ms);
  parm.mip_gap = r.mip_gap;
  parm.cb_func = on_tree_event;
  parm.cb_info = &r;
  if (r.warm != nullptr) {
    // glp_ios_heur_sol takes values for the columns of the problem being searched, and the presolver
    // replaces that problem by a reduced one with fewer columns. So a warm start is offered without
    // presolve, which requires an optimal LP relaxation basis before glp_intopt.
    parm.presolve = GLP_OFF;
    glp_scale_prob(r.lp, GLP_SF_AUTO);
    glp_smcp smcp;
    glp_init_smcp(&smcp);
    smcp.msg_lev = GLP_MSG_OFF;
    smcp.tm_lim = parm.tm_lim;
    r.simplex_ran = true;
    r.simplex_ret = glp_simplex(r.lp, &smcp);
    if (r.simplex_ret != 0) return;
    r.lp_status = glp_get_status(r.lp);
    if (r.lp_status != GLP_OPT) return;
    if (r.time_limit_ms > 0) {
      const double spent_ms = std::chrono::duration<double, std::milli>(Clock::now() - r.start).count();
      if (spent_ms >= r.time_limit_ms) {
        r.budget_spent = true;
        return;
      }
      parm.tm_lim = to_glpk_ms(r.time_limit_ms - spent_ms);
    }
  }
  r.intopt_ret = glp_intopt(r.lp, &parm);
  r.mip_status = glp_mip_status(r.lp);
  if (r.mip_status == GLP_OPT || r.mip_status == GLP_FEAS) {
    r.objective = glp_mip_obj_val(r.lp);
    for (int j = 1; j <= p.n; ++j) r.values[static_cast<std::size_t>(j) - 1] = glp_mip_col_val(r.lp, j);
  }
}

void jump_out_of_glpk(void* info) { std::longjmp(*static_cast<std::jmp_buf*>(info), 1); }

// Runs body(arg) and returns true, or returns false when GLPK hit a fatal error; then this thread's GLPK
// environment, with every GLPK object in it, has been freed.
bool run_guarded(void (*body)(void*), void* arg) {
  std::jmp_buf on_error;
  glp_error_hook(jump_out_of_glpk, &on_error);
  if (setjmp(on_error) != 0) {
    glp_free_env();  // required after leaving glp_error by longjmp; also removes the hooks
    return false;
  }
  body(arg);
  glp_error_hook(nullptr, nullptr);
  glp_term_hook(nullptr, nullptr);
  return true;
}

// See the file comment: with thread-local environments, each thread frees its own when it exits.
struct EnvReleaser {
  ~EnvReleaser() { glp_free_env(); }
};

bool thread_local_environments() {
  static const bool tls = glp_config("TLS") != nullptr;
  return tls;
}

// Serialises solves only when GLPK shares one environment between threads.
std::unique_lock<std::mutex> lock_if_shared_environment() {
  static std::mutex shared_environment;
  if (thread_local_environments()) {
    thread_local EnvReleaser releaser;  // constructed on a thread's first solve, destroyed at its exit
    (void)releaser;
    return {};
  }
  return std::unique_lock<std::mutex>(shared_environment);
}

// Runs body(&run) with the environment lock when needed, deleting run.lp afterwards. Returns false after a
// fatal GLPK error; run.output then holds GLPK's message.
bool run_glpk(void (*body)(void*), Run& run) {
  const std::unique_lock<std::mutex> lock = lock_if_shared_environment();
  ProblemGuard guard{run.lp};
  if (run_guarded(body, &run)) return true;
  run.lp = nullptr;  // already freed by glp_free_env
  return false;
}

Solution fatal_error(const Run& run) {
  Solution s;
  s.status = Status::error;
  s.gap = kInfinity;
  std::string text = run.output;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  s.message = "GLPK fatal error: " + text;
  spdlog::warn("milp: {}", s.message);
  return s;
}

// True when `candidate` has a strictly better objective than `incumbent`.
bool better(const Model& model, double candidate, double incumbent) {
  return model.maximize ? candidate > incumbent : candidate < incumbent;
}

// Maps what GLPK did to the caller's Solution (status, values, objective, message).
void decode(const Run& r, Solution& s) {
  if (r.simplex_ran && r.simplex_ret != 0) {
    if (r.simplex_ret == GLP_ETMLIM) {
      s.status = Status::time_limit;
    } else {
      s.status = Status::error;
      s.message = fmt::format("glp_simplex returned {}", return_code_name(r.simplex_ret));
    }
    return;
  }
  if (r.simplex_ran && r.lp_status != GLP_OPT) {
    if (r.lp_status == GLP_NOFEAS) {
      s.status = Status::infeasible;
    } else if (r.lp_status == GLP_UNBND) {
      s.status = Status::unbounded;
    } else {
      s.status = Status::error;
      s.message = fmt::format("glp_simplex ended with LP status {}", r.lp_status);
    }
    return;
  }
  if (r.budget_spent) {
    s.status = Status::time_limit;
    return;
  }
  const bool solution = r.mip_status == GLP_OPT || r.mip_status == GLP_FEAS;
  switch (r.intopt_ret) {
    case 0:
      if (r.mip_status == GLP_OPT) {
        s.status = Status::optimal;
      } else if (r.mip_status == GLP_FEAS) {
        s.status = Status::feasible;
      } else if (r.mip_status == GLP_NOFEAS) {
        s.status = Status::infeasible;
      } else {
        s.status = Status::error;
        s.message = fmt::format("glp_intopt succeeded with MIP status {}", r.mip_status);
      }
      break;
    case GLP_EMIPGAP:  // stopped because the gap is within relative_gap: optimal by the caller's tolerance
      s.status = Status::optimal;
      break;
    case GLP_ETMLIM:
      s.status = Status::time_limit;
      break;
    case GLP_ENOPFS:  // the LP relaxation (hence the MILP) has no feasible point
      s.status = Status::infeasible;
      break;
    case GLP_ENODFS:  // the LP relaxation is unbounded
      s.status = Status::unbounded;
      break;
    case GLP_ESTOP:  // the node limit (the only reason this backend stops a search): keep what was found
      s.status = solution ? Status::feasible : Status::error;
      if (!solution)
        s.message = r.node_limit_hit ? fmt::format("node limit {} reached without a solution", r.node_limit)
                                     : fmt::format("glp_intopt returned {}", return_code_name(r.intopt_ret));
      break;
    default:
      s.status = Status::error;
      s.message = fmt::format("glp_intopt returned {}", return_code_name(r.intopt_ret));
      break;
  }
  if (solution && s.status != Status::error && s.status != Status::infeasible &&
      s.status != Status::unbounded) {
    s.has_solution = true;
    s.objective = r.objective;
    s.values = r.values;
  }
}

}  // namespace

Solution solve(const Model& model, const SolveOptions& options) {
  const Clock::time_point start = Clock::now();
  Solution s;
  const Prepared prep = prepare(model);
  auto finish = [&]() {
    s.wall_us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
    return s;
  };
  if (!prep.empty_domain.empty()) {
    s.status = Status::infeasible;
    s.gap = kInfinity;
    s.message = prep.empty_domain;
    return finish();
  }

  // A warm start is used only when it is feasible; otherwise it is ignored and the message says why.
  std::vector<double> warm;
  double warm_objective = 0;
  if (!options.warm_start.empty()) {
    const std::string why = infeasibility(model, prep, options.warm_start);
    if (why.empty()) {
      warm.assign(static_cast<std::size_t>(prep.n) + 1, 0);
      warm_objective = model.objective_constant;
      for (int j = 1; j <= prep.n; ++j) {
        double v = options.warm_start[static_cast<std::size_t>(j) - 1];
        if (prep.col_kind[static_cast<std::size_t>(j)] != GLP_CV) v = std::round(v);  // GLPK wants exact
        warm[static_cast<std::size_t>(j)] = v;
        warm_objective += model.variables[static_cast<std::size_t>(j) - 1].objective * v;
      }
    } else {
      s.message = "warm start ignored: " + why;
      spdlog::debug("milp: {}", s.message);
    }
  }

  Run run;
  run.model = &model;
  run.prep = &prep;
  run.warm = warm.empty() ? nullptr : warm.data();
  run.time_limit_ms = options.time_limit_ms;
  run.node_limit = options.node_limit;
  run.mip_gap = options.relative_gap;
  run.start = start;
  run.values.assign(static_cast<std::size_t>(prep.n), 0);

  if (!run_glpk(build_and_solve, run)) {
    s = fatal_error(run);
    return finish();
  }

  if (run.warm != nullptr)
    spdlog::debug("milp: warm start {}", !run.warm_offered   ? "not offered (no heuristic call)"
                                         : run.warm_accepted ? "accepted by GLPK"
                                                             : "rejected by GLPK (it had a better solution)");
  decode(run, s);
  // The warm start is a feasible solution too: when the time limit struck before GLPK took it (or found
  // something better), return it rather than nothing or a worse point.
  if (s.status == Status::time_limit && !warm.empty() &&
      (!s.has_solution || better(model, warm_objective, s.objective))) {
    s.has_solution = true;
    s.objective = warm_objective;
    s.values.assign(warm.begin() + 1, warm.end());
  }
  if (!s.has_solution) {
    s.gap = kInfinity;
  } else if (s.status == Status::optimal && run.intopt_ret == 0) {
    s.gap = 0;
  } else if (run.have_bound) {
    const double excess = model.maximize ? run.bound - s.objective : s.objective - run.bound;
    s.gap = std::max(0.0, excess) / std::max(kGapFloor, std::fabs(s.objective));
  } else {
    s.gap = kInfinity;
  }
  return finish();
}

Solution provoke_fatal_error_for_test() {
  Run run;
  const auto invalid_call = [](void* arg) {
    Run& r = *static_cast<Run*>(arg);
    glp_term_out(GLP_OFF);
    glp_term_hook(on_glpk_output, &r);
    r.lp = glp_create_prob();
    glp_set_col_kind(r.lp, 1, GLP_IV);  // the problem has no column 1: glp_error
  };
  if (run_glpk(invalid_call, run)) {
    Solution s;
    s.message = "GLPK accepted an invalid call";  // status stays error; the test fails on the message
    return s;
  }
  return fatal_error(run);
}

}  // namespace rltune::milp::glpk
