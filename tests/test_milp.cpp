// The solver-neutral MILP model and its GLPK backend: known optima, outcomes as statuses, warm starts,
// malformed models, repeated and concurrent solves, and recovery from GLPK fatal errors.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "milp/glpk/glpk_solver.h"
#include "milp/model.h"

namespace rltune::milp {
namespace {

constexpr double kTol = 1e-6;

int add(Model& m, VarKind kind, double objective, double lower = 0, double upper = kInfinity,
        const std::string& name = "") {
  return m.add_variable(Variable{name, kind, lower, upper, objective});
}

void add_row(Model& m, std::vector<Term> terms, double lower, double upper, const std::string& name = "") {
  m.add_constraint(Constraint{name, std::move(terms), lower, upper});
}

// True when `x` satisfies every bound, integrality requirement and row of `m` (within kTol).
::testing::AssertionResult feasible(const Model& m, const std::vector<double>& x) {
  if (x.size() != m.variables.size()) return ::testing::AssertionFailure() << "wrong number of values";
  for (std::size_t j = 0; j < x.size(); ++j) {
    const Variable& v = m.variables[j];
    if (x[j] < v.lower - kTol || x[j] > v.upper + kTol)
      return ::testing::AssertionFailure() << "variable " << j << " = " << x[j] << " out of bounds";
    if (v.kind != VarKind::continuous && std::fabs(x[j] - std::round(x[j])) > kTol)
      return ::testing::AssertionFailure() << "variable " << j << " = " << x[j] << " is fractional";
    if (v.kind == VarKind::binary && (x[j] < -kTol || x[j] > 1 + kTol))
      return ::testing::AssertionFailure() << "binary " << j << " = " << x[j];
  }
  for (std::size_t i = 0; i < m.constraints.size(); ++i) {
    double activity = 0;
    for (const Term& t : m.constraints[i].terms) activity += t.coef * x[static_cast<std::size_t>(t.var)];
    const double slack = kTol * std::max(1.0, std::fabs(activity));
    if (activity < m.constraints[i].lower - slack || activity > m.constraints[i].upper + slack)
      return ::testing::AssertionFailure() << "row " << i << " activity " << activity << " violated";
  }
  return ::testing::AssertionSuccess();
}

double objective_of(const Model& m, const std::vector<double>& x) {
  double z = m.objective_constant;
  for (std::size_t j = 0; j < x.size(); ++j) z += m.variables[j].objective * x[j];
  return z;
}

// max sum(value x) s.t. sum(weight x) <= capacity, x binary.
Model knapsack(const std::vector<double>& value, const std::vector<double>& weight, double capacity) {
  Model m;
  m.maximize = true;
  std::vector<Term> row;
  for (std::size_t j = 0; j < value.size(); ++j) row.push_back({add(m, VarKind::binary, value[j]), weight[j]});
  add_row(m, row, -kInfinity, capacity, "capacity");
  return m;
}

double brute_force_knapsack(const std::vector<double>& value, const std::vector<double>& weight, double capacity) {
  const std::size_t n = value.size();
  double best = 0;
  for (std::uint32_t mask = 0; mask < (1u << n); ++mask) {
    double v = 0, w = 0;
    for (std::size_t j = 0; j < n; ++j)
      if (mask & (1u << j)) v += value[j], w += weight[j];
    if (w <= capacity && v > best) best = v;
  }
  return best;
}

// Reproducible small integers from a seeded engine (raw mt19937 output is specified by the standard;
// distributions are not).
struct Draw {
  std::mt19937 rng;
  explicit Draw(std::uint32_t seed) : rng(seed) {}
  int operator()(int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<std::uint32_t>(hi - lo + 1)); }
};

// No time limit: the default 20 ms budget is wall-clock time, and a loaded machine (or a sanitizer build)
// could make a test that expects an optimum see a time limit instead.
SolveOptions unlimited() {
  SolveOptions o;
  o.time_limit_ms = 0;
  return o;
}

void expect_optimal(const Solution& s, double objective) {
  ASSERT_EQ(s.status, Status::optimal) << to_string(s.status) << ": " << s.message;
  ASSERT_TRUE(s.has_solution);
  EXPECT_NEAR(s.objective, objective, kTol);
  EXPECT_EQ(s.gap, 0);
  EXPECT_GE(s.wall_us, 0);
}

TEST(Milp, StatusNames) {
  EXPECT_STREQ(to_string(Status::optimal), "optimal");
  EXPECT_STREQ(to_string(Status::feasible), "feasible");
  EXPECT_STREQ(to_string(Status::time_limit), "time_limit");
  EXPECT_STREQ(to_string(Status::infeasible), "infeasible");
  EXPECT_STREQ(to_string(Status::unbounded), "unbounded");
  EXPECT_STREQ(to_string(Status::error), "error");
}

TEST(Milp, KnapsackMatchesKnownOptimum) {
  // Capacity 12: items 1, 2, 3 (weights 3 + 4 + 5) are worth 4 + 5 + 6 = 15; nothing else is worth more.
  const std::vector<double> value{3, 4, 5, 6, 10};
  const std::vector<double> weight{2, 3, 4, 5, 9};
  const Model m = knapsack(value, weight, 12);
  const Solution s = solve(m, unlimited());
  expect_optimal(s, 15);
  EXPECT_EQ(brute_force_knapsack(value, weight, 12), 15);
  EXPECT_EQ(s.values, (std::vector<double>{0, 1, 1, 1, 0}));
  EXPECT_TRUE(feasible(m, s.values));
  EXPECT_NEAR(objective_of(m, s.values), s.objective, kTol);
}

TEST(Milp, RandomKnapsacksMatchBruteForce) {
  Draw draw(7);
  for (int instance = 0; instance < 40; ++instance) {
    const int n = draw(1, 12);
    std::vector<double> value, weight;
    double total = 0;
    for (int j = 0; j < n; ++j) {
      value.push_back(draw(1, 30));
      weight.push_back(draw(1, 20));
      total += weight.back();
    }
    const double capacity = draw(0, static_cast<int>(total));
    const Solution s = solve(knapsack(value, weight, capacity), unlimited());
    expect_optimal(s, brute_force_knapsack(value, weight, capacity));
  }
}

// Random small integer programs (general bounds, negative coefficients, all row types, either sense)
// against enumeration of every integer point.
TEST(Milp, RandomIntegerProgramsMatchEnumeration) {
  Draw draw(42);
  int infeasible = 0;
  for (int instance = 0; instance < 300; ++instance) {
    Model m;
    m.maximize = draw(0, 1) == 1;
    m.objective_constant = draw(-5, 5);
    const int n = draw(1, 5);
    for (int j = 0; j < n; ++j) {
      const int lower = draw(-3, 1);
      const VarKind kind = draw(0, 3) == 0 ? VarKind::binary : VarKind::integer;
      if (kind == VarKind::binary) add(m, kind, draw(-20, 20) / 4.0);
      else add(m, kind, draw(-20, 20) / 4.0, lower, lower + draw(0, 4));
    }
    for (int i = draw(0, 4); i > 0; --i) {
      std::vector<Term> terms;
      for (int j = 0; j < n; ++j)
        if (draw(0, 2) != 0) terms.push_back({j, static_cast<double>(draw(-5, 5))});
      const double a = draw(-6, 6), b = a + draw(0, 6);
      switch (draw(0, 3)) {
        case 0: add_row(m, terms, a, kInfinity); break;
        case 1: add_row(m, terms, -kInfinity, b); break;
        case 2: add_row(m, terms, a, b); break;
        default: add_row(m, terms, a, a); break;
      }
    }
    // Enumerate the box of integer points.
    std::vector<double> x(static_cast<std::size_t>(n)), lo(x.size()), hi(x.size());
    for (std::size_t j = 0; j < x.size(); ++j) {
      const bool binary = m.variables[j].kind == VarKind::binary;  // bounds [0, inf) mean [0, 1]
      lo[j] = binary ? 0 : m.variables[j].lower;
      hi[j] = binary ? 1 : m.variables[j].upper;
      x[j] = lo[j];
    }
    bool found = false;
    double best = 0;
    for (;;) {
      if (feasible(m, x)) {
        const double z = objective_of(m, x);
        if (!found || (m.maximize ? z > best : z < best)) best = z;
        found = true;
      }
      std::size_t j = 0;
      while (j < x.size() && x[j] == hi[j]) x[j] = lo[j], ++j;
      if (j == x.size()) break;
      x[j] += 1;
    }
    const Solution s = solve(m, unlimited());
    if (!found) {
      ++infeasible;
      EXPECT_EQ(s.status, Status::infeasible) << "instance " << instance << ": " << to_string(s.status);
      continue;
    }
    ASSERT_EQ(s.status, Status::optimal) << "instance " << instance << ": " << s.message;
    EXPECT_NEAR(s.objective, best, kTol) << "instance " << instance;
    EXPECT_TRUE(feasible(m, s.values)) << "instance " << instance;
  }
  EXPECT_GT(infeasible, 0);  // the generator covers both outcomes
  EXPECT_LT(infeasible, 250);
}

TEST(Milp, BranchingNeededWhenTheRelaxationIsFractional) {
  // max 5x + 4y s.t. 6x + 4y <= 24, x + 2y <= 6, x, y >= 0 integer. LP optimum (3, 1.5) = 21; integer
  // optimum (4, 0) = 20.
  Model m;
  m.maximize = true;
  const int x = add(m, VarKind::integer, 5);
  const int y = add(m, VarKind::integer, 4);
  add_row(m, {{x, 6}, {y, 4}}, -kInfinity, 24);
  add_row(m, {{x, 1}, {y, 2}}, -kInfinity, 6);
  const Solution s = solve(m, unlimited());
  expect_optimal(s, 20);
  EXPECT_NEAR(s.values[0], 4, kTol);
  EXPECT_NEAR(s.values[1], 0, kTol);
}

TEST(Milp, PureLinearProgram) {
  // max 3x + 2y s.t. x + y <= 4, x + 3y <= 6, x <= 3: optimum (3, 1) = 11.
  Model m;
  m.maximize = true;
  const int x = add(m, VarKind::continuous, 3, 0, 3);
  const int y = add(m, VarKind::continuous, 2);
  add_row(m, {{x, 1}, {y, 1}}, -kInfinity, 4);
  add_row(m, {{x, 1}, {y, 3}}, -kInfinity, 6);
  const Solution s = solve(m, unlimited());
  expect_optimal(s, 11);
  EXPECT_NEAR(s.values[0], 3, kTol);
  EXPECT_NEAR(s.values[1], 1, kTol);
}

TEST(Milp, FractionalLinearOptimum) {
  // min x + y s.t. 2x + 2y >= 3: a continuous optimum of 1.5 (an integer model would give 2).
  Model m;
  const int x = add(m, VarKind::continuous, 1);
  const int y = add(m, VarKind::continuous, 1);
  add_row(m, {{x, 2}, {y, 2}}, 3, kInfinity);
  expect_optimal(solve(m, unlimited()), 1.5);
  m.variables[0].kind = VarKind::integer;
  m.variables[1].kind = VarKind::integer;
  expect_optimal(solve(m, unlimited()), 2);
}

TEST(Milp, EqualityRowsAndRanges) {
  // min 2x + 3y + z s.t. x + y + z = 10, 2 <= x, 1 <= y, 3 <= x + y <= 8: optimum x=2, y=1, z=7 -> 14.
  Model m;
  const int x = add(m, VarKind::integer, 2, 2);
  const int y = add(m, VarKind::integer, 3, 1);
  const int z = add(m, VarKind::integer, 1);
  add_row(m, {{x, 1}, {y, 1}, {z, 1}}, 10, 10, "sum");
  add_row(m, {{x, 1}, {y, 1}}, 3, 8, "range");
  const Solution s = solve(m, unlimited());
  expect_optimal(s, 14);
  EXPECT_TRUE(feasible(m, s.values));
  EXPECT_NEAR(s.values[2], 7, kTol);
}

TEST(Milp, FreeVariables) {
  // min x with x, y free: x + y >= 2 and y <= 5 (as a row) give x >= -3.
  Model m;
  const int x = add(m, VarKind::continuous, 1, -kInfinity, kInfinity);
  const int y = add(m, VarKind::continuous, 0, -kInfinity, kInfinity);
  add_row(m, {{x, 1}, {y, 1}}, 2, kInfinity);
  add_row(m, {{y, 1}}, -kInfinity, 5);
  Solution s = solve(m, unlimited());
  expect_optimal(s, -3);
  // A free integer: min x s.t. 2x >= -7 gives x = -3 (the relaxation says -3.5).
  Model n;
  const int k = add(n, VarKind::integer, 1, -kInfinity, kInfinity);
  add_row(n, {{k, 2}}, -7, kInfinity);
  s = solve(n, unlimited());
  expect_optimal(s, -3);
  EXPECT_NEAR(s.values[0], -3, kTol);
}

TEST(Milp, ObjectiveConstantIsIncluded) {
  Model m = knapsack({3, 4, 5}, {1, 2, 3}, 3);  // best 7 (items 0 and 1)
  m.objective_constant = 100;
  expect_optimal(solve(m, unlimited()), 107);
  m.maximize = false;  // min picks nothing: just the constant
  expect_optimal(solve(m, unlimited()), 100);
}

TEST(Milp, ModelWithoutVariablesOrRows) {
  Model m;
  m.objective_constant = 4;
  const Solution s = solve(m, unlimited());
  expect_optimal(s, 4);
  EXPECT_TRUE(s.values.empty());
}

TEST(Milp, DuplicateTermsAreSummed) {
  // max x s.t. x + x <= 3, x integer: the row is 2x <= 3, so x = 1.
  Model m;
  m.maximize = true;
  const int x = add(m, VarKind::integer, 1);
  add_row(m, {{x, 1}, {x, 1}}, -kInfinity, 3);
  expect_optimal(solve(m, unlimited()), 1);
  // Terms that cancel leave an empty row, which is feasible when its bounds contain 0.
  add_row(m, {{x, 1}, {x, -1}}, -1, 1);
  expect_optimal(solve(m, unlimited()), 1);
}

TEST(Milp, BinaryAndIntegerBoundsAreRespected) {
  Model m;
  m.maximize = true;
  add(m, VarKind::binary, 1, 0, 0);                   // fixed to 0
  add(m, VarKind::binary, -1, 1, kInfinity);          // forced to 1 although it costs
  add(m, VarKind::integer, 1, -kInfinity, 2.5);       // fractional upper bound: at most 2
  add(m, VarKind::integer, -1, 0.2, kInfinity);       // fractional lower bound: at least 1
  const Solution s = solve(m, unlimited());
  expect_optimal(s, 0 - 1 + 2 - 1);
  EXPECT_NEAR(s.values[0], 0, kTol);
  EXPECT_NEAR(s.values[1], 1, kTol);
  EXPECT_NEAR(s.values[2], 2, kTol);
  EXPECT_NEAR(s.values[3], 1, kTol);
}

TEST(Milp, InfeasibleModels) {
  // The LP relaxation itself is infeasible.
  Model lp;
  const int x = add(lp, VarKind::continuous, 1);
  const int y = add(lp, VarKind::continuous, 1);
  add_row(lp, {{x, 1}, {y, 1}}, -kInfinity, 1);
  add_row(lp, {{x, 1}, {y, 1}}, 2, kInfinity);
  Solution s = solve(lp, unlimited());
  EXPECT_EQ(s.status, Status::infeasible) << to_string(s.status);
  EXPECT_FALSE(s.has_solution);
  // The relaxation is feasible (x = 1.5) but no integer satisfies 2x = 3.
  Model ip;
  const int k = add(ip, VarKind::integer, 1, 0, 10);
  add_row(ip, {{k, 2}}, 3, 3);
  s = solve(ip, unlimited());
  EXPECT_EQ(s.status, Status::infeasible) << to_string(s.status);
  EXPECT_FALSE(s.has_solution);
  // An integer variable with no integer inside its bounds.
  Model empty;
  add(empty, VarKind::integer, 1, 0.2, 0.8, "k");
  s = solve(empty, unlimited());
  EXPECT_EQ(s.status, Status::infeasible) << to_string(s.status);
  EXPECT_NE(s.message.find("'k'"), std::string::npos) << s.message;
  EXPECT_TRUE(std::isinf(s.gap));
}

TEST(Milp, UnboundedModels) {
  Model lp;
  lp.maximize = true;
  const int x = add(lp, VarKind::continuous, 1);
  const int y = add(lp, VarKind::continuous, 1);
  add_row(lp, {{x, 1}, {y, -1}}, -kInfinity, 1);
  Solution s = solve(lp, unlimited());
  EXPECT_EQ(s.status, Status::unbounded) << to_string(s.status) << " " << s.message;
  EXPECT_FALSE(s.has_solution);
  Model ip;  // min -k, k integer >= 0
  add(ip, VarKind::integer, -1);
  s = solve(ip, unlimited());
  EXPECT_EQ(s.status, Status::unbounded) << to_string(s.status) << " " << s.message;
}

// 70 binary items with large random weights and one equality row (a subset-sum known to have a solution):
// hard for LP-based branch-and-bound, so GLPK cannot finish within 1 ms. `witness` is the subset used to
// choose the right-hand side.
Model hard_subset_sum(std::vector<double>& witness) {
  Draw draw(2024);
  Model m;
  m.maximize = true;
  std::vector<Term> row;
  double target = 0;
  witness.clear();
  for (int j = 0; j < 70; ++j) {
    const double weight = draw(100000, 999999);
    const int x = add(m, VarKind::binary, draw(1, 1000));
    row.push_back({x, weight});
    witness.push_back(draw(0, 1));
    target += weight * witness.back();
  }
  add_row(m, row, target, target, "subset_sum");
  return m;
}

TEST(Milp, NodeLimitStopsAtTheSamePointEveryTime) {
  std::vector<double> witness;
  const Model m = hard_subset_sum(witness);
  SolveOptions options;
  options.time_limit_ms = 0;  // no clock: only the node count stops the search
  options.node_limit = 40;
  const Solution a = solve(m, options), b = solve(m, options);
  EXPECT_TRUE(a.status == Status::feasible || a.status == Status::error) << to_string(a.status) << " " << a.message;
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.has_solution, b.has_solution);
  EXPECT_EQ(a.values, b.values);
  if (a.has_solution) EXPECT_TRUE(feasible(m, a.values));
  else EXPECT_NE(a.message.find("node limit 40"), std::string::npos) << a.message;
  options.node_limit = -1;
  EXPECT_THROW(solve(m, options), InputError);
}

TEST(Milp, TimeLimitIsAnOutcome) {
  std::vector<double> witness;
  const Model m = hard_subset_sum(witness);
  ASSERT_TRUE(feasible(m, witness));
  SolveOptions options;
  options.time_limit_ms = 1;
  const Solution s = solve(m, options);
  EXPECT_EQ(s.status, Status::time_limit) << to_string(s.status) << " " << s.message;
  if (s.has_solution) {
    EXPECT_TRUE(feasible(m, s.values));
    EXPECT_NEAR(objective_of(m, s.values), s.objective, 1e-6 * std::fabs(s.objective));
    EXPECT_GE(s.gap, 0);
  } else {
    EXPECT_TRUE(std::isinf(s.gap));
  }
  EXPECT_FALSE(std::isnan(s.gap));
}

TEST(Milp, WarmStartIsUsedAndKeptUnderATimeLimit) {
  std::vector<double> witness;
  const Model m = hard_subset_sum(witness);
  SolveOptions options;
  options.time_limit_ms = 1;
  options.warm_start = witness;
  const Solution s = solve(m, options);
  EXPECT_EQ(s.status, Status::time_limit) << to_string(s.status) << " " << s.message;
  // A feasible warm start guarantees a solution at least as good as itself.
  ASSERT_TRUE(s.has_solution);
  EXPECT_TRUE(feasible(m, s.values));
  EXPECT_GE(s.objective, objective_of(m, witness) - kTol);
  EXPECT_GE(s.gap, 0);
  EXPECT_FALSE(std::isnan(s.gap));
}

TEST(Milp, WarmStartDoesNotChangeTheOptimum) {
  Draw draw(11);
  for (int instance = 0; instance < 20; ++instance) {
    std::vector<double> value, weight;
    for (int j = 0; j < 10; ++j) {
      value.push_back(draw(1, 30));
      weight.push_back(draw(1, 20));
    }
    const Model m = knapsack(value, weight, 40);
    SolveOptions options = unlimited();
    options.warm_start.assign(10, 0);  // take nothing: feasible, usually far from optimal
    options.warm_start[0] = weight[0] <= 40 ? 1 : 0;
    const Solution s = solve(m, options);
    expect_optimal(s, brute_force_knapsack(value, weight, 40));
    EXPECT_TRUE(feasible(m, s.values));
  }
}

TEST(Milp, InfeasibleWarmStartIsIgnored) {
  const Model m = knapsack({3, 4, 5}, {1, 2, 3}, 3);
  SolveOptions options = unlimited();
  options.warm_start = {1, 1, 1};  // weight 6 > 3
  const Solution s = solve(m, options);
  expect_optimal(s, 7);
  EXPECT_NE(s.message.find("warm start ignored"), std::string::npos) << s.message;
  options.warm_start = {0.5, 0, 0};  // fractional binary
  expect_optimal(solve(m, options), 7);
}

TEST(Milp, RelativeGapStopsEarlyWithAnHonestGap) {
  std::vector<double> witness;
  Model m = hard_subset_sum(witness);
  m.constraints[0].lower = -kInfinity;  // a plain knapsack: easy to get within 50%
  SolveOptions options;
  options.relative_gap = 0.5;
  options.time_limit_ms = 0;
  const Solution s = solve(m, options);
  ASSERT_EQ(s.status, Status::optimal) << to_string(s.status) << " " << s.message;
  EXPECT_TRUE(feasible(m, s.values));
  EXPECT_GE(s.gap, 0);
  EXPECT_LE(s.gap, 0.5 + kTol);
}

TEST(Milp, MalformedModelsThrowInputError) {
  const auto base = [] {
    Model m;
    const int x = add(m, VarKind::continuous, 1, 0, 10, "x");
    add_row(m, {{x, 1}}, 0, 5, "cap");
    return m;
  };
  struct Case {
    std::string name;
    std::function<void(Model&, SolveOptions&)> edit;
    std::string expected;  // part of the message
  };
  const double nan = std::nan("");
  const std::vector<Case> cases{
      {"missing variable", [](Model& m, SolveOptions&) { m.constraints[0].terms.push_back({3, 1}); },
       "variable 3"},
      {"negative variable index", [](Model& m, SolveOptions&) { m.constraints[0].terms.push_back({-1, 1}); },
       "variable -1"},
      {"variable lower > upper", [](Model& m, SolveOptions&) { m.variables[0].lower = 11; }, "'x'"},
      {"row lower > upper", [](Model& m, SolveOptions&) { m.constraints[0].lower = 6; }, "'cap'"},
      {"NaN coefficient", [nan](Model& m, SolveOptions&) { m.constraints[0].terms[0].coef = nan; }, "'cap'"},
      {"infinite coefficient", [](Model& m, SolveOptions&) { m.constraints[0].terms[0].coef = kInfinity; },
       "not finite"},
      {"NaN objective", [nan](Model& m, SolveOptions&) { m.variables[0].objective = nan; }, "'x'"},
      {"infinite objective constant", [](Model& m, SolveOptions&) { m.objective_constant = -kInfinity; },
       "constant"},
      {"NaN bound", [nan](Model& m, SolveOptions&) { m.variables[0].upper = nan; }, "NaN"},
      {"lower bound +inf", [](Model& m, SolveOptions&) { m.constraints[0].lower = m.constraints[0].upper = kInfinity; },
       "+inf"},
      {"upper bound -inf", [](Model& m, SolveOptions&) { m.variables[0].lower = m.variables[0].upper = -kInfinity; },
       "-inf"},
      {"warm start too short", [](Model&, SolveOptions& o) { o.warm_start = {1, 2}; }, "warm start has 2"},
      {"warm start NaN", [nan](Model&, SolveOptions& o) { o.warm_start = {nan}; }, "warm start"},
      {"negative gap", [](Model&, SolveOptions& o) { o.relative_gap = -0.1; }, "relative_gap"},
      {"NaN time limit", [nan](Model&, SolveOptions& o) { o.time_limit_ms = nan; }, "time_limit_ms"},
  };
  for (const Case& c : cases) {
    Model m = base();
    SolveOptions options = unlimited();
    c.edit(m, options);
    try {
      solve(m, options);
      ADD_FAILURE() << c.name << ": no InputError";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << c.name << ": " << e.what();
    }
  }
  // The unedited base model is fine.
  expect_optimal(solve(base(), unlimited()), 0);
}

TEST(Milp, ThousandsOfRepeatedSolvesStayCorrect) {
  const std::vector<double> value{6, 5, 8, 9, 6, 7, 3, 4};
  const std::vector<double> weight{2, 3, 6, 7, 5, 9, 4, 1};
  std::vector<double> expected(38);
  for (int c = 0; c < 38; ++c) expected[static_cast<std::size_t>(c)] = brute_force_knapsack(value, weight, c);
  int wrong = 0;
  for (int i = 0; i < 2000; ++i) {
    const int capacity = i % 38;
    SolveOptions options = unlimited();
    if (i % 3 == 0) options.warm_start.assign(value.size(), 0);  // exercise the warm-start path too
    const Solution s = solve(knapsack(value, weight, capacity), options);
    if (s.status != Status::optimal || std::fabs(s.objective - expected[static_cast<std::size_t>(capacity)]) > kTol)
      ++wrong;
  }
  EXPECT_EQ(wrong, 0);
}

TEST(Milp, ConcurrentSolvesInSeveralThreads) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &wrong] {
      Draw draw(100 + static_cast<std::uint32_t>(t));
      for (int i = 0; i < 100; ++i) {
        std::vector<double> value, weight;
        for (int j = 0; j < 10; ++j) {
          value.push_back(draw(1, 30));
          weight.push_back(draw(1, 20));
        }
        const Solution s = solve(knapsack(value, weight, 50), unlimited());
        if (s.status != Status::optimal || std::fabs(s.objective - brute_force_knapsack(value, weight, 50)) > kTol)
          ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Milp, GlpkFatalErrorBecomesAStatus) {
  const Solution s = glpk::provoke_fatal_error_for_test();
  EXPECT_EQ(s.status, Status::error);
  EXPECT_FALSE(s.has_solution);
  EXPECT_NE(s.message.find("column number out of range"), std::string::npos) << s.message;
  // GLPK's environment was rebuilt: later solves work, repeatedly.
  for (int i = 0; i < 3; ++i) {
    expect_optimal(solve(knapsack({3, 4, 5}, {1, 2, 3}, 3), unlimited()), 7);
    EXPECT_EQ(glpk::provoke_fatal_error_for_test().status, Status::error);
  }
}

}  // namespace
}  // namespace rltune::milp
