#include "policy/placement/milp_placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/error.h"
#include "milp/model.h"
#include "policy/placement/enumerate.h"

namespace rltune::policy {

namespace {

// Nodes of a pool by free GPUs: count[v] = nodes with v free, v = 0..G.
std::vector<int> levels(std::span<const int> free, int gpus_per_node) {
  std::vector<int> count(static_cast<std::size_t>(gpus_per_node) + 1, 0);
  for (const int f : free) ++count[static_cast<std::size_t>(f)];
  return count;
}

// True when the m = ceil(r/G) nodes with the most free GPUs can hold r GPUs.
bool fits(const std::vector<int>& count, int gpus_per_node, int gpus) {
  int nodes = min_nodes(gpus, gpus_per_node), held = 0;
  for (int v = gpus_per_node; v >= 1 && nodes > 0; --v) {
    const int take = std::min(nodes, count[static_cast<std::size_t>(v)]);
    held += take * v;
    nodes -= take;
  }
  return held >= gpus;
}

double objective_of(const std::vector<int>& count, int gpus_per_node, int nodes_used, int left_on_used,
                    std::span<const UpcomingJob> upcoming, const MilpOptions& o) {
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
  for (const auto& job : upcoming) fitting += fits(count, gpus_per_node, job.gpus);
  return o.alpha * partial + o.beta * imbalance + o.delta * nodes_used + o.waste * left_on_used -
         o.gamma * fitting;
}

// The upcoming jobs whose fit depends on where the job goes in `pool`: those eligible there that fit in
// none of their other pools now (a job that fits elsewhere fits whatever happens in `pool`).
std::vector<UpcomingJob> relevant_upcoming(const cluster::ClusterState& state, PoolId pool, std::span<const UpcomingJob> upcoming) {
  std::vector<UpcomingJob> out;
  for (const auto& job : upcoming) {
    if (std::find(job.pools.begin(), job.pools.end(), pool) == job.pools.end()) continue;
    if (job.gpus > state.spec().pools[pool].total_gpus() || job.gpus <= 0) continue;
    bool elsewhere = false;
    for (const PoolId q : job.pools) {
      if (q == pool) continue;
      const int gpn = state.spec().pools[q].gpus_per_node;
      elsewhere = elsewhere || fits(levels(state.pool_free(q), gpn), gpn, job.gpus);
    }
    if (!elsewhere) out.push_back(job);
  }
  return out;
}

// Concrete placement from the group solution: for each free level, the nodes given k GPUs are the
// lowest-id nodes of that level (larger shares first).
cluster::Placement to_placement(const cluster::ClusterState& state, PoolId pool,
                                const std::vector<std::vector<int>>& taken) {
  const auto free = state.pool_free(pool);
  const cluster::PoolSpec& spec = state.spec().pools[pool];
  cluster::Placement placement;
  placement.pool = pool;
  std::vector<std::vector<NodeId>> by_level(taken.size());
  for (std::size_t i = 0; i < free.size(); ++i) by_level[static_cast<std::size_t>(free[i])].push_back(spec.first_node + static_cast<NodeId>(i));
  for (std::size_t l = 1; l < taken.size(); ++l) {
    std::size_t next = 0;
    for (int k = static_cast<int>(taken[l].size()) - 1; k >= 1; --k)
      for (int n = 0; n < taken[l][static_cast<std::size_t>(k)]; ++n) placement.shares.push_back({by_level[l][next++], k});
  }
  std::sort(placement.shares.begin(), placement.shares.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  return placement;
}

struct PoolChoice {
  bool ok = false;        // a placement was found
  bool fell_back = false; // the solver failed or ran out of time
  double score = 0;       // objective relative to the pool's state before placement
  cluster::Placement placement;
};

class MilpPlacement final : public PlacementPolicy {
 public:
  explicit MilpPlacement(const MilpOptions& options)
      : options_(options), greedy_(make_greedy_placement()), defrag_(make_defrag_placement()) {}

  int lookahead() const override { return options_.lookahead; }
  // Exactly when greedy places: no model is solved for a yes/no question.
  PlaceStatus feasibility(const cluster::ClusterState& state, int gpus, std::span<const PoolId> pools) const override {
    return greedy_->place(state, gpus, pools).status;
  }
  const PlacementStats* stats() const override { return &stats_; }

  PlaceResult place(const cluster::ClusterState& state, int gpus, std::span<const PoolId> pools,
                    std::span<const UpcomingJob> upcoming) const override {
    // Whether the job starts is the reference's decision; the MILP only chooses where.
    PlaceResult result = greedy_->place(state, gpus, pools);
    if (result.status != PlaceStatus::placed) return result;
    const auto began = std::chrono::steady_clock::now();
    PoolChoice best;
    bool fell_back = false;
    for (const PoolId p : pools) {
      if (!fits(levels(state.pool_free(p), state.spec().pools[p].gpus_per_node), state.spec().pools[p].gpus_per_node, gpus))
        continue;
      const auto relevant = relevant_upcoming(state, p, upcoming);
      PoolChoice c = options_.model == "ways" ? best_way(state, p, gpus, relevant) : solve_nodes(state, p, gpus, relevant);
      fell_back = fell_back || c.fell_back;
      if (c.ok && (!best.ok || c.score < best.score - 1e-9)) best = std::move(c);
    }
    ++stats_.solves;
    stats_.solve_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - began).count());
    if (fell_back) ++stats_.fallbacks;
    if (!best.ok) return defrag_->place(state, gpus, pools);
    result.placement = std::move(best.placement);
    return result;
  }

 private:
  double before(const cluster::ClusterState& state, PoolId p, std::span<const UpcomingJob> relevant) const {
    const int gpn = state.spec().pools[p].gpus_per_node;
    return objective_of(levels(state.pool_free(p), gpn), gpn, 0, 0, relevant, options_);
  }

  // The paper's candidate ways of this pool, scored exactly.
  PoolChoice best_way(const cluster::ClusterState& state, PoolId p, int gpus, std::span<const UpcomingJob> relevant) const {
    Candidates c;
    collect_candidates(snapshot(state, p), gpus, /*relax=*/true, c);
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
    const int gpn = state.spec().pools[p].gpus_per_node;
    const double base = before(state, p, relevant);
    for (const auto& way : ways) {
      std::vector<int> free(state.pool_free(p).begin(), state.pool_free(p).end());
      int left = 0;
      for (const auto& s : way.shares) {
        int& f = free[static_cast<std::size_t>(s.node - state.spec().pools[p].first_node)];
        f -= s.gpus;
        left += f;
      }
      const double score =
          objective_of(levels(free, gpn), gpn, static_cast<int>(way.shares.size()), left, relevant, options_) - base;
      if (!best.ok || score < best.score - 1e-9) {
        best.ok = true;
        best.score = score;
        best.placement = way;
        best.placement.pool = p;
      }
    }
    return best;
  }

  PoolChoice solve_nodes(const cluster::ClusterState& state, PoolId p, int gpus, std::span<const UpcomingJob> relevant) const {
    const int G = state.spec().pools[p].gpus_per_node;
    const std::vector<int> count = levels(state.pool_free(p), G);
    const int pool_nodes = state.spec().pools[p].nodes;
    const MilpOptions& o = options_;
    milp::Model m;
    // x[l][k]: nodes with l free GPUs given k GPUs.
    std::vector<std::vector<int>> x(static_cast<std::size_t>(G) + 1);
    milp::Constraint demand{"demand", {}, static_cast<double>(gpus), static_cast<double>(gpus)};
    milp::Constraint used{"nodes", {}, 0, 0};
    int usable = 0;
    for (int l = 1; l <= G; ++l) {
      const int n = count[static_cast<std::size_t>(l)];
      x[static_cast<std::size_t>(l)].assign(static_cast<std::size_t>(std::min(l, gpus)) + 1, -1);
      if (n == 0) continue;
      usable += n;
      milp::Constraint level{fmt::format("level{}", l), {}, -milp::kInfinity, static_cast<double>(n)};
      for (int k = 1; k <= std::min(l, gpus); ++k) {
        const int v = m.add_variable({"", milp::VarKind::integer, 0, static_cast<double>(n), o.delta + o.waste * (l - k)});
        x[static_cast<std::size_t>(l)][static_cast<std::size_t>(k)] = v;
        level.terms.push_back({v, 1});
        demand.terms.push_back({v, static_cast<double>(k)});
        used.terms.push_back({v, 1});
      }
      m.add_constraint(std::move(level));
    }
    const int fewest = min_nodes(gpus, G);
    used.lower = fewest;
    used.upper = std::min(fewest + o.extra_nodes, usable);
    m.add_constraint(std::move(demand));
    m.add_constraint(std::move(used));
    // c[v] after placement = count[v] + sum of terms: nodes leaving level v, nodes arriving at it.
    std::vector<std::vector<milp::Term>> arrive(static_cast<std::size_t>(G) + 1);
    for (int l = 1; l <= G; ++l)
      for (int k = 1; k < static_cast<int>(x[static_cast<std::size_t>(l)].size()); ++k) {
        const int v = x[static_cast<std::size_t>(l)][static_cast<std::size_t>(k)];
        if (v < 0) continue;
        arrive[static_cast<std::size_t>(l)].push_back({v, -1});
        arrive[static_cast<std::size_t>(l - k)].push_back({v, 1});
      }
    // Partial nodes: alpha * sum of c[v] for 0 < v < G (constant part in the objective constant).
    for (int v = 1; v < G; ++v) {
      m.objective_constant += o.alpha * count[static_cast<std::size_t>(v)];
      for (const auto& t : arrive[static_cast<std::size_t>(v)]) m.variables[static_cast<std::size_t>(t.var)].objective += o.alpha * t.coef;
    }
    // Load imbalance = variance of node utilisation u = (G - free) / G over the pool's N nodes:
    // sum(u^2) / N - mean^2. The mean after placement is fixed, and a node going from l to l - k free
    // GPUs changes sum(u^2) by ((G-l+k)^2 - (G-l)^2) / G^2: linear in x, no extra variables.
    if (o.beta != 0) {
      const double g2 = static_cast<double>(G) * G, n = pool_nodes;
      double sum = 0, sum_sq = 0;
      for (int v = 0; v <= G; ++v) {
        const double u = static_cast<double>(G - v) / G;
        sum += count[static_cast<std::size_t>(v)] * u;
        sum_sq += count[static_cast<std::size_t>(v)] * u * u;
      }
      const double mean_after = (sum + static_cast<double>(gpus) / G) / n;
      m.objective_constant += o.beta * (sum_sq / n - mean_after * mean_after);
      for (int l = 1; l <= G; ++l)
        for (int k = 1; k < static_cast<int>(x[static_cast<std::size_t>(l)].size()); ++k) {
          const int v = x[static_cast<std::size_t>(l)][static_cast<std::size_t>(k)];
          if (v < 0) continue;
          const double before = G - l, after = G - l + k;
          m.variables[static_cast<std::size_t>(v)].objective += o.beta * (after * after - before * before) / g2 / n;
        }
    }
    // Upcoming job j fits iff sum_t min(C[t], m_j) >= r_j, with C[t] = nodes with >= t free after.
    for (const auto& job : relevant) {
      const int need = min_nodes(job.gpus, G);
      if (need > pool_nodes) continue;
      const int y = m.add_variable({"", milp::VarKind::binary, 0, 1, -o.gamma});
      milp::Constraint total{"", {{y, -static_cast<double>(job.gpus)}}, 0, milp::kInfinity};
      for (int t = 1; t <= G; ++t) {
        const int z = m.add_variable({"", milp::VarKind::integer, 0, static_cast<double>(need), 0});
        double at_least = 0;
        milp::Constraint cap{"", {{z, 1}}, -milp::kInfinity, 0};  // z - sum_{v>=t} (c[v] - count[v]) <= sum count[v]
        for (int v = t; v <= G; ++v) {
          at_least += count[static_cast<std::size_t>(v)];
          for (const auto& term : arrive[static_cast<std::size_t>(v)]) cap.terms.push_back({term.var, -term.coef});
        }
        cap.upper = at_least;
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
    if (!s.has_solution) return choice;
    std::vector<std::vector<int>> taken(x.size());
    for (std::size_t l = 0; l < x.size(); ++l) {
      taken[l].assign(x[l].size(), 0);
      for (std::size_t k = 1; k < x[l].size(); ++k)
        if (x[l][k] >= 0) taken[l][k] = static_cast<int>(std::llround(s.values[static_cast<std::size_t>(x[l][k])]));
    }
    choice.placement = to_placement(state, p, taken);
    // Score from the concrete result (the same objective), so pools compare exactly.
    std::vector<int> free(state.pool_free(p).begin(), state.pool_free(p).end());
    int given = 0, left = 0;
    for (const auto& sh : choice.placement.shares) {
      int& f = free[static_cast<std::size_t>(sh.node - state.spec().pools[p].first_node)];
      f -= sh.gpus;
      left += f;
      given += sh.gpus;
    }
    RLTUNE_CHECK(given == gpus, fmt::format("the MILP placed {} of {} GPUs", given, gpus));
    choice.ok = true;
    choice.score = objective_of(levels(free, G), G, static_cast<int>(choice.placement.shares.size()), left, relevant, o) -
                   before(state, p, relevant);
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
  if (model == "ways") {
    o.alpha = 1.0;
    o.beta = 0.3;
    o.gamma = 0.5;
    o.delta = 0;
    o.waste = 0;
  }
  return o;
}

void validate(const MilpOptions& o) {
  if (o.model != "nodes" && o.model != "ways") throw InputError("--milp-model: unknown model '" + o.model + "' (known: nodes, ways)");
  for (const auto& [name, v] : {std::pair{"alpha", o.alpha}, std::pair{"beta", o.beta}, std::pair{"gamma", o.gamma},
                                std::pair{"delta", o.delta}, std::pair{"waste", o.waste}})
    if (!std::isfinite(v) || v < 0 || v > 1e6) throw InputError(fmt::format("--milp-{}: must be between 0 and 1e6", name));
  if (o.lookahead < 0 || o.lookahead > 1000) throw InputError("--milp-lookahead: must be between 0 and 1000");
  if (o.extra_nodes < 0 || o.extra_nodes > 64) throw InputError("--milp-extra-nodes: must be between 0 and 64");
  if (!(o.time_limit_ms > 0) || o.time_limit_ms > 3.6e6) throw InputError("--milp-time-limit-ms: must be positive");
  if (o.node_limit < 1) throw InputError("--milp-node-limit: must be at least 1");
}

std::unique_ptr<PlacementPolicy> make_milp_placement(const MilpOptions& options) {
  validate(options);
  return std::make_unique<MilpPlacement>(options);
}

double milp_objective(std::span<const int> free_after, int gpus_per_node, int nodes_used, int left_on_used,
                      std::span<const UpcomingJob> upcoming, const MilpOptions& options) {
  return objective_of(levels(free_after, gpus_per_node), gpus_per_node, nodes_used, left_on_used, upcoming, options);
}

}  // namespace rltune::policy
