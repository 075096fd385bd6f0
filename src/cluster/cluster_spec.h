#pragma once
// A cluster = pools of identical nodes (DESIGN.md section 3). Pools are data: nothing in rltune
// branches on a cluster's name.
#include <string>
#include <vector>

#include "core/types.h"
#include "trace/job_spec.h"

namespace rltune::cluster {

// Which jobs a pool takes. Every present key must match.
struct Accepts {
  std::vector<std::string> vc;  // empty = any VC
  int min_gpus = 0;             // inclusive
  int max_gpus = 0;             // inclusive; 0 = no limit
};

struct PoolSpec {
  std::string name;
  std::string gpu_type;
  int nodes = 0;
  int gpus_per_node = 0;
  int cpus_per_node = -1;            // -1 = not modelled
  long long memory_mib_per_node = -1;  // -1 = not modelled
  Accepts accepts;
  NodeId first_node = 0;  // global id of the pool's first node (pools are numbered in file order)

  int total_gpus() const { return nodes * gpus_per_node; }
};

struct ClusterSpec {
  std::string name;
  std::string source;  // preset name or file path
  std::vector<PoolSpec> pools;
  // How the published RLTune's environment for this cluster behaves where its three environments differ;
  // read only under --semantics reference. Its Helios environment removes each job it backfills from the
  // list it is walking, so the candidate after it is never tried (B11).
  bool reference_backfill_skips_after_start = false;
  // Its Helios environment backfills, while the agent's pick waits, from the whole queue (every VC),
  // where its baseline takes only the waiting job's VC (B11).
  bool reference_agent_backfills_every_pool = false;

  int total_gpus() const;
  int total_nodes() const;
  // Pool holding a global node id.
  PoolId pool_of(NodeId node) const;
  // "pool-index" name of a node, e.g. "vc0-3" (index within its pool, 0-based).
  std::string node_name(NodeId node) const;
};

// What a job asks of the nodes it runs on: GPUs, and CPUs and memory in total (0 = not asked). A node
// given g of the job's R GPUs must also hold ceil(cpus x g / R) CPUs and ceil(memory x g / R) MiB, where
// its pool models them: a job's CPUs and memory follow its GPUs, as with Slurm's --cpus-per-gpu.
struct Request {
  int gpus = 0;
  int cpus = 0;
  long long memory_mib = 0;
  Request(int gpus_ = 0, int cpus_ = 0, long long memory_mib_ = 0)  // implicit: a GPU count is a request
      : gpus(gpus_), cpus(cpus_), memory_mib(memory_mib_) {}
  int cpus_for(int share) const;
  long long memory_for(int share) const;
  friend bool operator==(const Request&, const Request&) = default;
};
Request request_of(const trace::JobSpec& job);  // unspecified CPUs or memory ask for none

// Free resources of one node; cpus or memory_mib < 0 = not modelled by its pool (unlimited).
struct NodeFree {
  int gpus = 0;
  int cpus = -1;
  long long memory_mib = -1;
  // The most GPUs of `r` this node can take (the share's CPUs and memory fit too); 0 = none.
  int max_share(const Request& r) const;
  // What is left after giving it `share` GPUs of `r`.
  NodeFree after(const Request& r, int share) const;
  friend bool operator==(const NodeFree&, const NodeFree&) = default;
  friend auto operator<=>(const NodeFree&, const NodeFree&) = default;
};
NodeFree empty_node(const PoolSpec& pool);
// Fewest nodes of `pool` that could hold `r` were the pool empty (ceil(R / the largest share of an
// empty node)); a value above pool.nodes means never. The node count placements aim for (SPEC 4.1 tier 1).
int fewest_nodes(const PoolSpec& pool, const Request& r);
inline bool could_hold(const PoolSpec& pool, const Request& r) { return r.gpus > 0 && fewest_nodes(pool, r) <= pool.nodes; }
// Whether the pool counts CPUs or memory at all (else only free GPUs limit what a node takes).
inline bool tracks_cpus_or_memory(const PoolSpec& pool) { return pool.cpus_per_node >= 0 || pool.memory_mib_per_node >= 0; }
// Whether the pool's CPUs or memory can limit how many of `r`'s GPUs a node takes (else its free GPUs do).
inline bool other_resources_bind(const PoolSpec& pool, const Request& r) {
  return (pool.cpus_per_node >= 0 && r.cpus > 0) || (pool.memory_mib_per_node >= 0 && r.memory_mib > 0);
}

// True when `pool` accepts `job` by its accepts keys and GPU type (ignores the pool's size).
bool accepts(const PoolSpec& pool, const trace::JobSpec& job);

// Why a job can never run on a cluster, or "" when it can. Reasons are stable machine-readable
// words followed by an explanation, e.g. "too_many_gpus: needs 16 GPUs but the largest eligible pool has 8"; no commas.
std::string admission_problem(const ClusterSpec& cluster, const trace::JobSpec& job,
                              std::vector<PoolId>& eligible_out);

// Loads a cluster from YAML text; `source` names it in errors. Throws InputError with the key path.
ClusterSpec parse_cluster(const std::string& yaml, const std::string& source);
// `name_or_path`: a preset name (see presets()) or a path to a YAML file.
ClusterSpec load_cluster(const std::string& name_or_path);
std::string preset_names();

}  // namespace rltune::cluster
