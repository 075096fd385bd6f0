#include "cluster/cluster_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "core/error.h"

namespace rltune::cluster {

namespace {

// Unique over the process: a thread's own count under the thread's number, so that threads stamping
// at once do not contend for one counter.
std::uint64_t next_stamp() {
  static std::atomic<std::uint64_t> threads{0};
  thread_local const std::uint64_t thread = threads.fetch_add(1, std::memory_order_relaxed) << 40;
  thread_local std::uint64_t count = 0;
  return thread | ++count;
}

}  // namespace

int Placement::gpus() const {
  int total = 0;
  for (const auto& s : shares) total += s.gpus;
  return total;
}

ClusterState::ClusterState(const ClusterSpec& spec) : spec_(&spec) {
  for (const auto& pool : spec.pools) {
    free_.insert(free_.end(), pool.nodes, pool.gpus_per_node);
    gpus_per_node_.insert(gpus_per_node_.end(), pool.nodes, pool.gpus_per_node);
    free_cpus_.insert(free_cpus_.end(), pool.nodes, pool.cpus_per_node);
    free_memory_.insert(free_memory_.end(), pool.nodes, pool.memory_mib_per_node);
    pool_free_total_.push_back(pool.total_gpus());
    pool_stamp_.push_back(next_stamp());
    level_base_.push_back(static_cast<int>(free_levels_.size()));
    node_level_base_.insert(node_level_base_.end(), pool.nodes, level_base_.back());
    free_levels_.resize(free_levels_.size() + pool.gpus_per_node + 1, 0);
    free_levels_[level_base_.back() + pool.gpus_per_node] = pool.nodes;
  }
  free_total_ = spec.total_gpus();
}

std::string ClusterState::validate(const Placement& placement, const Request& request, std::span<const PoolId> allowed) const {
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
    if (free_cpus_[s.node] >= 0 && request.cpus_for(s.gpus) > free_cpus_[s.node])
      return fmt::format("node {} has {} free CPUs, {} GPUs of the job need {}", s.node, free_cpus_[s.node], s.gpus, request.cpus_for(s.gpus));
    if (free_memory_[s.node] >= 0 && request.memory_for(s.gpus) > free_memory_[s.node])
      return fmt::format("node {} has {} MiB free, {} GPUs of the job need {} MiB", s.node, free_memory_[s.node], s.gpus,
                         request.memory_for(s.gpus));
    total += s.gpus;
    previous = s.node;
  }
  if (total != request.gpus) return fmt::format("the placement gives {} GPUs, the job needs {}", total, request.gpus);
  return "";
}

void ClusterState::change(NodeId node, int delta) {
  const int gpn = gpus_per_node_[node];
  const int before = free_[node], after = before + delta;
  RLTUNE_CHECK(after >= 0 && after <= gpn, fmt::format("node {} would have {} free GPUs of {}", node, after, gpn));
  partial_nodes_ += (after > 0 && after < gpn) - (before > 0 && before < gpn);
  free_[node] = after;
  free_total_ += delta;
  --free_levels_[node_level_base_[node] + before];
  ++free_levels_[node_level_base_[node] + after];
}

bool ClusterState::freest_nodes_hold(PoolId pool, int nodes, int gpus) const {
  if (pool_free_total_[pool] < gpus) return false;
  const std::span<const int> levels = pool_free_levels(pool);
  for (int f = static_cast<int>(levels.size()) - 1; f > 0 && nodes > 0 && gpus > 0; --f) {
    const int take = std::min(nodes, levels[f]);
    nodes -= take;
    gpus -= take * f;
  }
  return gpus <= 0;
}

void ClusterState::change_other(NodeId node, int cpus, long long memory_mib) {
  if (free_cpus_[node] < 0 && free_memory_[node] < 0) return;  // not modelled
  const PoolSpec& pool = spec_->pools[spec_->pool_of(node)];
  const int cpus_after = free_cpus_[node] < 0 ? -1 : free_cpus_[node] + cpus;
  const long long memory_after = free_memory_[node] < 0 ? -1 : free_memory_[node] + memory_mib;
  RLTUNE_CHECK(cpus_after <= pool.cpus_per_node && (cpus_after >= 0 || pool.cpus_per_node < 0),
               fmt::format("node {} would have {} free CPUs of {}", node, cpus_after, pool.cpus_per_node));
  RLTUNE_CHECK(memory_after <= pool.memory_mib_per_node && (memory_after >= 0 || pool.memory_mib_per_node < 0),
               fmt::format("node {} would have {} MiB free of {}", node, memory_after, pool.memory_mib_per_node));
  free_cpus_[node] = cpus_after;
  free_memory_[node] = memory_after;
}

void ClusterState::allocate(const Placement& placement) {
  pool_stamp_[placement.pool] = next_stamp();  // first: a failed check part-way must not leave the old stamp
  const Request r = placement.request();
  for (const auto& s : placement.shares) {
    change(s.node, -s.gpus);
    change_other(s.node, -r.cpus_for(s.gpus), -r.memory_for(s.gpus));
  }
  pool_free_total_[placement.pool] -= r.gpus;
}

void ClusterState::release(const Placement& placement) {
  pool_stamp_[placement.pool] = next_stamp();
  const Request r = placement.request();
  for (const auto& s : placement.shares) {
    change(s.node, s.gpus);
    change_other(s.node, r.cpus_for(s.gpus), r.memory_for(s.gpus));
  }
  pool_free_total_[placement.pool] += r.gpus;
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
