#pragma once
// Free GPUs, CPUs and memory per node and where each job's GPUs are. Allocation and release check that
// every resource is conserved.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"

namespace rltune::cluster {

struct Share {
  NodeId node;
  int gpus;
  friend bool operator==(const Share&, const Share&) = default;
  friend auto operator<=>(const Share&, const Share&) = default;
};

// GPUs given to one job: shares sorted by node id, all inside one pool. The job's CPUs and memory go with
// its GPUs (see Request); the engine fills them in from the job when it starts.
struct Placement {
  PoolId pool = -1;
  std::vector<Share> shares;
  int cpus = 0;
  long long memory_mib = 0;
  int gpus() const;
  Request request() const { return {gpus(), cpus, memory_mib}; }
  friend bool operator==(const Placement&, const Placement&) = default;
};

class ClusterState {
 public:
  explicit ClusterState(const ClusterSpec& spec);

  const ClusterSpec& spec() const { return *spec_; }
  int free(NodeId node) const { return free_[node]; }
  NodeFree node_free(NodeId node) const { return {free_[node], free_cpus_[node], free_memory_[node]}; }
  // The most GPUs of `r` node `node` can take now.
  int max_share(NodeId node, const Request& r) const { return node_free(node).max_share(r); }
  // Free GPUs of every node of a pool, indexed from the pool's first node.
  std::span<const int> pool_free(PoolId pool) const {
    const PoolSpec& p = spec_->pools[pool];
    return {free_.data() + p.first_node, static_cast<std::size_t>(p.nodes)};
  }
  int pool_free_total(PoolId pool) const { return pool_free_total_[pool]; }
  // Whether the `nodes` freest nodes of `pool` have at least `gpus` free GPUs between them: necessary for
  // any placement of `gpus` GPUs on at most `nodes` nodes, in O(gpus per node) from a per-pool count of
  // nodes by free GPUs (placements and backfill's shadow-time probes reject hopeless pools with it).
  bool freest_nodes_hold(PoolId pool, int nodes, int gpus) const;
  // The pool's nodes by free GPUs: [f] = how many have f free, f = 0..gpus per node.
  std::span<const int> pool_free_levels(PoolId pool) const {
    return {free_levels_.data() + level_base_[pool], static_cast<std::size_t>(spec_->pools[pool].gpus_per_node) + 1};
  }
  int free_total() const { return free_total_; }
  // Changes with every allocation or release in the pool. Stamps come from one process-wide counter, so
  // two states (copies included) with the same stamp for a pool hold the same resources in it: a cache
  // keyed by the stamp needs no other check.
  std::uint64_t pool_stamp(PoolId pool) const { return pool_stamp_[pool]; }
  // Nodes with 0 < free < gpus_per_node, over the whole cluster.
  int partial_nodes() const { return partial_nodes_; }

  // "" when `placement` is a valid way to serve `request` in one of `allowed_pools` now; else why not.
  std::string validate(const Placement& placement, const Request& request, std::span<const PoolId> allowed_pools) const;
  // Apply or undo a placement (its shares, CPUs and memory). Both check that every resource is conserved
  // (never below 0 or above capacity).
  void allocate(const Placement& placement);
  void release(const Placement& placement);

 private:
  void change(NodeId node, int delta);
  void change_other(NodeId node, int cpus, long long memory_mib);

  const ClusterSpec* spec_;
  std::vector<int> free_;
  std::vector<int> free_cpus_;           // -1 where the pool does not model CPUs
  std::vector<long long> free_memory_;   // -1 where the pool does not model memory
  std::vector<int> gpus_per_node_;  // per node, for the partial-node count
  std::vector<int> pool_free_total_;
  std::vector<std::uint64_t> pool_stamp_;
  // Nodes by free GPUs: pool p's node count with f free GPUs at free_levels_[level_base_[p] + f].
  std::vector<int> free_levels_;
  std::vector<int> level_base_;       // per pool
  std::vector<int> node_level_base_;  // per node: its pool's level_base_
  int free_total_ = 0;
  int partial_nodes_ = 0;
};

// "vc0-2:8+vc0-3:2": readable placement for outputs.
std::string format_placement(const ClusterSpec& spec, const Placement& placement);

}  // namespace rltune::cluster
