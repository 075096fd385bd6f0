#pragma once
// Free GPUs per node and where each job's GPUs are. Allocation and release check GPU conservation.
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

// GPUs given to one job: shares sorted by node id, all inside one pool.
struct Placement {
  PoolId pool = -1;
  std::vector<Share> shares;
  int gpus() const;
  friend bool operator==(const Placement&, const Placement&) = default;
};

class ClusterState {
 public:
  explicit ClusterState(const ClusterSpec& spec);

  const ClusterSpec& spec() const { return *spec_; }
  int free(NodeId node) const { return free_[node]; }
  // Free GPUs of every node of a pool, indexed from the pool's first node.
  std::span<const int> pool_free(PoolId pool) const {
    const PoolSpec& p = spec_->pools[pool];
    return {free_.data() + p.first_node, static_cast<std::size_t>(p.nodes)};
  }
  int pool_free_total(PoolId pool) const { return pool_free_total_[pool]; }
  int free_total() const { return free_total_; }
  // Nodes with 0 < free < gpus_per_node, over the whole cluster.
  int partial_nodes() const { return partial_nodes_; }

  // "" when `placement` is a valid way to give `gpus` GPUs in one of `allowed_pools` now; else why not.
  std::string validate(const Placement& placement, int gpus, std::span<const PoolId> allowed_pools) const;
  // Apply or undo a placement. Both check that GPUs are conserved (never below 0 or above capacity).
  void allocate(const Placement& placement);
  void release(const Placement& placement);

 private:
  void change(NodeId node, int delta);

  const ClusterSpec* spec_;
  std::vector<int> free_;
  std::vector<int> gpus_per_node_;  // per node, for the partial-node count
  std::vector<int> pool_free_total_;
  int free_total_ = 0;
  int partial_nodes_ = 0;
};

// "vc0-2:8+vc0-3:2": readable placement for outputs.
std::string format_placement(const ClusterSpec& spec, const Placement& placement);

}  // namespace rltune::cluster
