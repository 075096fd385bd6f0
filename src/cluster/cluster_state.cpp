#include "cluster/cluster_state.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace rltune::cluster {

int Placement::gpus() const {
  int total = 0;
  for (const auto& s : shares) total += s.gpus;
  return total;
}

ClusterState::ClusterState(const ClusterSpec& spec) : spec_(&spec) {
  for (const auto& pool : spec.pools) {
    free_.insert(free_.end(), pool.nodes, pool.gpus_per_node);
    gpus_per_node_.insert(gpus_per_node_.end(), pool.nodes, pool.gpus_per_node);
    pool_free_total_.push_back(pool.total_gpus());
  }
  free_total_ = spec.total_gpus();
}

std::string ClusterState::validate(const Placement& placement, int gpus, std::span<const PoolId> allowed) const {
  if (std::find(allowed.begin(), allowed.end(), placement.pool) == allowed.end())
    return fmt::format("pool {} is not one the job may use", placement.pool);
  const PoolSpec& pool = spec_->pools[placement.pool];
  if (placement.shares.empty()) return "the placement gives no GPU";
  int total = 0;
  NodeId previous = -1;
  for (const auto& s : placement.shares) {
    if (s.node < pool.first_node || s.node >= pool.first_node + pool.nodes)
      return fmt::format("node {} is not in pool {}", s.node, pool.name);
    if (s.node <= previous) return "shares must be sorted by node, one per node";
    if (s.gpus <= 0) return fmt::format("share of node {} is {} GPUs", s.node, s.gpus);
    if (s.gpus > free_[s.node]) return fmt::format("node {} has {} free GPUs, not {}", s.node, free_[s.node], s.gpus);
    total += s.gpus;
    previous = s.node;
  }
  if (total != gpus) return fmt::format("the placement gives {} GPUs, the job needs {}", total, gpus);
  return "";
}

void ClusterState::change(NodeId node, int delta) {
  const int gpn = gpus_per_node_[node];
  const int before = free_[node], after = before + delta;
  RLTUNE_CHECK(after >= 0 && after <= gpn, fmt::format("node {} would have {} free GPUs of {}", node, after, gpn));
  partial_nodes_ += (after > 0 && after < gpn) - (before > 0 && before < gpn);
  free_[node] = after;
  free_total_ += delta;
}

void ClusterState::allocate(const Placement& placement) {
  for (const auto& s : placement.shares) change(s.node, -s.gpus);
  pool_free_total_[placement.pool] -= placement.gpus();
}

void ClusterState::release(const Placement& placement) {
  for (const auto& s : placement.shares) change(s.node, s.gpus);
  pool_free_total_[placement.pool] += placement.gpus();
}

std::string format_placement(const ClusterSpec& spec, const Placement& placement) {
  std::string out;
  for (const auto& s : placement.shares) {
    if (!out.empty()) out += '+';
    out += fmt::format("{}:{}", spec.node_name(s.node), s.gpus);
  }
  return out;
}

}  // namespace rltune::cluster
