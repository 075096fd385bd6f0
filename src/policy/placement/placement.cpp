#include "policy/placement/placement.h"

#include <algorithm>

#include "policy/placement/enumerate.h"

namespace rltune::policy {

namespace {

// True when some pool in `pools` could hold the request when empty.
bool any_pool_large_enough(const cluster::ClusterState& state, const cluster::Request& r, std::span<const PoolId> pools) {
  for (const PoolId p : pools)
    if (cluster::could_hold(state.spec().pools[p], r)) return true;
  return false;
}

class GreedyPlacement final : public PlacementPolicy {
 public:
  // Where GPUs alone decide, a candidate on the fewest nodes exists exactly when the freest that many
  // nodes hold the job (tested against the enumerator), so no enumeration is needed.
  PlaceStatus feasibility(const cluster::ClusterState& state, const cluster::Request& r, std::span<const PoolId> pools) const override {
    if (!any_pool_large_enough(state, r, pools)) return PlaceStatus::never_fits;
    for (const PoolId p : pools) {
      const cluster::PoolSpec& pool = state.spec().pools[p];
      if (cluster::other_resources_bind(pool, r)) {
        const PoolId only[] = {p};
        if (place(state, r, only).status == PlaceStatus::placed) return PlaceStatus::placed;
      } else if (state.freest_nodes_hold(p, cluster::fewest_nodes(pool, r), r.gpus)) {
        return PlaceStatus::placed;
      }
    }
    return PlaceStatus::no_fit_now;
  }

  PlaceResult place(const cluster::ClusterState& state, const cluster::Request& r, std::span<const PoolId> pools,
                    std::span<const UpcomingJob> = {}) const override {
    if (!any_pool_large_enough(state, r, pools)) return {PlaceStatus::never_fits, {}};
    PlaceResult result;
    const int gpus = r.gpus;
    const auto consider = [&](PoolId p, std::span<const cluster::Share> shares) {
      if (result.status != PlaceStatus::placed || lexicographically_less(shares, result.placement.shares)) {
        result.status = PlaceStatus::placed;
        result.placement.pool = p;
        result.placement.shares.assign(shares.begin(), shares.end());
      }
    };
    for (const PoolId p : pools) {
      const cluster::PoolSpec& pool = state.spec().pools[p];
      const int fewest = cluster::fewest_nodes(pool, r);
      if (!state.freest_nodes_hold(p, fewest, gpus)) continue;  // no candidate on `fewest` nodes
      if (fewest == 1) {
        // One node: the smallest list is the lowest-id node that can take the whole job (first fit).
        for (NodeId n = pool.first_node; n < pool.first_node + pool.nodes; ++n)
          if (state.free(n) >= gpus && state.max_share(n, r) >= gpus) {
            const cluster::Share share{n, gpus};
            consider(p, std::span(&share, 1));
            break;
          }
        continue;
      }
      enumerate(snapshot(state, p, r), gpus, /*relax=*/false, [&](std::span<const cluster::Share> shares) { consider(p, shares); });
    }
    return result;
  }
};

// Picks the best candidate in a sort order: tier 1 first, then tier 2.
class OrderedPlacement final : public PlacementPolicy {
 public:
  explicit OrderedPlacement(void (*sort)(std::vector<Candidate>&)) : sort_(sort) {}
  PlaceResult place(const cluster::ClusterState& state, const cluster::Request& r, std::span<const PoolId> pools,
                    std::span<const UpcomingJob> = {}) const override {
    if (!any_pool_large_enough(state, r, pools)) return {PlaceStatus::never_fits, {}};
    PlaceResult result;
    Candidates candidates;
    for (const PoolId p : pools) {
      const cluster::PoolSpec& pool = state.spec().pools[p];
      // Candidates use at most fewest + 1 nodes.
      if (state.freest_nodes_hold(p, std::min(cluster::fewest_nodes(pool, r), pool.nodes) + 1, r.gpus))
        collect_candidates(snapshot(state, p, r), r.gpus, /*relax=*/true, candidates);
    }
    for (auto* tier : {&candidates.tier1, &candidates.tier2}) {
      if (tier->empty()) continue;
      sort_(*tier);
      result.status = PlaceStatus::placed;
      result.placement = std::move(tier->front().placement);
      break;
    }
    return result;
  }

 private:
  void (*sort_)(std::vector<Candidate>&);
};

// consolidate: HeliosArtifact's placer (see make_consolidate_placement). "A node's room" is the most GPUs
// of the request it can take now (its free GPUs where only GPUs count); a "whole share" is what an empty
// node can take.
class ConsolidatePlacement final : public PlacementPolicy {
 public:
  PlaceResult place(const cluster::ClusterState& state, const cluster::Request& r, std::span<const PoolId> pools,
                    std::span<const UpcomingJob> = {}) const override {
    if (!any_pool_large_enough(state, r, pools)) return {PlaceStatus::never_fits, {}};
    PlaceResult result;
    for (const PoolId p : pools) {
      result.placement.shares = in_pool(state, r, state.spec().pools[p]);
      if (result.placement.shares.empty()) continue;
      std::sort(result.placement.shares.begin(), result.placement.shares.end());
      result.status = PlaceStatus::placed;
      result.placement.pool = p;
      break;
    }
    return result;
  }

 private:
  static std::vector<cluster::Share> in_pool(const cluster::ClusterState& state, const cluster::Request& r,
                                             const cluster::PoolSpec& pool) {
    const int whole = cluster::empty_node(pool).max_share(r);
    const NodeId end = pool.first_node + pool.nodes;
    if (r.gpus <= whole) {
      // One node: the one with the fewest free GPUs that can take the job (best fit), lowest id first.
      NodeId best = -1;
      for (NodeId n = pool.first_node; n < end; ++n)
        if (state.max_share(n, r) >= r.gpus && (best < 0 || state.free(n) < state.free(best))) best = n;
      if (best < 0) return {};
      return {{best, r.gpus}};
    }
    // Several nodes: whole shares on nodes that can take one, lowest ids first; the rest on the remaining
    // node with the most room (lowest id first), which must take it all.
    std::vector<cluster::Share> shares;
    int left = r.gpus;
    for (NodeId n = pool.first_node; n < end && left >= whole; ++n)
      if (state.max_share(n, r) == whole) {
        shares.push_back({n, whole});
        left -= whole;
      }
    if (left >= whole) return {};
    if (left == 0) return shares;
    NodeId roomiest = -1;
    for (NodeId n = pool.first_node; n < end; ++n) {
      const bool used = std::any_of(shares.begin(), shares.end(), [n](const cluster::Share& s) { return s.node == n; });
      if (!used && (roomiest < 0 || state.max_share(n, r) > state.max_share(roomiest, r))) roomiest = n;
    }
    if (roomiest < 0 || state.max_share(roomiest, r) < left) return {};
    shares.push_back({roomiest, left});
    return shares;
  }
};

}  // namespace

std::unique_ptr<PlacementPolicy> make_greedy_placement() { return std::make_unique<GreedyPlacement>(); }
std::unique_ptr<PlacementPolicy> make_defrag_placement() { return std::make_unique<OrderedPlacement>(sort_defrag); }
std::unique_ptr<PlacementPolicy> make_balance_placement() { return std::make_unique<OrderedPlacement>(sort_balance); }
std::unique_ptr<PlacementPolicy> make_consolidate_placement() { return std::make_unique<ConsolidatePlacement>(); }

}  // namespace rltune::policy
