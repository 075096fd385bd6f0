#pragma once
// Placement policies: given a request and the pools it may use, choose nodes and GPUs per node.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"

namespace rltune::policy {

enum class PlaceStatus {
  placed,      // `placement` is valid now
  no_fit_now,  // the job could run in one of these pools, but not with the GPUs free now
  never_fits,  // the request exceeds every given pool's capacity
};

struct PlaceResult {
  PlaceStatus status = PlaceStatus::no_fit_now;
  cluster::Placement placement;
};

// A job behind the one being placed, in the active priority order (for look-ahead placements).
struct UpcomingJob {
  cluster::Request request;
  std::span<const PoolId> pools;  // its eligible pools
};

// Counters a placement keeps over a run (e.g. MILP solves); reported in summary.json when non-empty.
struct PlacementStats {
  std::size_t solves = 0;
  std::size_t fallbacks = 0;
  std::size_t time_limit_hits = 0;  // fallbacks where the wall-clock limit fired: not reproducible
  std::vector<double> solve_us;
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  // Chooses where the request's GPUs go among `pools` (one pool only) given `state`; its CPUs and memory
  // must fit too where pools model them. Deterministic. `upcoming` lists the next jobs in priority order
  // (only placements with lookahead() > 0 read it).
  virtual PlaceResult place(const cluster::ClusterState& state, const cluster::Request& request,
                            std::span<const PoolId> pools, std::span<const UpcomingJob> upcoming = {}) const = 0;
  // Whether place() would place the job now, without choosing where (backfill's shadow-time probes; and,
  // for a bare GPU count, the decision pass's test of whether anything more could start).
  virtual PlaceStatus feasibility(const cluster::ClusterState& state, const cluster::Request& request,
                                  std::span<const PoolId> pools) const {
    return place(state, request, pools).status;
  }
  // How many upcoming jobs place() wants; 0 = none.
  virtual int lookahead() const { return 0; }
  // Run statistics, if the policy keeps any (nullptr = none).
  virtual const PlacementStats* stats() const { return nullptr; }
};

// greedy: the reference's pick (SPEC 4.5): the lexicographically smallest (node, gpus) list among the
// candidates on exactly ceil(R/gpn) nodes (cluster::fewest_nodes where CPUs or memory bind), merged
// across pools (so earlier pools win ties).
std::unique_ptr<PlacementPolicy> make_greedy_placement();
// defrag / balance: the first candidate in the reference's defrag or load-balance order (SPEC 4.4),
// exact node count first, then min+1 nodes that add no partial node.
std::unique_ptr<PlacementPolicy> make_defrag_placement();
std::unique_ptr<PlacementPolicy> make_balance_placement();
// consolidate: HeliosArtifact's placer (QSSF Service, consolidate.py): a job that fits on one node goes
// to the node with the fewest free GPUs that can take it (best fit, lowest id on ties); a larger job
// takes whole free nodes, lowest ids first, and its remainder goes to the remaining node with the most
// free GPUs, or it waits. Never splits a job that fits on one node; pools are tried in the order given.
std::unique_ptr<PlacementPolicy> make_consolidate_placement();

}  // namespace rltune::policy
