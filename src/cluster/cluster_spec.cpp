#include "cluster/cluster_spec.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <limits>
#include <set>

#include "cluster/presets.h"
#include "cluster/yaml_check.h"
#include "core/error.h"
#include "core/file.h"
#include "trace/gpu_types.h"

namespace rltune::cluster {

int ClusterSpec::total_gpus() const {
  int total = 0;
  for (const auto& p : pools) total += p.total_gpus();
  return total;
}

int ClusterSpec::total_nodes() const {
  int total = 0;
  for (const auto& p : pools) total += p.nodes;
  return total;
}

PoolId ClusterSpec::pool_of(NodeId node) const {
  for (PoolId p = 0; p < static_cast<PoolId>(pools.size()); ++p)
    if (node < pools[p].first_node + pools[p].nodes) return p;
  throw InvariantError(fmt::format("node {} is outside the cluster", node));
}

std::string ClusterSpec::node_name(NodeId node) const {
  const PoolSpec& pool = pools[pool_of(node)];
  return fmt::format("{}-{}", pool.name, node - pool.first_node);
}

namespace {

// ceil(total x share / gpus): the part of a job's CPUs or memory that goes with `share` of its GPUs.
long long part_of(long long total, int share, int gpus) {
  if (total <= 0 || share <= 0) return 0;
  if (gpus <= 0) return total;
  return (total * share + gpus - 1) / gpus;
}

// The most GPUs g with ceil(total x g / gpus) <= free: since free is an integer, that is total x g <=
// free x gpus. 128-bit because free (up to 1e12 MiB) times gpus may not fit in 64 bits.
long long most_gpus_within(long long free, long long total, int gpus) {
  if (free < 0 || total <= 0) return gpus;  // not modelled, or not asked
  return static_cast<long long>(static_cast<__int128>(free) * gpus / total);
}

}  // namespace

int Request::cpus_for(int share) const { return static_cast<int>(part_of(cpus, share, gpus)); }
long long Request::memory_for(int share) const { return part_of(memory_mib, share, gpus); }

Request request_of(const trace::JobSpec& job) {
  return {job.gpus, std::max(job.cpus, 0), std::max(job.memory_mib, 0LL)};
}

int NodeFree::max_share(const Request& r) const {
  const long long most = std::min({static_cast<long long>(gpus), static_cast<long long>(r.gpus),
                                   most_gpus_within(cpus, r.cpus, r.gpus), most_gpus_within(memory_mib, r.memory_mib, r.gpus)});
  return static_cast<int>(std::max(most, 0LL));
}

NodeFree NodeFree::after(const Request& r, int share) const {
  return {gpus - share, cpus < 0 ? cpus : cpus - r.cpus_for(share), memory_mib < 0 ? memory_mib : memory_mib - r.memory_for(share)};
}

NodeFree empty_node(const PoolSpec& pool) { return {pool.gpus_per_node, pool.cpus_per_node, pool.memory_mib_per_node}; }

int fewest_nodes(const PoolSpec& pool, const Request& r) {
  if (r.gpus <= 0) return 0;
  const int share = empty_node(pool).max_share(r);
  if (share <= 0) return std::numeric_limits<int>::max();
  return (r.gpus + share - 1) / share;
}

bool accepts(const PoolSpec& pool, const trace::JobSpec& job) {
  const Accepts& a = pool.accepts;
  if (!a.vc.empty() && std::find(a.vc.begin(), a.vc.end(), job.vc) == a.vc.end()) return false;
  if (job.gpus < a.min_gpus) return false;
  if (a.max_gpus > 0 && job.gpus > a.max_gpus) return false;
  if (!job.gpu_types.empty() && std::none_of(job.gpu_types.begin(), job.gpu_types.end(),
                                             [&](const std::string& type) { return trace::same_gpu_type(type, pool.gpu_type); }))
    return false;
  return true;
}

std::string admission_problem(const ClusterSpec& cluster, const trace::JobSpec& job, std::vector<PoolId>& eligible) {
  eligible.clear();
  if (job.gpus <= 0) return "zero_gpus: the job requests no GPU";
  if (job.duration < 0) return fmt::format("negative_duration: duration is {} s", job.duration);
  const Request r = request_of(job);
  int largest = 0, most_cpus = 0;
  long long most_memory = 0;
  bool any = false, gpus_fit = false, cpus_fit = false;
  for (PoolId p = 0; p < static_cast<PoolId>(cluster.pools.size()); ++p) {
    const PoolSpec& pool = cluster.pools[p];
    if (!accepts(pool, job)) continue;
    any = true;
    largest = std::max(largest, pool.total_gpus());
    most_cpus = std::max(most_cpus, pool.cpus_per_node);
    most_memory = std::max(most_memory, pool.memory_mib_per_node);
    if (could_hold(pool, r)) eligible.push_back(p);
    gpus_fit = gpus_fit || could_hold(pool, Request(r.gpus));
    cpus_fit = cpus_fit || could_hold(pool, Request(r.gpus, r.cpus));
  }
  if (!any) {
    std::string what = job.vc.empty() ? "no vc" : "vc '" + job.vc + "'";
    what += job.gpu_types.empty() ? " and any GPU type" : " and GPU type " + trace::join_gpu_types(job.gpu_types);
    return fmt::format("no_eligible_pool: no pool accepts {} GPUs with {}", job.gpus, what);
  }
  if (!eligible.empty()) return "";
  if (!gpus_fit) return fmt::format("too_many_gpus: needs {} GPUs but the largest eligible pool has {}", job.gpus, largest);
  // CPUs and memory follow GPUs (see Request), so a node holding g GPUs must hold their part too.
  if (!cpus_fit)
    return fmt::format("too_many_cpus: needs {} CPUs with {} GPUs but no eligible pool can hold them (at most {} CPUs per node)",
                       job.cpus, job.gpus, most_cpus);
  return fmt::format("too_much_memory: needs {} MiB with {} GPUs but no eligible pool can hold it (at most {} MiB per node)",
                     job.memory_mib, job.gpus, most_memory);
}

namespace {

// Bounds that keep every count and total inside an int.
constexpr long long kMaxNodes = 1'000'000, kMaxGpusPerNode = 1024, kMaxCpusPerNode = 1'000'000,
                    kMaxMemoryMib = 1'000'000'000'000, kMaxClusterGpus = 1'000'000'000;


}  // namespace

ClusterSpec parse_cluster(const std::string& yaml, const std::string& source) {
  const YamlCheck ctx{source};
  const YAML::Node root = ctx.load(yaml);
  if (!root || root.IsNull()) throw InputError(source + ": the cluster file is empty");
  ctx.only_keys(root, "", {"name", "pools", "reference"});
  ClusterSpec spec;
  spec.source = source;
  spec.name = root["name"] ? ctx.name(root["name"], "name") : source;
  const YAML::Node pools = root["pools"];
  if (!pools || !pools.IsSequence() || pools.size() == 0) ctx.fail(pools ? pools : root, "pools", "must be a non-empty list of pools");
  std::set<std::string> names;
  NodeId next_node = 0;
  for (std::size_t i = 0; i < pools.size(); ++i) {
    const YAML::Node p = pools[i];
    const std::string path = fmt::format("pools[{}]", i);
    ctx.only_keys(p, path, {"name", "gpu_type", "nodes", "gpus_per_node", "cpus_per_node", "memory_mib_per_node", "accepts"});
    for (const char* required : {"name", "nodes", "gpus_per_node"})
      if (!p[required]) ctx.fail(p, path + "." + required, "is required");
    PoolSpec pool;
    pool.name = ctx.name(p["name"], path + ".name");
    if (!names.insert(pool.name).second) ctx.fail(p["name"], path + ".name", "duplicate pool name '" + pool.name + "'");
    if (p["gpu_type"]) pool.gpu_type = trace::normalize_gpu_type(ctx.name(p["gpu_type"], path + ".gpu_type"));
    // '|' separates a job's alternative types; a pool of "V100|T4" would match no job.
    if (pool.gpu_type.find('|') != std::string::npos)
      ctx.fail(p["gpu_type"], path + ".gpu_type", "names one GPU type ('|' lists a job's alternatives); make a pool per type");
    for (const PoolSpec& other : spec.pools)  // types match in any case: two spellings would be one type, counted as two
      if (other.gpu_type != pool.gpu_type && trace::same_gpu_type(other.gpu_type, pool.gpu_type))
        ctx.fail(p["gpu_type"], path + ".gpu_type",
                 fmt::format("'{}' is pool {}'s '{}' in other letter case: write one type the same way", pool.gpu_type, other.name,
                             other.gpu_type));
    pool.nodes = static_cast<int>(ctx.integer(p["nodes"], path + ".nodes", 1, kMaxNodes));
    pool.gpus_per_node = static_cast<int>(ctx.integer(p["gpus_per_node"], path + ".gpus_per_node", 1, kMaxGpusPerNode));
    if (p["cpus_per_node"]) pool.cpus_per_node = static_cast<int>(ctx.integer(p["cpus_per_node"], path + ".cpus_per_node", 1, kMaxCpusPerNode));
    if (p["memory_mib_per_node"])
      pool.memory_mib_per_node = ctx.integer(p["memory_mib_per_node"], path + ".memory_mib_per_node", 1, kMaxMemoryMib);
    if (const YAML::Node a = p["accepts"]) {
      ctx.only_keys(a, path + ".accepts", {"vc", "min_gpus", "max_gpus"});
      if (const YAML::Node vc = a["vc"]) {
        if (vc.IsScalar()) pool.accepts.vc.push_back(vc.as<std::string>());
        else if (vc.IsSequence() && vc.size() == 0)  // read as "no restriction", the opposite of what it says
          ctx.fail(vc, path + ".accepts.vc", "is an empty list: leave vc out to accept every VC");
        else if (vc.IsSequence())
          for (std::size_t k = 0; k < vc.size(); ++k) pool.accepts.vc.push_back(ctx.text(vc[k], path + ".accepts.vc"));
        else ctx.fail(vc, path + ".accepts.vc", "must be a string or a list of strings");
      }
      if (a["min_gpus"]) pool.accepts.min_gpus = static_cast<int>(ctx.integer(a["min_gpus"], path + ".accepts.min_gpus", 0, kMaxGpusPerNode * kMaxNodes));
      if (a["max_gpus"]) pool.accepts.max_gpus = static_cast<int>(ctx.integer(a["max_gpus"], path + ".accepts.max_gpus", 1, kMaxGpusPerNode * kMaxNodes));
      if (a["min_gpus"] && a["max_gpus"] && pool.accepts.min_gpus > pool.accepts.max_gpus)
        ctx.fail(a["min_gpus"], path + ".accepts.min_gpus",
                 fmt::format("is more than max_gpus ({} > {}): the pool would accept no job", pool.accepts.min_gpus,
                             pool.accepts.max_gpus));
      const long long pool_gpus = static_cast<long long>(pool.nodes) * pool.gpus_per_node;
      if (a["min_gpus"] && pool.accepts.min_gpus > pool_gpus)
        ctx.fail(a["min_gpus"], path + ".accepts.min_gpus",
                 fmt::format("is more than the pool's {} GPUs ({} nodes x {}): the pool would accept no job", pool_gpus, pool.nodes,
                             pool.gpus_per_node));
    }
    pool.first_node = next_node;
    next_node += pool.nodes;
    if (next_node > kMaxNodes) ctx.fail(p, path + ".nodes", fmt::format("the cluster has more than {} nodes", kMaxNodes));
    if (static_cast<long long>(spec.total_gpus()) + static_cast<long long>(pool.nodes) * pool.gpus_per_node > kMaxClusterGpus)
      ctx.fail(p, path, fmt::format("the cluster has more than {} GPUs", kMaxClusterGpus));
    spec.pools.push_back(std::move(pool));
  }
  if (const YAML::Node reference = root["reference"]) {
    ctx.only_keys(reference, "reference", {"backfill_skips_after_start", "agent_backfills_every_pool"});
    for (const auto& [key, value] : {std::pair{"backfill_skips_after_start", &spec.reference_backfill_skips_after_start},
                                     std::pair{"agent_backfills_every_pool", &spec.reference_agent_backfills_every_pool}})
      if (const YAML::Node flag = reference[key])
        if (!flag.IsScalar() || !YAML::convert<bool>::decode(flag, *value))
          ctx.fail(flag, std::string("reference.") + key, "must be true or false");
  }
  return spec;
}

std::string preset_names() {
  std::string names;
  for (const auto& p : presets()) names += (names.empty() ? "" : ", ") + p.name;
  return names;
}

ClusterSpec load_cluster(const std::string& name_or_path) {
  for (const auto& p : presets())
    if (p.name == name_or_path) return parse_cluster(p.yaml, p.name);
  const auto text = read_file(name_or_path);
  if (!text)
    throw InputError(fmt::format("--cluster '{}': neither a preset ({}) nor a readable file", name_or_path, preset_names()));
  return parse_cluster(*text, name_or_path);
}

}  // namespace rltune::cluster
