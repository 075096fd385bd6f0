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

}  // namespace

std::unique_ptr<PlacementPolicy> make_greedy_placement() { return std::make_unique<GreedyPlacement>(); }
std::unique_ptr<PlacementPolicy> make_defrag_placement() { return std::make_unique<OrderedPlacement>(sort_defrag); }
std::unique_ptr<PlacementPolicy> make_balance_placement() { return std::make_unique<OrderedPlacement>(sort_balance); }

}  // namespace rltune::policy
