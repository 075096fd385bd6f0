#pragma once
// Candidate placements of one request in one pool, exactly as the reference enumerator (SPEC 4.1-4.4):
// nodes grouped by free GPU count (groups by count descending, ids ascending within a group); patterns
// enumerated depth-first; each pattern becomes an assignment on the lowest ids of each group.
#include <functional>
#include <span>
#include <vector>

#include "cluster/cluster_state.h"

namespace rltune::policy {

struct PoolSnapshot {
  PoolId pool;
  NodeId first_node;
  int gpus_per_node;
  std::span<const int> free;  // free GPUs per node of the pool, from its first node
};
PoolSnapshot snapshot(const cluster::ClusterState& state, PoolId pool);

// Minimum node count for a request: ceil(gpus / gpus_per_node).
int min_nodes(int gpus, int gpus_per_node);

// Calls `emit(shares)` for every pattern, in the reference's depth-first order. Shares are sorted by node
// id; the span is valid only during the call. relax=false: exactly min_nodes nodes; relax=true: up to
// min(min_nodes + 1, #nodes with free GPUs). Nothing is emitted for gpus <= 0.
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
  std::vector<Candidate> tier1;  // exactly min_nodes nodes, enumeration order
  std::vector<Candidate> tier2;  // min_nodes + 1 nodes and no more partial nodes (relax only)
  std::size_t assignments = 0;   // everything emitted, including min+1 patterns in neither tier
};

// Enumerates and scores every candidate of `gpus` in `pool`, appending to `out` (pools can be merged).
void collect_candidates(const PoolSnapshot& pool, int gpus, bool relax, Candidates& out);

// Sort orders (stable): defrag = (frag, waste, lb, nodes, node ids); balance = (lb, frag, waste, nodes, node ids).
void sort_defrag(std::vector<Candidate>& candidates);
void sort_balance(std::vector<Candidate>& candidates);

// Lexicographic order of (node, gpus) lists: the reference's greedy tie-break.
bool lexicographically_less(std::span<const cluster::Share> a, std::span<const cluster::Share> b);

}  // namespace rltune::policy
