// MILP placement: both models reach the exact optimum of their stated objective, checked against a
// brute-force search over every placement on random small clusters (multi-pool jobs included); the
// decision rule is unchanged (placed exactly when greedy places); the objective's terms on hand cases.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "cluster/cluster_state.h"
#include "core/error.h"
#include "core/rng.h"
#include "helpers.h"
#include "metrics/metrics.h"
#include "policy/placement/enumerate.h"
#include "policy/placement/milp_placement.h"
#include "policy/registry.h"
#include "sim/engine.h"
#include "workload/generator.h"

namespace rltune::policy {
namespace {

using Nodes = std::vector<cluster::NodeFree>;

// Independent of the implementation: CPUs and memory go with GPUs, ceil(total x k / R) for k of R GPUs.
long long part(long long total, int k, int gpus) { return total <= 0 ? 0 : (total * k + gpus - 1) / gpus; }

// The most GPUs of r a node with free resources f can take, by direct search (negative = not modelled).
int can_take(const cluster::NodeFree& f, const cluster::Request& r) {
  int g = std::min(f.gpus, r.gpus);
  while (g > 0 && ((f.cpus >= 0 && part(r.cpus, g, r.gpus) > f.cpus) || (f.memory_mib >= 0 && part(r.memory_mib, g, r.gpus) > f.memory_mib)))
    --g;
  return g;
}

cluster::NodeFree take(cluster::NodeFree f, const cluster::Request& r, int k) {
  f.gpus -= k;
  if (f.cpus >= 0) f.cpus -= static_cast<int>(part(r.cpus, k, r.gpus));
  if (f.memory_mib >= 0) f.memory_mib -= part(r.memory_mib, k, r.gpus);
  return f;
}

// Fewest nodes of an empty pool node shape that can hold r (a huge number when none can).
int fewest(const cluster::PoolSpec& pool, const cluster::Request& r) {
  const int most = can_take({pool.gpus_per_node, pool.cpus_per_node, pool.memory_mib_per_node}, r);
  return most == 0 ? 1 << 20 : (r.gpus + most - 1) / most;
}

// Can r go on its fewest nodes now: do the nodes that can take most of it hold all its GPUs?
bool fits_brute(const Nodes& nodes, const cluster::PoolSpec& pool, const cluster::Request& r) {
  const std::size_t m = static_cast<std::size_t>(fewest(pool, r));
  if (m > nodes.size()) return false;
  std::vector<int> caps;
  for (const auto& f : nodes) caps.push_back(can_take(f, r));
  std::sort(caps.rbegin(), caps.rend());
  int sum = 0;
  for (std::size_t i = 0; i < m; ++i) sum += caps[i];
  return sum >= r.gpus;
}

struct Case {
  cluster::ClusterSpec spec;
  std::unique_ptr<cluster::ClusterState> state;
  cluster::Request request;
  std::vector<PoolId> pools;                 // eligible pools of the job
  std::vector<std::vector<PoolId>> upcoming_pools;
  std::vector<UpcomingJob> upcoming;
  MilpOptions options;
};

Nodes pool_nodes(const cluster::ClusterState& s, PoolId p) {
  Nodes out;
  const auto& pool = s.spec().pools[p];
  for (NodeId n = pool.first_node; n < pool.first_node + pool.nodes; ++n) out.push_back(s.node_free(n));
  return out;
}

// The stated objective of placing `shares` in pool p, relative to before, over the whole cluster.
double score(const Case& c, PoolId p, const std::vector<cluster::Share>& shares) {
  const auto& o = c.options;
  const int gpn = c.spec.pools[p].gpus_per_node;
  const auto terms = [&](const Nodes& nodes) {
    std::vector<int> free;
    for (const auto& f : nodes) free.push_back(f.gpus);
    int partial = 0;
    for (const int f : free) partial += f > 0 && f < gpn;
    const auto [lo, hi] = std::minmax_element(free.begin(), free.end());
    double mean = 0, var = 0;  // of utilisation (G - free) / G
    for (const int f : free) mean += static_cast<double>(gpn - f) / gpn / free.size();
    for (const int f : free) var += std::pow(static_cast<double>(gpn - f) / gpn - mean, 2) / free.size();
    return o.alpha * partial + o.beta * (o.model == "ways" ? *hi - *lo : var);
  };
  std::vector<Nodes> before, after;
  for (PoolId q = 0; q < static_cast<PoolId>(c.spec.pools.size()); ++q) before.push_back(pool_nodes(*c.state, q));
  after = before;
  for (const auto& s : shares) {
    auto& f = after[p][s.node - c.spec.pools[p].first_node];
    f = take(f, c.request, s.gpus);
  }
  const auto fitting = [&](const std::vector<Nodes>& nodes) {
    int n = 0;
    for (const auto& job : c.upcoming) {
      bool any = false;
      for (const PoolId q : job.pools) any = any || fits_brute(nodes[q], c.spec.pools[q], job.request);
      n += any;
    }
    return n;
  };
  int left = 0;
  for (const auto& s : shares) left += after[p][s.node - c.spec.pools[p].first_node].gpus;
  return terms(after[p]) - terms(before[p]) + o.delta * static_cast<double>(shares.size()) + o.waste * left -
         o.gamma * (fitting(after) - fitting(before));
}

// Best score over every placement the `nodes` model allows: every pool, every split of the request over
// its fewest .. fewest + extra nodes (each node taking no more than its GPUs, CPUs and memory allow),
// given that greedy can place it in that pool.
double brute_force_nodes(const Case& c) {
  double best = std::numeric_limits<double>::infinity();
  for (const PoolId p : c.pools) {
    const Nodes nodes = pool_nodes(*c.state, p);
    if (!fits_brute(nodes, c.spec.pools[p], c.request)) continue;
    const int least = fewest(c.spec.pools[p], c.request);
    std::vector<cluster::Share> shares;
    std::function<void(std::size_t, int)> walk = [&](std::size_t i, int left) {
      if (left == 0) {
        const int used = static_cast<int>(shares.size());
        if (used >= least && used <= least + c.options.extra_nodes) best = std::min(best, score(c, p, shares));
        return;
      }
      if (i == nodes.size()) return;
      walk(i + 1, left);
      for (int k = 1; k <= std::min(can_take(nodes[i], c.request), left); ++k) {
        shares.push_back({c.spec.pools[p].first_node + static_cast<NodeId>(i), k});
        walk(i + 1, left - k);
        shares.pop_back();
      }
    };
    walk(0, c.request.gpus);
  }
  return best;
}

// The paper's ways (first tier-1/tier-2 entries in defrag and balance order), each scored; the best.
double brute_force_ways(const Case& c) {
  double best = std::numeric_limits<double>::infinity();
  for (const PoolId p : c.pools) {
    if (!fits_brute(pool_nodes(*c.state, p), c.spec.pools[p], c.request)) continue;
    Candidates cand;
    collect_candidates(snapshot(*c.state, p, c.request), c.request.gpus, true, cand);
    for (auto* tier : {&cand.tier1, &cand.tier2})
      for (auto sort : {sort_defrag, sort_balance}) {
        if (tier->empty()) continue;
        auto copy = *tier;
        sort(copy);
        best = std::min(best, score(c, p, copy.front().placement.shares));
      }
  }
  return best;
}

// Random small clusters; pools model CPUs and memory half the time each, busy nodes hold some of them,
// and requests ask for CPUs and memory half the time, so that both bind in many cases.
cluster::Request random_request(Rng& rng, int gpus) {
  const int cpus = rng.uniform() < 0.7 ? static_cast<int>(rng.uniform_int(1, 8 * gpus)) : 0;
  const long long memory = rng.uniform() < 0.7 ? rng.uniform_int(1, 64 * gpus) : 0;
  return {gpus, cpus, memory};
}

Case random_case(Rng& rng) {
  Case c;
  const int pool_count = static_cast<int>(rng.uniform_int(1, 2));
  std::string yaml = "name: r\npools:\n";
  for (int p = 0; p < pool_count; ++p) {
    const int gpn = std::array{1, 2, 4, 8}[static_cast<std::size_t>(rng.uniform_int(0, 3))];
    std::string extra;
    if (rng.uniform() < 0.6) extra += fmt::format(", cpus_per_node: {}", rng.uniform_int(2, 4 * gpn));
    if (rng.uniform() < 0.6) extra += fmt::format(", memory_mib_per_node: {}", rng.uniform_int(8, 32 * gpn));
    yaml += fmt::format("  - {{name: p{}, nodes: {}, gpus_per_node: {}{}}}\n", p, rng.uniform_int(1, 5), gpn, extra);
  }
  c.spec = testing::cluster_from(yaml);
  c.state = std::make_unique<cluster::ClusterState>(c.spec);
  for (const auto& pool : c.spec.pools)
    for (int n = 0; n < pool.nodes; ++n) {
      const int used = static_cast<int>(rng.uniform_int(0, pool.gpus_per_node));
      if (used == 0) continue;
      const int cpus = pool.cpus_per_node > 0 ? static_cast<int>(rng.uniform_int(0, pool.cpus_per_node)) : 0;
      const long long memory = pool.memory_mib_per_node > 0 ? rng.uniform_int(0, pool.memory_mib_per_node) : 0;
      c.state->allocate({static_cast<PoolId>(&pool - c.spec.pools.data()), {{pool.first_node + n, used}}, cpus, memory});
    }
  for (PoolId p = 0; p < pool_count; ++p)
    if (pool_count == 1 || rng.uniform() < 0.8) c.pools.push_back(p);
  if (c.pools.empty()) c.pools.push_back(0);
  int largest = 0;
  for (const PoolId p : c.pools) largest = std::max(largest, c.state->pool_free_total(p));
  c.request = random_request(rng, static_cast<int>(rng.uniform_int(1, std::max(1, largest))));
  const int k = static_cast<int>(rng.uniform_int(0, 3));
  for (int j = 0; j < k; ++j) {
    std::vector<PoolId> pools;
    for (PoolId p = 0; p < pool_count; ++p)
      if (rng.uniform() < 0.7) pools.push_back(p);
    if (pools.empty()) pools.push_back(static_cast<PoolId>(rng.uniform_int(0, pool_count - 1)));
    c.upcoming_pools.push_back(pools);
  }
  for (const auto& pools : c.upcoming_pools) c.upcoming.push_back({random_request(rng, static_cast<int>(rng.uniform_int(1, 10))), pools});
  if (rng.uniform() < 0.5) {  // random weights half the time, the defaults otherwise
    c.options.alpha = rng.uniform() * 2;
    c.options.beta = rng.uniform();
    c.options.gamma = rng.uniform() * 2;
    c.options.delta = rng.uniform() * 0.5;
    c.options.waste = rng.uniform() * 0.2;
    c.options.extra_nodes = static_cast<int>(rng.uniform_int(0, 2));
  }
  c.options.time_limit_ms = 10'000;  // the property is about optimality, not speed
  return c;
}

void check_against_brute_force(const std::string& model, std::uint64_t seed) {
  Rng rng(seed);
  int placed = 0, bound = 0;
  for (int i = 0; i < 600; ++i) {
    Case c = random_case(rng);
    // Upcoming spans point into c.upcoming_pools; rebuild after the move into c.
    for (std::size_t j = 0; j < c.upcoming.size(); ++j) c.upcoming[j].pools = c.upcoming_pools[j];
    c.options.model = model;
    const auto milp = make_milp_placement(c.options);
    const PlaceResult r = milp->place(*c.state, c.request, c.pools, c.upcoming);
    const PlaceResult greedy = make_greedy_placement()->place(*c.state, c.request, c.pools);
    ASSERT_EQ(r.status, greedy.status) << "case " << i << ": milp must not change whether the job starts";
    if (r.status != PlaceStatus::placed) continue;
    ++placed;
    ASSERT_EQ(c.state->validate(r.placement, c.request, c.pools), "") << "case " << i;
    // Cases where CPUs or memory keep some node from taking what its free GPUs would allow.
    const auto binds = [&] {
      for (const PoolId p : c.pools)
        for (const auto& f : pool_nodes(*c.state, p))
          if (can_take(f, c.request) < std::min(f.gpus, c.request.gpus)) return true;
      return false;
    };
    bound += binds();
    const double expected = model == "nodes" ? brute_force_nodes(c) : brute_force_ways(c);
    std::string detail;
    for (PoolId q = 0; q < static_cast<PoolId>(c.spec.pools.size()); ++q) {
      detail += fmt::format(" pool{} G={} free=[", q, c.spec.pools[q].gpus_per_node);
      for (const auto& f : pool_nodes(*c.state, q)) detail += fmt::format("{}/{}/{} ", f.gpus, f.cpus, f.memory_mib);
      detail += "]";
    }
    detail += fmt::format(" R={}/{}/{} eligible={} upcoming=", c.request.gpus, c.request.cpus, c.request.memory_mib,
                          fmt::join(c.pools, ","));
    for (const auto& u : c.upcoming) detail += fmt::format("{}/{}/{}@[{}] ", u.request.gpus, u.request.cpus, u.request.memory_mib, fmt::join(u.pools, ","));
    detail += fmt::format(" a={} b={} g={} d={} extra={} chose pool {}:", c.options.alpha, c.options.beta, c.options.gamma,
                          c.options.delta, c.options.extra_nodes, r.placement.pool);
    for (const auto& sh : r.placement.shares) detail += fmt::format(" {}x{}", sh.node, sh.gpus);
    EXPECT_NEAR(score(c, r.placement.pool, r.placement.shares), expected, 1e-6) << model << " case " << i << detail;
    EXPECT_EQ(milp->stats()->fallbacks, 0u);
  }
  EXPECT_GT(placed, 250) << "too few placeable cases to mean anything";
  EXPECT_GT(bound, 50) << "too few cases where CPUs or memory bind";
}

TEST(MilpPlacement, NodesModelIsOptimalAgainstBruteForce) { check_against_brute_force("nodes", 11); }
TEST(MilpPlacement, WaysModelIsOptimalAgainstBruteForce) { check_against_brute_force("ways", 12); }

TEST(MilpPlacement, PrefersFillingPartialNodesAndKeepsRoomForTheNextJob) {
  // Pool of four 8-GPU nodes, free 8,8,8,3. A 3-GPU job: greedy takes node 0 (first fit), leaving two
  // partial-free nodes; the MILP fills node 3 exactly, leaving three whole nodes for an 8-GPU job.
  const auto spec = testing::cluster_from("pools: [{name: p, nodes: 4, gpus_per_node: 8}]");
  cluster::ClusterState state(spec);
  state.allocate({0, {{3, 5}}});
  const PoolId pools[] = {0};
  const PoolId next_pools[] = {0};
  const UpcomingJob next[] = {{24, next_pools}};
  const auto milp = make_milp_placement({});
  const PlaceResult r = milp->place(state, 3, pools, next);
  ASSERT_EQ(r.status, PlaceStatus::placed);
  EXPECT_EQ(r.placement.shares, (std::vector<cluster::Share>{{3, 3}}));
  EXPECT_EQ(make_greedy_placement()->place(state, 3, pools).placement.shares, (std::vector<cluster::Share>{{0, 3}}));
  EXPECT_EQ(milp->stats()->solves, 1u);
}

TEST(MilpPlacement, ObjectiveTermsOnAHandCase) {
  MilpOptions o = MilpOptions::for_model("ways");  // the range term
  o.delta = 0.05, o.waste = 0.01;
  // Free GPUs 8, 3, 0, 5 of 8; CPUs free 64, 4, 0, 40 of 64.
  const auto spec = testing::cluster_from("pools: [{name: p, nodes: 4, gpus_per_node: 8, cpus_per_node: 64}]");
  cluster::ClusterState after(spec);
  after.allocate({0, {{1, 5}}, 60});
  after.allocate({0, {{2, 8}}, 64});
  after.allocate({0, {{3, 3}}, 24});
  const PoolId p0[] = {0};
  const UpcomingJob jobs[] = {{8, p0}, {9, p0}, {4, p0}};  // 8 fits (node 0); 9 needs 2 nodes: 8+5 ok; 4 ok
  // partial nodes: 3 and 5 -> 2; range 8 - 0 = 8; nodes used 2; fitting 3.
  EXPECT_NEAR(milp_objective(after, 0, 2, 3, jobs, o), 2 * 1.0 + 0.3 * 8 + 0.05 * 2 + 0.01 * 3 - 0.5 * 3, 1e-12);
  const UpcomingJob big[] = {{17, p0}};  // 3 nodes: 8 + 5 + 3 = 16 < 17
  EXPECT_NEAR(milp_objective(after, 0, 0, 0, big, o), 2 + 0.3 * 8, 1e-12);
  // With CPUs: 9 GPUs and 90 CPUs (10 per GPU) on 2 nodes: node 0 takes 6 (60 of 64 CPUs), node 3 takes 4
  // (40 CPUs): 10 >= 9, fits. With 180 CPUs (20 per GPU): 3 + 2 = 5 < 9, and an empty node takes only 3,
  // so the job needs 3 nodes: 3 + 2 + 0 (node 1 has 4 CPUs) = 5 < 9: it does not fit.
  const UpcomingJob cpu_light[] = {{{9, 90}, p0}}, cpu_heavy[] = {{{9, 180}, p0}};
  EXPECT_NEAR(milp_objective(after, 0, 0, 0, cpu_light, o), 2 + 0.3 * 8 - 0.5, 1e-12);
  EXPECT_NEAR(milp_objective(after, 0, 0, 0, cpu_heavy, o), 2 + 0.3 * 8, 1e-12);
}

TEST(MilpPlacement, CpusDecideWhereAJobGoes) {
  // Two 8-GPU nodes with 32 CPUs: node 0 has 7 GPUs and 4 CPUs free, node 1 has 4 GPUs and 32 CPUs free
  // (its job asked for none). A 2-GPU job with 8 CPUs fits only on node 1, whatever the model; greedy
  // without CPUs would take node 0 (first fit).
  const auto spec = testing::cluster_from("pools: [{name: p, nodes: 2, gpus_per_node: 8, cpus_per_node: 32}]");
  cluster::ClusterState state(spec);
  state.allocate({0, {{0, 1}}, 28});
  state.allocate({0, {{1, 4}}, 0});
  const PoolId pools[] = {0};
  const cluster::Request r(2, 8);
  const PlaceResult nodes = make_milp_placement({})->place(state, r, pools, {});
  ASSERT_EQ(nodes.status, PlaceStatus::placed);
  EXPECT_EQ(nodes.placement.shares, (std::vector<cluster::Share>{{1, 2}}));
  // The paper's weights prefer one GPU on each node (node 0's 4 CPUs hold one GPU's share): the free-GPU
  // range stays 3 instead of growing to 5.
  const PlaceResult ways = make_milp_placement(MilpOptions::for_model("ways"))->place(state, r, pools, {});
  ASSERT_EQ(ways.status, PlaceStatus::placed);
  EXPECT_EQ(ways.placement.shares, (std::vector<cluster::Share>{{0, 1}, {1, 1}}));
  EXPECT_EQ(state.validate(ways.placement, r, pools), "");
  EXPECT_EQ(make_greedy_placement()->place(state, 2, pools).placement.shares, (std::vector<cluster::Share>{{0, 2}}));
  EXPECT_EQ(make_greedy_placement()->place(state, r, pools).placement.shares, (std::vector<cluster::Share>{{1, 2}}));
}

TEST(MilpPlacement, WaysDefaultsAreThePapersWeights) {
  const MilpOptions ways = MilpOptions::for_model("ways");
  EXPECT_EQ(ways.alpha, 1.0);
  EXPECT_EQ(ways.beta, 0.3);
  EXPECT_EQ(ways.gamma, 0.5);
  EXPECT_EQ(ways.delta, 0.0);
  EXPECT_EQ(ways.waste, 0.0);
  EXPECT_EQ(ways.lookahead, 5);
}

// Records what a placement is told about upcoming jobs, and places like greedy.
class RecordingPlacement final : public PlacementPolicy {
 public:
  PlaceResult place(const cluster::ClusterState& state, const cluster::Request& r, std::span<const PoolId> pools,
                    std::span<const UpcomingJob> upcoming) const override {
    std::vector<int> seen;
    for (const auto& u : upcoming) seen.push_back(u.request.gpus);
    calls.emplace_back(r.gpus, seen);
    return greedy->place(state, r, pools);
  }
  int lookahead() const override { return 2; }
  mutable std::vector<std::pair<int, std::vector<int>>> calls;
  std::unique_ptr<PlacementPolicy> greedy = make_greedy_placement();
};

TEST(MilpPlacement, UpcomingJobsAreTheNextQueuedJobsInPriorityOrder) {
  // One 8-GPU node; jobs of distinct sizes all submitted at 0, FCFS: a(8) runs first, the rest wait.
  register_builtins();
  const auto cluster = testing::cluster_from("pools: [{name: p, nodes: 1, gpus_per_node: 8}]");
  const std::vector<trace::JobSpec> jobs = {testing::job("a", 0, 10, 8), testing::job("b", 0, 10, 1),
                                            testing::job("c", 0, 10, 2), testing::job("d", 0, 10, 3),
                                            testing::job("e", 0, 10, 4)};
  const ProfileOptions options = testing::profile("fcfs");
  auto recording = std::make_unique<RecordingPlacement>();
  const RecordingPlacement& seen = *recording;
  const auto& entry = *std::find_if(priority_policies().begin(), priority_policies().end(),
                                    [](const auto& e) { return e.name == "fcfs"; });
  ProfileScheduler scheduler(options, entry.make("", options.priority_options), std::move(recording));
  sim::Engine engine(cluster, jobs);
  engine.run(scheduler);
  using Call = std::pair<int, std::vector<int>>;
  // t=0: a (next: b, c) starts; b (next: c, d) blocks. t=10: b, c, d start (each sees the next two queued
  // jobs, never itself or a started one); e (nothing behind it) does not fit. t=20: e.
  const std::vector<Call> expected = {{8, {1, 2}}, {1, {2, 3}}, {1, {2, 3}}, {2, {3, 4}},
                                      {3, {4}},    {4, {}},     {4, {}}};
  EXPECT_EQ(seen.calls, expected);
}

TEST(MilpPlacement, BackfillProbesDoNotSolve) {
  // Shadow-time probes ask only whether a job fits: milp_solves counts placements, one per started job.
  register_builtins();
  const auto cluster = cluster::load_cluster("helios");
  auto options = testing::profile("fcfs", Blocking::global, /*backfill=*/true, "milp");
  auto scheduler = make_profile(options);
  const auto trace = workload::generate(workload::load_model("helios"), cluster, {.jobs = 300, .load = 0.9, .seed = 2});
  sim::Engine engine(cluster, trace.jobs);
  engine.run(*scheduler);
  EXPECT_EQ(scheduler->placement().stats()->solves, 300u);
}

// A wall-clock limit that fires is counted and warned about (by default the node limit decides first).
TEST(MilpPlacement, TimeLimitHitsAreCountedAndWarnedAbout) {
  register_builtins();
  const auto cluster = cluster::load_cluster("helios");
  const auto trace = workload::generate(workload::load_model("helios"), cluster, {.jobs = 200, .load = 0.9, .seed = 2});
  const auto hits = [&](double time_limit_ms) {
    auto options = testing::profile("fcfs", Blocking::pool, false, "milp");
    options.milp.time_limit_ms = time_limit_ms;
    auto scheduler = make_profile(options);
    sim::Engine engine(cluster, trace.jobs);
    engine.run(*scheduler);
    metrics::Summary s;
    s.milp_solves = scheduler->placement().stats()->solves;
    s.milp_time_limit_hits = scheduler->placement().stats()->time_limit_hits;
    return s;
  };
  const metrics::Summary by_default = hits(MilpOptions{}.time_limit_ms);
  EXPECT_EQ(by_default.milp_solves, 200u);
  EXPECT_EQ(metrics::time_limit_warning(by_default.milp_time_limit_hits, by_default.milp_solves).empty(), by_default.milp_time_limit_hits == 0);
  const metrics::Summary rushed = hits(0.001);  // 1 us: every solve that needs the solver runs out
  EXPECT_GT(rushed.milp_time_limit_hits, 0u);
  EXPECT_NE(metrics::time_limit_warning(rushed.milp_time_limit_hits, rushed.milp_solves).find(fmt::format("{} of 200 MILP placements", rushed.milp_time_limit_hits)),
            std::string::npos);
}

TEST(MilpPlacement, BadOptionsAreInputErrors) {
  MilpOptions o;
  o.model = "magic";
  EXPECT_THROW(make_milp_placement(o), InputError);
  o = {};
  o.alpha = -1;
  EXPECT_THROW(make_milp_placement(o), InputError);
  o = {};
  o.time_limit_ms = 0;
  EXPECT_THROW(make_milp_placement(o), InputError);
}

}  // namespace
}  // namespace rltune::policy
