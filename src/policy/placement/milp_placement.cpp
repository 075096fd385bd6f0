#include "policy/placement/milp_placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "milp/model.h"
#include "policy/placement/enumerate.h"

namespace rltune::policy {

namespace {

// True when the request fits pool p now on its fewest nodes: the m = fewest_nodes nodes that can take the
// most of it hold all its GPUs (with CPUs and memory unmodelled: the m nodes with most free GPUs).
bool fits(const cluster::ClusterState& state, PoolId p, const cluster::Request& r) {
  const cluster::PoolSpec& pool = state.spec().pools[p];
  int nodes = cluster::fewest_nodes(pool, r);
  if (r.gpus <= 0 || nodes > pool.nodes || !state.freest_nodes_hold(p, nodes, r.gpus)) return false;
  if (!cluster::other_resources_bind(pool, r)) return true;  // each node can take all its free GPUs
  std::vector<int> count(static_cast<std::size_t>(pool.gpus_per_node) + 1, 0);  // nodes by the share they can take
  for (NodeId n = pool.first_node; n < pool.first_node + pool.nodes; ++n) ++count[static_cast<std::size_t>(state.max_share(n, r))];
  int held = 0;
  for (int v = pool.gpus_per_node; v >= 1 && nodes > 0; --v) {
    const int take = std::min(nodes, count[static_cast<std::size_t>(v)]);
    held += take * v;
    nodes -= take;
  }
  return held >= r.gpus;
}

// The stated objective of pool p in `state` (see the header), for a placement that used `nodes_used`
// nodes and left `left_on_used` GPUs free on them.
double objective_of(const cluster::ClusterState& state, PoolId p, int nodes_used, int left_on_used,
                    std::span<const UpcomingJob> upcoming, const MilpOptions& o) {
  const int gpus_per_node = state.spec().pools[p].gpus_per_node;
  const std::span<const int> count = state.pool_free_levels(p);
  int partial = 0, lowest = gpus_per_node, highest = 0, nodes = 0;
  double sum = 0, sum_sq = 0;  // of node utilisation (used / G)
  for (int v = 0; v <= gpus_per_node; ++v) {
    const int n = count[static_cast<std::size_t>(v)];
    if (n == 0) continue;
    if (v > 0 && v < gpus_per_node) partial += n;
    lowest = std::min(lowest, v);
    highest = std::max(highest, v);
    const double u = static_cast<double>(gpus_per_node - v) / gpus_per_node;
    nodes += n;
    sum += n * u;
    sum_sq += n * u * u;
  }
  // Load imbalance: the paper's free-GPU range for `ways`; the variance of node utilisation for `nodes`.
  const double imbalance = o.model == "ways" ? highest - lowest : sum_sq / nodes - (sum / nodes) * (sum / nodes);
  int fitting = 0;
  for (const auto& job : upcoming) fitting += fits(state, p, job.request);
  return o.alpha * partial + o.beta * imbalance + o.delta * nodes_used + o.waste * left_on_used -
         o.gamma * fitting;
}

// The objective after placing `shares` of `r` in pool p, relative to before (so that pools compare fairly).
double relative_objective(const cluster::ClusterState& state, PoolId p, std::span<const cluster::Share> shares,
                          const cluster::Request& r, std::span<const UpcomingJob> relevant, const MilpOptions& o) {
  cluster::ClusterState after = state;
  after.allocate({p, {shares.begin(), shares.end()}, r.cpus, r.memory_mib});
  int left = 0;
  for (const auto& s : shares) left += after.free(s.node);
  return objective_of(after, p, static_cast<int>(shares.size()), left, relevant, o) - objective_of(state, p, 0, 0, relevant, o);
}

// The upcoming jobs whose fit depends on where the job goes in `pool`: those eligible there that fit in
// none of their other pools now (a job that fits elsewhere fits whatever happens in `pool`).
std::vector<UpcomingJob> relevant_upcoming(const cluster::ClusterState& state, PoolId pool, std::span<const UpcomingJob> upcoming) {
  std::vector<UpcomingJob> out;
  for (const auto& job : upcoming) {
    if (std::find(job.pools.begin(), job.pools.end(), pool) == job.pools.end()) continue;
    if (!cluster::could_hold(state.spec().pools[pool], job.request)) continue;
    bool elsewhere = false;
    for (const PoolId q : job.pools) elsewhere = elsewhere || (q != pool && fits(state, q, job.request));
    if (!elsewhere) out.push_back(job);
  }
  return out;
}

// Nodes of one pool that are interchangeable for every term of the objective.
struct NodeGroup {
  cluster::NodeFree free;   // of its first node: what the model reads of any of them is the same
  std::vector<NodeId> ids;  // ascending
};

// The pool's nodes that can take part of `r`, grouped so that the model grows with the number of
// distinct node states, not with the number of nodes. Two nodes are interchangeable when they have the
// same free GPUs, can take as much of the job, and can take as much of each upcoming job now and after
// each share of this one; CPUs and memory matter only through those, so nodes that differ only in them
// still share a group when the difference changes nothing.
std::vector<NodeGroup> groups_of(const cluster::ClusterState& state, PoolId p, const cluster::Request& r,
                                 std::span<const UpcomingJob> relevant) {
  const cluster::PoolSpec& pool = state.spec().pools[p];
  // Where the pool models neither CPUs nor memory, free GPUs determine the rest of the signature.
  const bool gpus_only = pool.cpus_per_node < 0 && pool.memory_mib_per_node < 0;
  const std::size_t per_job = gpus_only ? 0 : static_cast<std::size_t>(1 + std::min(pool.gpus_per_node, r.gpus));
  const std::size_t width = 2 + relevant.size() * per_job;
  std::vector<int> signatures;  // one row of `width` per usable node, -1 padded
  std::vector<NodeId> nodes;
  for (NodeId n = pool.first_node; n < pool.first_node + pool.nodes; ++n) {
    const cluster::NodeFree f = state.node_free(n);
    const int cap = f.max_share(r);
    if (cap == 0) continue;
    nodes.push_back(n);
    const std::size_t row = signatures.size();
    signatures.resize(row + width, -1);
    signatures[row] = f.gpus;
    signatures[row + 1] = cap;
    std::size_t at = row + 2;
    for (std::size_t j = 0; per_job > 0 && j < relevant.size(); ++j, at += per_job) {
      signatures[at] = f.max_share(relevant[j].request);
      for (int k = 1; k <= cap; ++k) signatures[at + static_cast<std::size_t>(k)] = f.after(r, k).max_share(relevant[j].request);
    }
  }
  const auto signature = [&](std::size_t i) { return std::span(signatures).subspan(i * width, width); };
  std::vector<std::size_t> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto x = signature(a), y = signature(b);
    return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end());
  });
  std::vector<NodeGroup> groups;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || !std::ranges::equal(signature(order[i]), signature(order[i - 1])))
      groups.push_back({state.node_free(nodes[order[i]]), {}});
    groups.back().ids.push_back(nodes[order[i]]);
  }
  return groups;
}

struct PoolChoice {
  bool ok = false;        // a placement was found
  bool fell_back = false; // the solver failed or ran out of time
  bool timed_out = false; // it ran out of time: the wall clock decided
  double score = 0;       // objective relative to the pool's state before placement
  cluster::Placement placement;
};

class MilpPlacement final : public PlacementPolicy {
 public:
  explicit MilpPlacement(const MilpOptions& options)
      : options_(options), greedy_(make_greedy_placement()), defrag_(make_defrag_placement()) {}

  int lookahead() const override { return options_.lookahead; }
  // Exactly when greedy places: no model is solved for a yes/no question.
  PlaceStatus feasibility(const cluster::ClusterState& state, const cluster::Request& r, std::span<const PoolId> pools) const override {
    return greedy_->feasibility(state, r, pools);
  }
  const PlacementStats* stats() const override { return &stats_; }

  PlaceResult place(const cluster::ClusterState& state, const cluster::Request& r, std::span<const PoolId> pools,
                    std::span<const UpcomingJob> upcoming) const override {
    // Whether the job starts is the reference's decision; the MILP only chooses where.
    PlaceResult result = greedy_->place(state, r, pools);
    if (result.status != PlaceStatus::placed) return result;
    const auto began = std::chrono::steady_clock::now();
    PoolChoice best;
    bool fell_back = false, timed_out = false;
    for (const PoolId p : pools) {
      if (!fits(state, p, r)) continue;
      const auto relevant = relevant_upcoming(state, p, upcoming);
      PoolChoice c = options_.model == "ways" ? best_way(state, p, r, relevant) : solve_nodes(state, p, r, relevant);
      fell_back = fell_back || c.fell_back;
      timed_out = timed_out || c.timed_out;
      if (c.ok && (!best.ok || c.score < best.score - 1e-9)) best = std::move(c);
    }
    ++stats_.solves;
    stats_.solve_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - began).count());
    if (fell_back) ++stats_.fallbacks;
    if (timed_out) ++stats_.time_limit_hits;
    if (!best.ok) return defrag_->place(state, r, pools);
    result.placement = std::move(best.placement);
    return result;
  }

 private:
  // The paper's candidate ways of this pool, scored exactly.
  PoolChoice best_way(const cluster::ClusterState& state, PoolId p, const cluster::Request& r,
                      std::span<const UpcomingJob> relevant) const {
    Candidates c;
    collect_candidates(snapshot(state, p, r), r.gpus, /*relax=*/true, c);
    std::vector<cluster::Placement> ways;
    const auto add_first = [&](std::vector<Candidate> tier, void (*sort)(std::vector<Candidate>&)) {
      if (tier.empty()) return;
      sort(tier);
      for (const auto& w : ways)
        if (w.shares == tier.front().placement.shares) return;
      ways.push_back(tier.front().placement);
    };
    add_first(c.tier1, sort_defrag);
    add_first(c.tier1, sort_balance);
    add_first(c.tier2, sort_defrag);
    add_first(c.tier2, sort_balance);
    PoolChoice best;
    for (const auto& way : ways) {
      const double score = relative_objective(state, p, way.shares, r, relevant, options_);
      if (!best.ok || score < best.score - 1e-9) {
        best.ok = true;
        best.score = score;
        best.placement = way;
        best.placement.pool = p;
      }
    }
    return best;
  }

  PoolChoice solve_nodes(const cluster::ClusterState& state, PoolId p, const cluster::Request& r,
                         std::span<const UpcomingJob> relevant) const {
    const cluster::PoolSpec& pool = state.spec().pools[p];
    const int G = pool.gpus_per_node;
    const std::span<const int> count = state.pool_free_levels(p);
    const std::vector<NodeGroup> groups = groups_of(state, p, r, relevant);
    const MilpOptions& o = options_;
    milp::Model m;
    // x[s][k]: nodes of group s given k GPUs, k up to what one of them can take.
    struct Choice {
      int var;
      std::size_t group;
      int k;
    };
    std::vector<Choice> x;
    milp::Constraint demand{"demand", {}, static_cast<double>(r.gpus), static_cast<double>(r.gpus)};
    milp::Constraint used{"nodes", {}, 0, 0};
    int usable = 0;
    for (std::size_t s = 0; s < groups.size(); ++s) {
      const int n = static_cast<int>(groups[s].ids.size()), l = groups[s].free.gpus;
      usable += n;
      milp::Constraint group{fmt::format("group{}", s), {}, -milp::kInfinity, static_cast<double>(n)};
      for (int k = 1; k <= groups[s].free.max_share(r); ++k) {
        const int v = m.add_variable({"", milp::VarKind::integer, 0, static_cast<double>(n), o.delta + o.waste * (l - k)});
        x.push_back({v, s, k});
        group.terms.push_back({v, 1});
        demand.terms.push_back({v, static_cast<double>(k)});
        used.terms.push_back({v, 1});
      }
      m.add_constraint(std::move(group));
    }
    const int fewest = cluster::fewest_nodes(pool, r);
    used.lower = fewest;
    used.upper = std::min(fewest + o.extra_nodes, usable);
    m.add_constraint(std::move(demand));
    m.add_constraint(std::move(used));
    // Partial nodes: a node going from l to l - k free GPUs changes the count of partial nodes by
    // [0 < l-k < G] - [0 < l < G] (the constant part is the count before).
    const auto partial = [G](int v) { return v > 0 && v < G ? 1.0 : 0.0; };
    for (int v = 1; v < G; ++v) m.objective_constant += o.alpha * count[static_cast<std::size_t>(v)];
    for (const Choice& c : x) {
      const int l = groups[c.group].free.gpus;
      m.variables[static_cast<std::size_t>(c.var)].objective += o.alpha * (partial(l - c.k) - partial(l));
    }
    // Load imbalance = variance of node utilisation u = (G - free) / G over the pool's N nodes:
    // sum(u^2) / N - mean^2. The mean after placement is fixed, and a node going from l to l - k free
    // GPUs changes sum(u^2) by ((G-l+k)^2 - (G-l)^2) / G^2: linear in x, no extra variables.
    if (o.beta != 0) {
      const double g2 = static_cast<double>(G) * G, n = pool.nodes;
      double sum = 0, sum_sq = 0;
      for (int v = 0; v <= G; ++v) {
        const double u = static_cast<double>(G - v) / G;
        sum += count[static_cast<std::size_t>(v)] * u;
        sum_sq += count[static_cast<std::size_t>(v)] * u * u;
      }
      const double mean_after = (sum + static_cast<double>(r.gpus) / G) / n;
      m.objective_constant += o.beta * (sum_sq / n - mean_after * mean_after);
      for (const Choice& c : x) {
        const double before = G - groups[c.group].free.gpus, after = before + c.k;
        m.variables[static_cast<std::size_t>(c.var)].objective += o.beta * (after * after - before * before) / g2 / n;
      }
    }
    // Upcoming job j (r_j GPUs, fewest m_j nodes) fits iff sum_t min(C[t], m_j) >= r_j, where C[t] =
    // nodes that can take at least t of its GPUs after placement: the count before, plus, for each x,
    // [a node of that group given k can still take t] - [it could before].
    for (const auto& job : relevant) {
      const int need = cluster::fewest_nodes(pool, job.request);
      if (need > pool.nodes) continue;
      const int top = std::min(G, job.request.gpus);
      std::vector<int> before_at_least(static_cast<std::size_t>(top) + 1, 0);  // C[t] before placement
      for (NodeId n = pool.first_node; n < pool.first_node + pool.nodes; ++n)
        for (int t = 1; t <= std::min(top, state.max_share(n, job.request)); ++t) ++before_at_least[static_cast<std::size_t>(t)];
      const int y = m.add_variable({"", milp::VarKind::binary, 0, 1, -o.gamma});
      milp::Constraint total{"", {{y, -static_cast<double>(job.request.gpus)}}, 0, milp::kInfinity};
      for (int t = 1; t <= top; ++t) {
        const int z = m.add_variable({"", milp::VarKind::integer, 0, static_cast<double>(need), 0});
        milp::Constraint cap{"", {{z, 1}}, -milp::kInfinity, static_cast<double>(before_at_least[static_cast<std::size_t>(t)])};
        for (const Choice& c : x) {
          const cluster::NodeFree& f = groups[c.group].free;
          const int change = (f.after(r, c.k).max_share(job.request) >= t) - (f.max_share(job.request) >= t);
          if (change != 0) cap.terms.push_back({c.var, -static_cast<double>(change)});  // z - change x <= C[t] before
        }
        m.add_constraint(std::move(cap));
        total.terms.push_back({z, 1});
      }
      m.add_constraint(std::move(total));
    }
    milp::SolveOptions so;
    so.time_limit_ms = o.time_limit_ms;
    so.node_limit = o.node_limit;
    const milp::Solution s = milp::solve(m, so);
    PoolChoice choice;
    choice.fell_back = s.status != milp::Status::optimal;
    choice.timed_out = s.status == milp::Status::time_limit;
    if (!s.has_solution) return choice;
    // The group solution on concrete nodes: in each group, larger shares first, on the lowest ids.
    choice.placement.pool = p;
    std::vector<std::size_t> next(groups.size(), 0);
    for (auto c = x.rbegin(); c != x.rend(); ++c)  // k descending within each group
      for (long n = std::lround(s.values[static_cast<std::size_t>(c->var)]); n > 0; --n)
        choice.placement.shares.push_back({groups[c->group].ids[next[c->group]++], c->k});
    std::sort(choice.placement.shares.begin(), choice.placement.shares.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
    RLTUNE_CHECK(choice.placement.gpus() == r.gpus, fmt::format("the MILP placed {} of {} GPUs", choice.placement.gpus(), r.gpus));
    choice.ok = true;
    // Score from the concrete result (the same objective), so pools compare exactly.
    choice.score = relative_objective(state, p, choice.placement.shares, r, relevant, o);
    return choice;
  }

  MilpOptions options_;
  std::unique_ptr<PlacementPolicy> greedy_, defrag_;
  mutable PlacementStats stats_;  // counters, not decision state
};

}  // namespace

MilpOptions MilpOptions::for_model(const std::string& model) {
  MilpOptions o;
  o.model = model;
  if (model != "nodes" && model != "ways") throw InputError("unknown MILP model '" + model + "' (known: nodes, ways)");
  if (model == "ways") {
    o.alpha = 1.0;
    o.beta = 0.3;
    o.gamma = 0.5;
    o.delta = 0;
    o.waste = 0;
  }
  return o;
}

namespace {

const MilpSetting kSettings[] = {
    {"--milp-alpha", "alpha", "weight of partially used nodes (default: nodes 0, ways 1)", 0, 1e6, &MilpOptions::alpha},
    {"--milp-beta", "beta",
     "weight of load imbalance: variance of node utilisation (nodes; default 0) or free-GPU range (ways; 0.3)", 0, 1e6,
     &MilpOptions::beta},
    {"--milp-gamma", "gamma", "reward per upcoming job that still fits (default 0.5)", 0, 1e6, &MilpOptions::gamma},
    {"--milp-delta", "delta", "weight per node used (default: nodes 0.05, ways 0)", 0, 1e6, &MilpOptions::delta},
    {"--milp-waste", "waste", "weight per GPU left free on the nodes used (default: nodes 0.1, ways 0)", 0, 1e6,
     &MilpOptions::waste},
    {"--milp-lookahead", "lookahead", "upcoming jobs considered (K)", 0, 1000, &MilpOptions::lookahead},
    {"--milp-extra-nodes", "extra_nodes", "nodes model: nodes allowed beyond ceil(R/G)", 0, 64, &MilpOptions::extra_nodes},
    {"--milp-node-limit", "node_limit", "branch-and-bound nodes per solve (then best solution or defrag; deterministic)", 1,
     1e9, &MilpOptions::node_limit},
    {"--milp-time-limit-ms", "time_limit_ms", "time limit per solve (then best solution or defrag)", 0.001, 3.6e6,
     &MilpOptions::time_limit_ms},
};

}  // namespace

std::span<const MilpSetting> milp_settings() { return kSettings; }

void validate(const MilpOptions& o) {
  if (o.model != "nodes" && o.model != "ways") throw InputError("milp.model: unknown model '" + o.model + "' (known: nodes, ways)");
  check_bounds(o, milp_settings(), "milp");
}

std::unique_ptr<PlacementPolicy> make_milp_placement(const MilpOptions& options) {
  validate(options);
  return std::make_unique<MilpPlacement>(options);
}

double milp_objective(const cluster::ClusterState& after, PoolId pool, int nodes_used, int left_on_used,
                      std::span<const UpcomingJob> upcoming, const MilpOptions& options) {
  return objective_of(after, pool, nodes_used, left_on_used, upcoming, options);
}

}  // namespace rltune::policy
