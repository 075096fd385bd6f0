#include <gtest/gtest.h>

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "cluster/cluster_state.h"
#include "core/rng.h"
#include "helpers.h"
#include "policy/placement/enumerate.h"
#include "policy/placement/placement.h"

namespace rltune::policy {
namespace {

using Shares = std::vector<cluster::Share>;

// A one-pool cluster with the given free GPUs per node and, if cpus_per_node > 0, CPUs in use per node.
struct Pool {
  cluster::ClusterSpec spec;
  std::unique_ptr<cluster::ClusterState> state;
  Pool(int gpn, const std::vector<int>& free, int cpus_per_node = -1, const std::vector<int>& cpus_used = {}) {
    spec = testing::cluster_from(fmt::format("name: p\npools:\n  - {{name: p, nodes: {}, gpus_per_node: {}{}}}\n", free.size(), gpn,
                                             cpus_per_node > 0 ? fmt::format(", cpus_per_node: {}", cpus_per_node) : ""));
    state = std::make_unique<cluster::ClusterState>(spec);
    for (std::size_t n = 0; n < free.size(); ++n)  // one job per busy node, holding its CPUs there
      if (free[n] < gpn) state->allocate({0, {{static_cast<NodeId>(n), gpn - free[n]}}, cpus_used.empty() ? 0 : cpus_used[n]});
  }
};

std::vector<Shares> enumerate_all(const Pool& pool, const cluster::Request& r, bool relax) {
  std::vector<Shares> out;
  enumerate(snapshot(*pool.state, 0, r), r.gpus, relax, [&](std::span<const cluster::Share> s) { out.emplace_back(s.begin(), s.end()); });
  return out;
}

TEST(Enumerate, WorkedExampleOfSpec45) {
  // Six free 8-GPU nodes, request 10: tier 1 = [8,2], [7,3], [6,4], [5,5] on the two lowest nodes.
  const Pool pool(8, {8, 8, 8, 8, 8, 8});
  const std::vector<Shares> expected = {{{0, 8}, {1, 2}}, {{0, 7}, {1, 3}}, {{0, 6}, {1, 4}}, {{0, 5}, {1, 5}}};
  EXPECT_EQ(enumerate_all(pool, 10, false), expected);

  // Greedy picks the lexicographically smallest list: the even split.
  const PoolId pools[] = {0};
  const PlaceResult greedy = make_greedy_placement()->place(*pool.state, 10, pools);
  ASSERT_EQ(greedy.status, PlaceStatus::placed);
  EXPECT_EQ(greedy.placement.shares, (Shares{{0, 5}, {1, 5}}));

  // The defrag order puts [8,2] first: one new partial node instead of two.
  Candidates c;
  collect_candidates(snapshot(*pool.state, 0, 10), 10, false, c);
  ASSERT_EQ(c.tier1.size(), 4u);
  EXPECT_EQ(c.tier1[0].frag_delta, 1);
  EXPECT_EQ(c.tier1[0].waste_delta, 2);
  EXPECT_EQ(c.tier1[3].frag_delta, 2);
  sort_defrag(c.tier1);
  EXPECT_EQ(c.tier1[0].placement.shares, (Shares{{0, 8}, {1, 2}}));
  const PlaceResult defrag = make_defrag_placement()->place(*pool.state, 10, pools);
  EXPECT_EQ(defrag.placement.shares, (Shares{{0, 8}, {1, 2}}));
}

TEST(Enumerate, PartitionOrderIsLargestFirst) {
  const Pool pool(8, {8, 8, 8});
  const auto all = enumerate_all(pool, 12, false);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front(), (Shares{{0, 8}, {1, 4}}));
  EXPECT_EQ(all.back(), (Shares{{0, 6}, {1, 6}}));
}

TEST(Enumerate, SingleNodeGreedyIsFirstFitByLowestId) {
  const Pool pool(8, {1, 3, 8, 4, 2});
  const PoolId pools[] = {0};
  const auto greedy = make_greedy_placement();
  EXPECT_EQ(greedy->place(*pool.state, 2, pools).placement.shares, (Shares{{1, 2}}));
  EXPECT_EQ(greedy->place(*pool.state, 4, pools).placement.shares, (Shares{{2, 4}}));
  EXPECT_EQ(greedy->place(*pool.state, 5, pools).placement.shares, (Shares{{2, 5}}));
  EXPECT_EQ(greedy->place(*pool.state, 9, pools).placement.shares, (Shares{{0, 1}, {2, 8}}));  // smallest list: 1 GPU on node 0
  EXPECT_EQ(greedy->place(*pool.state, 13, pools).status, PlaceStatus::no_fit_now);  // 18 free, not on 2 nodes
  EXPECT_EQ(greedy->place(*pool.state, 41, pools).status, PlaceStatus::never_fits);
}

TEST(Enumerate, CpusCanSpreadAJobOverMoreNodes) {
  // Three free 8-GPU nodes with 16 CPUs. 4 GPUs and 32 CPUs: 8 CPUs per GPU, so a node takes at most 2
  // GPUs and the job needs 2 nodes although its GPUs fit on one.
  const Pool pool(8, {8, 8, 8}, 16);
  const cluster::Request r(4, 32);
  EXPECT_EQ(enumerate_all(pool, r, false), (std::vector<Shares>{{{0, 2}, {1, 2}}}));
  const PoolId pools[] = {0};
  EXPECT_EQ(make_greedy_placement()->place(*pool.state, r, pools).placement.shares, (Shares{{0, 2}, {1, 2}}));
  EXPECT_EQ(make_defrag_placement()->place(*pool.state, r, pools).placement.shares, (Shares{{0, 2}, {1, 2}}));
  EXPECT_EQ(make_greedy_placement()->place(*pool.state, 4, pools).placement.shares, (Shares{{0, 4}}));
  // 6 GPUs and 60 CPUs: at most 1 GPU per node (10 CPUs each), 6 nodes needed: never fits here.
  EXPECT_EQ(make_greedy_placement()->place(*pool.state, cluster::Request(6, 60), pools).status, PlaceStatus::never_fits);
}

TEST(Enumerate, PhillyMergePrefersTwoGpuNodes) {
  const cluster::ClusterSpec spec = cluster::load_cluster("philly");
  cluster::ClusterState state(spec);
  const PoolId both[] = {0, 1};
  const auto greedy = make_greedy_placement();
  // A 4-GPU job takes two 2-GPU nodes (ids 0, 1) rather than one 8-GPU node (id 16).
  const PlaceResult r = greedy->place(state, 4, both);
  EXPECT_EQ(r.placement.pool, 0);
  EXPECT_EQ(r.placement.shares, (Shares{{0, 2}, {1, 2}}));
}

// ---- Property: the enumerator equals a brute-force search over every placement ----

// Every way to give `gpus` GPUs to the nodes (0..cap[n] each, what node n can take), sorted share lists.
void brute_force(const std::vector<int>& cap, int gpus, std::size_t n, Shares& current, std::vector<Shares>& out) {
  if (n == cap.size()) {
    if (gpus == 0) out.push_back(current);
    return;
  }
  for (int g = 0; g <= std::min(cap[n], gpus); ++g) {
    if (g > 0) current.push_back({static_cast<NodeId>(n), g});
    brute_force(cap, gpus - g, n + 1, current, out);
    if (g > 0) current.pop_back();
  }
}

// The canonical form the reference enumerator produces (SPEC 4.3): nodes are grouped by free count and,
// where CPUs bind, by what they can take (cap); within each group the lowest ids are used, with
// non-increasing shares; every group except the last one used (groups run from most free and most cap
// down) gives each used node its whole cap. Without CPUs, cap = free: exactly the reference's rule.
bool canonical(const std::vector<int>& free, const std::vector<int>& cap, const Shares& shares) {
  std::map<std::pair<int, int>, std::vector<const cluster::Share*>> by_group;
  for (const auto& s : shares) by_group[{free[s.node], cap[s.node]}].push_back(&s);
  const auto last = by_group.begin()->first;
  for (const auto& [key, used] : by_group) {
    std::vector<NodeId> group;
    for (std::size_t n = 0; n < free.size(); ++n)
      if (std::pair{free[n], cap[n]} == key) group.push_back(static_cast<NodeId>(n));
    for (std::size_t i = 0; i < used.size(); ++i) {
      if (used[i]->node != group[i]) return false;
      if (i > 0 && used[i]->gpus > used[i - 1]->gpus) return false;
      if (key != last && used[i]->gpus != key.second) return false;
    }
  }
  return true;
}

double naive_variance_of_utilisation(const std::vector<int>& free, const std::vector<NodeId>& nodes, int gpn) {
  double mean = 0;
  for (const NodeId n : nodes) mean += 1.0 - double(free[n]) / gpn;
  mean /= nodes.size();
  double var = 0;
  for (const NodeId n : nodes) var += std::pow(1.0 - double(free[n]) / gpn - mean, 2);
  return var / nodes.size();
}

TEST(EnumerateProperty, MatchesBruteForceOnRandomPools) {
  // Half the rounds model CPUs: each busy node's job holds some of them, and the request asks for CPUs
  // in proportion to GPUs, so a node may take fewer GPUs than it has free.
  Rng rng(7);
  int checked = 0, cpu_bound = 0;
  for (int round = 0; round < 600; ++round) {
    const int gpn = std::vector<int>{2, 4, 8}[rng.uniform_int(0, 2)];
    const int nodes = static_cast<int>(rng.uniform_int(1, 5));
    std::vector<int> free(nodes), cpus_used(nodes, 0);
    for (auto& f : free) f = static_cast<int>(rng.uniform_int(0, gpn));
    const int total = std::accumulate(free.begin(), free.end(), 0);
    const int gpus = static_cast<int>(rng.uniform_int(1, std::max(1, total)));
    const bool relax = rng.uniform() < 0.5;
    const bool with_cpus = round % 2 == 1;
    const int cpus_per_node = with_cpus ? static_cast<int>(rng.uniform_int(4, 16)) : -1;
    if (with_cpus)
      for (int n = 0; n < nodes; ++n)
        if (free[n] < gpn) cpus_used[n] = static_cast<int>(rng.uniform_int(0, cpus_per_node));
    const cluster::Request request(gpus, with_cpus ? static_cast<int>(rng.uniform_int(1, 4 * gpus)) : 0);
    const Pool pool(gpn, free, cpus_per_node, cpus_used);

    // What each node can take, by direct search: the most g <= free with ceil(cpus x g / gpus) CPUs free.
    const auto can_take = [&](int free_gpus, int free_cpus) {
      int g = std::min(free_gpus, gpus);
      while (with_cpus && g > 0 && (request.cpus * g + gpus - 1) / gpus > free_cpus) --g;
      return g;
    };
    std::vector<int> cap(nodes);
    for (int n = 0; n < nodes; ++n) cap[n] = can_take(free[n], with_cpus ? cpus_per_node - cpus_used[n] : 0);
    const int empty_cap = can_take(gpn, cpus_per_node);
    cpu_bound += cap != free;
    std::vector<Shares> all;
    Shares current;
    brute_force(cap, gpus, 0, current, all);
    const int nmin = empty_cap == 0 ? nodes + 1 : (gpus + empty_cap - 1) / empty_cap;
    const int usable = static_cast<int>(std::count_if(cap.begin(), cap.end(), [](int c) { return c > 0; }));
    const int nmax = relax ? std::min(nmin + 1, usable) : nmin;
    std::set<Shares> expected;
    for (const auto& s : all)
      if (static_cast<int>(s.size()) >= nmin && static_cast<int>(s.size()) <= nmax && canonical(free, cap, s)) expected.insert(s);

    const auto got = enumerate_all(pool, request, relax);
    const std::set<Shares> got_set(got.begin(), got.end());
    ASSERT_EQ(got_set.size(), got.size()) << "duplicates, round " << round;
    ASSERT_EQ(got_set, expected) << "round " << round;

    // Scores agree with a naive recomputation over the nodes with free GPUs.
    Candidates c;
    collect_candidates(snapshot(*pool.state, 0, request), gpus, relax, c);
    const TierSizes sizes = count_tiers(snapshot(*pool.state, 0, request), gpus, relax);
    EXPECT_EQ(sizes.tier1, c.tier1.size()) << "round " << round;
    EXPECT_EQ(sizes.tier2, c.tier2.size()) << "round " << round;
    std::vector<NodeId> free_list;
    for (int n = 0; n < nodes; ++n)
      if (free[n] > 0) free_list.push_back(n);
    const auto partial = [&](const std::vector<int>& x) {
      int p = 0, w = 0;
      for (const NodeId n : free_list)
        if (x[n] > 0 && x[n] < gpn) ++p, w += gpn - x[n];
      return std::pair{p, w};
    };
    for (const auto* tier : {&c.tier1, &c.tier2})
      for (const auto& cand : *tier) {
        std::vector<int> after = free;
        for (const auto& s : cand.placement.shares) after[s.node] -= s.gpus;
        EXPECT_EQ(cand.frag_delta, partial(after).first - partial(free).first);
        EXPECT_EQ(cand.waste_delta, partial(after).second - partial(free).second);
        const double lb = free_list.size() <= 1 ? 0.0
                                                : naive_variance_of_utilisation(after, free_list, gpn) -
                                                      naive_variance_of_utilisation(free, free_list, gpn);
        EXPECT_NEAR(cand.lb, lb, 1e-12);
        if (tier == &c.tier2) {
          EXPECT_LE(cand.frag_delta, 0);
        }
      }

    // Greedy = lexicographically smallest tier-1 list of the brute-force set.
    const PoolId pools[] = {0};
    const PlaceResult greedy = make_greedy_placement()->place(*pool.state, request, pools);
    std::optional<Shares> best;
    for (const auto& s : expected)
      if (static_cast<int>(s.size()) == nmin && (!best || s < *best)) best = s;
    if (best) {
      ASSERT_EQ(greedy.status, PlaceStatus::placed);
      EXPECT_EQ(greedy.placement.shares, *best);
      ++checked;
    } else {
      EXPECT_NE(greedy.status, PlaceStatus::placed);
    }
  }
  EXPECT_GT(checked, 150);    // the random cases did exercise placements
  EXPECT_GT(cpu_bound, 100);  // and CPUs did bind
}

TEST(PlacementProperty, TheFreestNodesDecideWhetherAJobFits) {
  // ClusterState::freest_nodes_hold against a sort of the free GPUs, and greedy's feasibility (which
  // tests only that where GPUs alone bind) against its placement, on random pools of up to 12 nodes;
  // defrag's and balance's candidates use at most one node more than the fewest.
  Rng rng(11);
  int placed = 0, not_placed = 0;
  for (int round = 0; round < 500; ++round) {
    const int gpn = std::vector<int>{2, 4, 8}[rng.uniform_int(0, 2)];
    const int nodes = static_cast<int>(rng.uniform_int(1, 12));
    std::vector<int> free(nodes), cpus_used(nodes, 0);
    for (auto& f : free) f = rng.uniform() < 0.3 ? gpn * static_cast<int>(rng.uniform_int(0, 1)) : static_cast<int>(rng.uniform_int(0, gpn));
    const bool with_cpus = round % 3 == 2;
    const int cpus_per_node = with_cpus ? static_cast<int>(rng.uniform_int(4, 16)) : -1;
    if (with_cpus)
      for (int n = 0; n < nodes; ++n)
        if (free[n] < gpn) cpus_used[n] = static_cast<int>(rng.uniform_int(0, cpus_per_node));
    const int gpus = static_cast<int>(rng.uniform_int(1, nodes * gpn));
    const cluster::Request request(gpus, with_cpus ? static_cast<int>(rng.uniform_int(1, 2 * gpus)) : 0);
    const Pool pool(gpn, free, cpus_per_node, cpus_used);

    std::vector<int> sorted = free;
    std::sort(sorted.rbegin(), sorted.rend());
    const auto hold = [&](int k) { return std::accumulate(sorted.begin(), sorted.begin() + std::min(k, nodes), 0) >= gpus; };
    for (int k = 0; k <= nodes + 1; ++k) ASSERT_EQ(pool.state->freest_nodes_hold(0, k, gpus), hold(k)) << "round " << round << ", k " << k;

    const PoolId pools[] = {0};
    const int fewest = cluster::fewest_nodes(pool.spec.pools[0], request);
    const PlaceStatus greedy = make_greedy_placement()->place(*pool.state, request, pools).status;
    EXPECT_EQ(make_greedy_placement()->feasibility(*pool.state, request, pools), greedy) << "round " << round;
    if (!with_cpus) {
      EXPECT_EQ(greedy == PlaceStatus::placed, fewest <= nodes && hold(fewest)) << "round " << round;
    }
    if (greedy == PlaceStatus::placed) {
      EXPECT_TRUE(hold(fewest)) << "round " << round;
    }
    for (const auto& make : {make_defrag_placement, make_balance_placement}) {
      const PlaceResult r = make()->place(*pool.state, request, pools);
      if (r.status == PlaceStatus::placed) {
        EXPECT_LE(static_cast<int>(r.placement.shares.size()), fewest + 1) << "round " << round;
        EXPECT_TRUE(hold(fewest + 1)) << "round " << round;
      }
    }
    (greedy == PlaceStatus::placed ? placed : not_placed) += 1;
  }
  EXPECT_GT(placed, 100);  // both answers were exercised
  EXPECT_GT(not_placed, 100);
}

TEST(ClusterState, TheFreestNodesFollowAllocationsAndReleases) {
  const Pool pool(4, {4, 4, 4});
  cluster::ClusterState& state = *pool.state;
  EXPECT_TRUE(state.freest_nodes_hold(0, 2, 8));
  state.allocate({0, {{0, 3}, {1, 1}}});
  EXPECT_FALSE(state.freest_nodes_hold(0, 2, 8));  // free 1, 3, 4
  EXPECT_TRUE(state.freest_nodes_hold(0, 2, 7));
  EXPECT_TRUE(state.freest_nodes_hold(0, 3, 8));
  state.release({0, {{0, 3}, {1, 1}}});
  EXPECT_TRUE(state.freest_nodes_hold(0, 2, 8));
  EXPECT_FALSE(state.freest_nodes_hold(0, 3, 13));
}

}  // namespace
}  // namespace rltune::policy
