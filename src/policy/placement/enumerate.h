#pragma once
// Candidate placements of one request in one pool, exactly as the reference enumerator (SPEC 4.1-4.4):
// nodes grouped by free GPU count (groups by count descending, ids ascending within a group); patterns
// enumerated depth-first; each pattern becomes an assignment on the lowest ids of each group.
#include <functional>
#include <span>
#include <vector>

#include "cluster/cluster_state.h"

namespace rltune::policy {

// One pool as the enumerator sees it for one request.
struct PoolSnapshot {
  PoolId pool;
  NodeId first_node;
  int gpus_per_node;
  std::span<const int> free;  // free GPUs per node of the pool, from its first node
  std::vector<int> caps;      // the most GPUs of the request each node can take; empty = its free GPUs
  int fewest = 0;             // nodes the request needs at least (cluster::fewest_nodes)
  int cap(std::size_t i) const { return caps.empty() ? free[i] : caps[i]; }
};
// `request`'s CPUs and memory bind only where the pool models them.
PoolSnapshot snapshot(const cluster::ClusterState& state, PoolId pool, const cluster::Request& request);

// Calls `emit(shares)` for every pattern, in the reference's depth-first order. Shares are sorted by node
// id; the span is valid only during the call. relax=false: exactly `fewest` nodes; relax=true: up to
// min(fewest + 1, #nodes that can take a share). Nothing is emitted for gpus <= 0. Where CPUs or memory
// bind, nodes of one free-GPU group are split by how much of the request they can take (most first),
// and no share exceeds that; otherwise this is exactly the reference's enumeration.
void enumerate(const PoolSnapshot& pool, int gpus, bool relax,
               const std::function<void(std::span<const cluster::Share>)>& emit);

// A scored candidate (SPEC 4.4). Deltas are after minus before, over the pool's nodes with free GPUs.
struct Candidate {
  cluster::Placement placement;
  int frag_delta = 0;   // change in partially free nodes
  int waste_delta = 0;  // change in idle GPUs on partially free nodes
  double lb = 0;        // change in the population variance of node utilisation
  int nodes_used = 0;
};

struct Candidates {
  std::vector<Candidate> tier1;  // exactly `fewest` nodes, enumeration order
  std::vector<Candidate> tier2;  // fewest + 1 nodes and no more partial nodes (relax only)
  std::size_t assignments = 0;   // everything emitted, including min+1 patterns in neither tier
};

// Enumerates and scores every candidate of `gpus` in `pool`, appending to `out` (pools can be merged).
void collect_candidates(const PoolSnapshot& pool, int gpus, bool relax, Candidates& out);

// The sizes collect_candidates' tiers would have, without building the candidates (the observation's
// tier features need only these).
struct TierSizes {
  std::size_t tier1 = 0, tier2 = 0;
};
TierSizes count_tiers(const PoolSnapshot& pool, int gpus, bool relax);

// Sort orders (stable): defrag = (frag, waste, lb, nodes, node ids); balance = (lb, frag, waste, nodes, node ids).
void sort_defrag(std::vector<Candidate>& candidates);
void sort_balance(std::vector<Candidate>& candidates);

// Lexicographic order of (node, gpus) lists: the reference's greedy tie-break.
bool lexicographically_less(std::span<const cluster::Share> a, std::span<const cluster::Share> b);

}  // namespace rltune::policy
