#include "slurm/advisor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/error.h"
#include "policy/registry.h"

namespace rltune::slurm {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool in_partition(const Node& n, const std::string& partition) {
  return partition.empty() || std::find(n.partitions.begin(), n.partitions.end(), partition) != n.partitions.end();
}

// Records which jobs the profile starts now.
class StartRecorder final : public sim::Observer {
 public:
  std::vector<JobIndex> started;
  void on_start(Seconds, JobIndex job) override { started.push_back(job); }
};

// Per node, the sorted partitions of its group: partitions that share a node, transitively.
std::vector<std::vector<std::string>> partition_groups(const std::vector<Node>& nodes) {
  std::map<std::string, std::string> parent;  // union-find over partition names
  const auto root = [&](std::string p) {
    while (parent.at(p) != p) p = parent.at(p);
    return p;
  };
  for (const Node& n : nodes)
    for (const std::string& p : n.partitions) parent.emplace(p, p);
  for (const Node& n : nodes)
    for (std::size_t k = 1; k < n.partitions.size(); ++k) parent[root(n.partitions[k])] = root(n.partitions[0]);
  std::map<std::string, std::vector<std::string>> members;
  for (const auto& [p, up] : parent) members[root(p)].push_back(p);
  std::vector<std::vector<std::string>> groups;
  for (const Node& n : nodes) groups.push_back(n.partitions.empty() ? std::vector<std::string>{} : members[root(n.partitions[0])]);
  return groups;
}

}  // namespace

cluster::ClusterSpec cluster_of(const std::vector<Node>& nodes, const cluster::ClusterSpec* cluster_map,
                                std::vector<std::string>& node_names) {
  cluster::ClusterSpec spec;
  spec.name = cluster_map ? cluster_map->name : "slurm";
  spec.source = cluster_map ? cluster_map->source : "slurm";
  node_names.clear();
  const auto add_pool = [&](cluster::PoolSpec pool, const std::vector<const Node*>& members) {
    if (members.empty()) return;
    pool.nodes = static_cast<int>(members.size());
    pool.first_node = static_cast<NodeId>(node_names.size());
    for (const Node* n : members) node_names.push_back(n->name);
    spec.pools.push_back(std::move(pool));
  };
  if (cluster_map) {
    std::vector<bool> taken(nodes.size(), false);
    for (const cluster::PoolSpec& p : cluster_map->pools) {
      std::vector<const Node*> members;
      for (std::size_t i = 0; i < nodes.size() && static_cast<int>(members.size()) < p.nodes; ++i)
        if (!taken[i] && lower(nodes[i].gpu_type) == lower(p.gpu_type) && nodes[i].gpus == p.gpus_per_node) {
          taken[i] = true;
          members.push_back(&nodes[i]);
        }
      cluster::PoolSpec pool = p;
      if (!members.empty()) pool.gpu_type = members.front()->gpu_type;  // Slurm's spelling, as jobs ask for it
      add_pool(pool, members);
    }
  } else {
    // Pools by shape (GPU type, GPUs per node) and by group of partitions: partitions that share a node
    // form one group, and a pool accepts its group's partitions (a job's spec vc), so that no job is
    // placed outside its partition while a job may still span the nodes of overlapping partitions.
    const auto groups = partition_groups(nodes);
    const bool by_partition = std::set<std::vector<std::string>>(groups.begin(), groups.end()).size() > 1;
    using Shape = std::tuple<std::string, int, std::vector<std::string>>;  // sorted
    std::map<Shape, std::vector<const Node*>> shapes;
    std::map<std::pair<std::string, std::vector<std::string>>, int> sizes_of_type;  // GPUs-per-node counts, per partitions
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      if (by_partition && groups[i].empty()) continue;  // in no partition: no job can run there
      const std::vector<std::string> partitions = by_partition ? groups[i] : std::vector<std::string>{};
      auto& members = shapes[{n.gpu_type, n.gpus, partitions}];
      if (members.empty()) ++sizes_of_type[{n.gpu_type, partitions}];
      members.push_back(&n);
    }
    for (const auto& [shape, members] : shapes) {
      const auto& [gpu_type, gpus, partitions] = shape;
      cluster::PoolSpec pool;
      const std::string type = gpu_type.empty() ? "gpu" : gpu_type;
      pool.name = sizes_of_type[{gpu_type, partitions}] > 1 ? fmt::format("{}-{}", type, gpus) : type;
      if (by_partition) pool.name += fmt::format("@{}", fmt::join(partitions, "+"));
      pool.gpu_type = gpu_type;
      pool.gpus_per_node = gpus;
      pool.accepts.vc = partitions;
      add_pool(pool, members);
    }
  }
  return spec;
}

namespace {

// The cluster the advisor decides on: the usable GPU nodes of the partition, as pools.
struct ClusterView {
  std::vector<Node> nodes;
  std::vector<std::string> node_names;  // by node id
  cluster::ClusterSpec cluster;
  std::map<std::string, NodeId> node_id;
  std::map<std::string, const Node*> node_by_name;
};

ClusterView view_of(const std::vector<Node>& all_nodes, const AdvisorOptions& o) {
  ClusterView v;
  for (const Node& n : all_nodes)
    if (n.usable() && n.gpus > 0 && in_partition(n, o.partition)) v.nodes.push_back(n);
  v.cluster = cluster_of(v.nodes, o.cluster_map, v.node_names);
  if (v.cluster.pools.empty()) throw SlurmError("no usable GPU node" + (o.partition.empty() ? "" : " in partition " + o.partition));
  for (std::size_t i = 0; i < v.node_names.size(); ++i) v.node_id[v.node_names[i]] = static_cast<NodeId>(i);
  for (const Node& n : v.nodes) v.node_by_name[n.name] = &n;
  return v;
}

// A job of the view: an active job on view nodes (it holds GPUs), a managed pending job, or GPUs in use
// that no listed job explains.
struct Entry {
  trace::JobSpec spec;
  const Job* job = nullptr;  // nullptr: GPUs in use that no listed job explains
  cluster::Placement placement;
};

// Where an active job runs in the view; nullopt when it holds no GPU there (or spans pools: then its
// GPUs count as unexplained).
std::optional<cluster::Placement> placement_in(const ClusterView& v, const Job& j) {
  if (j.gpus <= 0 || j.node_list.empty()) return std::nullopt;
  cluster::Placement p;
  for (std::size_t k = 0; k < j.node_list.size(); ++k) {
    const auto it = v.node_id.find(j.node_list[k]);
    if (it == v.node_id.end()) return std::nullopt;
    const PoolId pool = v.cluster.pool_of(it->second);
    if (p.pool >= 0 && p.pool != pool) return std::nullopt;
    p.pool = pool;
    if (j.gpus_on_node[k] > 0) p.shares.push_back({it->second, j.gpus_on_node[k]});
  }
  if (p.shares.empty()) return std::nullopt;
  // Node ids follow name order, the host list may not (n9,n10): placements list nodes by id.
  std::sort(p.shares.begin(), p.shares.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  return p;
}

// Pinned by an administrator: AdminComment=rltune=skip, or a priority at --respect-admin-priority or above.
bool pinned_by_admin(const Job& j, const AdvisorOptions& o) {
  return j.admin_comment.find("rltune=skip") != std::string::npos || (o.admin_priority > 0 && j.priority >= o.admin_priority);
}

// Waiting on something of its own that no placement changes (a dependency, a begin time, a QOS or
// account limit, a limit of its partition): in the plan it would take GPUs it cannot use now. Its turn
// comes once it waits for resources. (A down partition or node is the cluster's: those jobs stay.)
bool waits_on_itself(const Job& j) {
  for (const char* reason : {"Dependency", "BeginTime", "QOS", "Assoc", "JobArrayTaskLimit", "PartitionTimeLimit", "PartitionNodeLimit",
                             "Invalid", "AccountNotAllowed", "BadConstraints"})
    if (j.reason.starts_with(reason)) return true;
  return false;
}

// The view's jobs in submit order; counts the pending jobs left alone (held, pinned, other partitions,
// no GPUs) in `left_alone`.
std::vector<Entry> entries_of(const ClusterView& v, const std::vector<Job>& jobs, long long now, const AdvisorOptions& o,
                              std::size_t& left_alone) {
  std::vector<Entry> entries;
  // What the simulator knows of a listed job: its time limit is the runtime estimate.
  const auto entry = [&](const Job& j) {
    Entry e;
    e.spec.id = std::to_string(j.id);
    e.spec.submit = std::min(j.submit, now);
    e.spec.duration = std::max<long long>(1, j.time_limit_s > 0 ? j.time_limit_s : o.default_runtime_s);
    e.spec.gpus = j.gpus;
    e.spec.requested_time = j.time_limit_s;
    e.spec.user = j.user;
    e.spec.vc = j.partition.substr(0, j.partition.find(','));  // of "a,b", a: placed in a's group of partitions
    if (!j.gpu_type.empty()) e.spec.gpu_types = {j.gpu_type};
    e.job = &j;
    return e;
  };
  std::map<std::string, int> explained;  // GPUs per node held by listed jobs
  for (const Job& j : jobs) {
    if (j.active()) {
      const std::optional<cluster::Placement> p = placement_in(v, j);
      if (!p) continue;
      Entry e = entry(j);
      e.spec.gpus = p->gpus();  // the GPUs it holds in the view
      e.placement = *p;
      for (const auto& s : p->shares) explained[v.node_names[static_cast<std::size_t>(s.node)]] += s.gpus;
      entries.push_back(std::move(e));
    } else if (j.pending()) {
      const bool pinned = pinned_by_admin(j, o);
      const bool eligible = !waits_on_itself(j);
      // An array's pending tasks are one record: a NodeList on it would pin every task to the same nodes.
      const bool one_job = j.array_tasks.empty() && !j.mixed_gpu_types;
      const bool managed = j.gpus > 0 && !j.held() && !pinned && eligible && one_job && (o.partition.empty() || j.partition == o.partition);
      if (!managed) {
        ++left_alone;
        continue;
      }
      entries.push_back(entry(j));
    }
  }
  // GPUs in use that no listed job explains (hidden jobs, jobs across pools): held until a day from now.
  // Fewer in use than jobs explain is normal between the two readings (a job completing or starting).
  for (const auto& [name, id] : v.node_id) {
    const int unexplained = v.node_by_name.at(name)->gpus_used - explained[name];
    if (unexplained <= 0) continue;
    Entry e;
    e.spec.id = "in-use-on-" + name;
    e.spec.submit = now;
    e.spec.duration = o.default_runtime_s;
    e.spec.gpus = unexplained;
    e.placement.pool = v.cluster.pool_of(id);
    e.placement.shares.push_back({id, unexplained});
    entries.push_back(std::move(e));
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.spec.submit < b.spec.submit; });
  return entries;
}

std::string joined(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ",") + n;
  return list;
}

std::vector<std::string> sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

// Whether the job holds (`current`, sorted) a NodeList the advisor may have set.
bool held_pin(const Pins* pins, long long job, const std::vector<std::string>& current) {
  if (!pins || current.empty()) return false;
  const auto it = pins->find(job);
  return it != pins->end() && std::find(it->second.begin(), it->second.end(), current) != it->second.end();
}

// NodeList commands for the jobs the profile starts now.
void place(const ClusterView& v, const std::vector<Entry>& entries, sim::Engine& engine, policy::ProfileScheduler& scheduler,
           const AdvisorOptions& o, Decision& d) {
  StartRecorder recorder;
  engine.add_observer(&recorder);
  scheduler.decide(engine);
  engine.remove_observer(&recorder);
  for (const JobIndex j : recorder.started) {
    const Job& job = *entries[static_cast<std::size_t>(j)].job;
    // GPUs per node on several nodes: the plan places GPUs, not that shape, so its nodes may not fit it.
    if (job.nodes > 1 && job.gpus_per_node > 0) continue;
    std::vector<std::string> nodes;
    for (const auto& s : engine.job(j).placement.shares) nodes.push_back(v.node_names[static_cast<std::size_t>(s.node)]);
    std::sort(nodes.begin(), nodes.end());
    const std::vector<std::string> current = sorted(job.required_nodes);
    const bool ours = held_pin(o.pins, job.id, current);
    if (!current.empty() && !ours) continue;  // the user chose nodes
    d.node_lists_set[job.id] = nodes;
    if (current == nodes) continue;  // already asked for
    d.commands.push_back({job.id,
                          {"scontrol", "update", fmt::format("JobId={}", job.id), "NodeList=" + joined(nodes)},
                          fmt::format("{} starts it now on {}", o.profile.placement, joined(nodes))});
  }
}

// Clears the NodeLists set earlier for jobs that are not placed now (all of them without placement),
// while the jobs still hold what the advisor set. Held and administrator-pinned jobs are left alone;
// their pins stay for when they are released.
void clear_stale(const std::map<long long, const Job*>& by_id, const AdvisorOptions& o, Decision& d) {
  if (!o.pins) return;
  for (const auto& [id, lists] : *o.pins) {
    const auto it = by_id.find(id);
    if (d.node_lists_set.count(id) || it == by_id.end() || !it->second->pending() || it->second->held() || pinned_by_admin(*it->second, o))
      continue;
    const std::vector<std::string> current = sorted(it->second->required_nodes);
    if (current.empty() || !held_pin(o.pins, id, current)) continue;  // nothing of ours, or changed by someone else since
    d.commands.push_back({id, {"scontrol", "update", fmt::format("JobId={}", id), "NodeList="},
                          fmt::format("no longer placed on {} this cycle", joined(current))});
  }
}

// Jobs [from, to) get values spread evenly in the open interval (below, above), which has room for them.
void spread(std::vector<long long>& q, long long from, long long to, long long above, long long below) {
  const long long m = to - from, gap = above - below;
  for (long long k = 1; k <= m; ++k) q[static_cast<std::size_t>(from + k - 1)] = above - k * gap / (m + 1);
}

}  // namespace

std::vector<long long> band_priorities(const std::vector<long long>& current, long long base) {
  const auto n = static_cast<long long>(current.size());
  if (n > kBandWidth) throw SlurmError(fmt::format("{} pending jobs to order: more than the band's {} priorities", n, kBandWidth));
  const long long lo = base, hi = base + kBandWidth - 1;
  // The gap a job gets when jobs are (re)numbered: a quarter of the band's share per job, so that new
  // jobs find room between and around them for a long while.
  const long long stride = std::max(1LL, kBandWidth / (4 * (n + 1)));
  std::vector<long long> q(current.size());
  // The priority of job i, and the band's ends past the jobs.
  const auto at = [&](long long i) { return i < 0 ? hi + 1 : i >= n ? lo - 1 : q[static_cast<std::size_t>(i)]; };

  // 1. Keep what fits. Jobs i < k both keep their priorities when p[i] - p[k] >= k - i (room for the jobs
  // between), that is when r = p + position does not increase from i to k: the kept jobs are a longest
  // non-increasing run of r, among the jobs whose priorities leave room for the jobs before and after.
  std::vector<long long> tail_r;                            // tail_r[k]: the largest last r of a run of length k + 1
  std::vector<long long> tail_job;                          // and its job
  std::vector<long long> before(current.size(), -1);        // the kept job before each, in its run
  for (long long i = 0; i < n; ++i) {
    const long long p = current[static_cast<std::size_t>(i)];
    if (p < lo + (n - 1 - i) || p > hi - i) continue;
    const long long r = p + i;
    const auto k = static_cast<std::size_t>(std::upper_bound(tail_r.begin(), tail_r.end(), r, std::greater<>()) - tail_r.begin());
    if (k > 0) before[static_cast<std::size_t>(i)] = tail_job[k - 1];
    if (k == tail_r.size()) {
      tail_r.push_back(r);
      tail_job.push_back(i);
    } else {
      tail_r[k] = r;
      tail_job[k] = i;
    }
  }
  std::vector<long long> kept;  // in order
  for (long long i = tail_job.empty() ? -1 : tail_job.back(); i >= 0; i = before[static_cast<std::size_t>(i)]) kept.push_back(i);
  std::reverse(kept.begin(), kept.end());
  for (const long long i : kept) q[static_cast<std::size_t>(i)] = current[static_cast<std::size_t>(i)];

  // 2. The others: evenly between kept neighbours; above the first and below the last, a stride apart
  // (less when the band's end is nearer); with none kept, a stride apart around the band's middle.
  const auto centre = [&] {
    const long long top = lo + kBandWidth / 2 + stride * (n - 1) / 2;
    for (long long i = 0; i < n; ++i) q[static_cast<std::size_t>(i)] = top - i * stride;
  };
  if (kept.empty()) {
    centre();
  } else {
    for (std::size_t k = 1; k < kept.size(); ++k) spread(q, kept[k - 1] + 1, kept[k], at(kept[k - 1]), at(kept[k]));
    const long long first = kept.front(), last = kept.back();
    const long long up = std::min(stride, (hi + 1 - at(first)) / (first + 1)), down = std::min(stride, (at(last) - (lo - 1)) / (n - last));
    for (long long i = 0; i < first; ++i) q[static_cast<std::size_t>(i)] = at(first) + (first - i) * up;
    for (long long i = last + 1; i < n; ++i) q[static_cast<std::size_t>(i)] = at(last) - (i - last) * down;
  }

  // 3. Where no room is left for a job to come. At the band's end (jobs served from the front while
  // others join at the end move the order down the band): all of them around the middle again. Between
  // two jobs one apart: the smallest window around them, doubling, that is sparse enough is spread out
  // (list labelling). Each renumbering pays for many arrivals, where keeping only what fits would
  // renumber a few jobs at every arrival there.
  if (n > 0 && (at(0) == hi || at(n - 1) == lo)) centre();
  bool spread_all = false;
  for (long long i = 1; i < n && !spread_all; ++i) {  // the gap above job i
    if (at(i - 1) - at(i) >= 2) continue;
    for (long long radius = 1;; radius *= 2) {
      const long long from = std::max(0LL, i - radius), to = std::min(n, i + radius);
      const long long above = at(from - 1), below = at(to);
      // Small windows may be denser: a window of all n jobs needs a stride per job, of one job 2.
      const long long jobs = to - from;
      const double level = std::log2(static_cast<double>(jobs + 1)) / std::log2(static_cast<double>(n + 1));
      const long long need = std::max(2LL, static_cast<long long>(std::pow(static_cast<double>(stride), level)));
      if ((above - below) >= (jobs + 1) * need || (from == 0 && to == n)) {
        spread(q, from, to, above, below);
        spread_all = from == 0 && to == n;  // as even as the band allows (past kBandWidth / 2 jobs, gaps of 1 remain)
        break;
      }
    }
  }
  return q;
}

void add_pin(Pins& pins, long long job, std::vector<std::string> nodes) {
  std::sort(nodes.begin(), nodes.end());
  auto& lists = pins[job];
  if (std::find(lists.begin(), lists.end(), nodes) == lists.end()) lists.push_back(std::move(nodes));
}

Pins pins_after(const Pins& before, const Decision& d, const std::vector<Job>& jobs, const std::set<long long>& not_run,
                const std::set<long long>& unknown) {
  std::map<long long, const Job*> by_id;
  for (const Job& j : jobs) by_id[j.id] = &j;
  Pins after;
  for (const auto& [id, lists] : before)
    if (by_id.count(id)) after[id] = lists;  // gone from squeue: done with
  for (const auto& [id, nodes] : d.node_lists_set) {
    if (not_run.count(id)) continue;  // the job holds what it held
    if (!unknown.count(id)) after.erase(id);
    add_pin(after, id, nodes);
  }
  for (const Command& c : d.commands)
    if (c.argv.size() > 3 && c.argv[3] == "NodeList=" && !not_run.count(c.job) && !unknown.count(c.job)) after.erase(c.job);
  // A pending job that holds none of its pins: cleared, or changed by someone else.
  for (auto it = after.begin(); it != after.end();) {
    const Job& job = *by_id.at(it->first);
    const bool placed_now = d.node_lists_set.count(it->first) > 0;
    if (!placed_now && job.pending() && !held_pin(&after, it->first, sorted(job.required_nodes))) it = after.erase(it);
    else ++it;
  }
  return after;
}

Decision decide(const std::vector<Node>& all_nodes, const std::vector<Job>& jobs, long long now, const AdvisorOptions& o) {
  Decision d;
  d.now = now;
  const ClusterView v = view_of(all_nodes, o);
  for (const auto& p : v.cluster.pools) d.cluster += fmt::format("{}{}: {} x {}", d.cluster.empty() ? "" : ", ", p.name, p.nodes, p.gpus_per_node);
  const std::vector<Entry> entries = entries_of(v, jobs, now, o, d.left_alone);

  std::vector<trace::JobSpec> specs;
  for (const Entry& e : entries) specs.push_back(e.spec);
  sim::Engine engine(v.cluster, specs, o.engine);
  std::vector<sim::Engine::Running> running;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (!entries[i].placement.shares.empty())
      running.push_back({static_cast<JobIndex>(i), entries[i].placement, entries[i].job ? std::min(entries[i].job->start, now) : now});
  try {
    engine.resume(now, running);
  } catch (const InputError& e) {
    throw SlurmError(std::string("the reading is inconsistent: ") + e.what());
  }

  auto scheduler = policy::make_profile(o.profile);
  scheduler->begin_run(engine);
  for (const JobIndex j : scheduler->picker().order(sim::View(engine)))
    if (engine.job(j).state == sim::JobState::queued) d.order.push_back(entries[static_cast<std::size_t>(j)].job->id);
  for (std::size_t i = 0; i < entries.size(); ++i)  // pending jobs the view can never run: not reordered
    if (engine.job(static_cast<JobIndex>(i)).state == sim::JobState::rejected) ++d.left_alone;

  std::map<long long, const Job*> by_id;
  for (const Job& j : jobs) by_id[j.id] = &j;
  std::vector<long long> current;
  for (const long long id : d.order) current.push_back(by_id.at(id)->priority);
  const std::vector<long long> priorities = band_priorities(current, o.priority_base);
  for (std::size_t i = 0; i < d.order.size(); ++i)
    if (current[i] != priorities[i])
      d.commands.push_back({d.order[i],
                            {"scontrol", "update", fmt::format("JobId={}", d.order[i]), fmt::format("Priority={}", priorities[i])},
                            fmt::format("{} puts it at position {} of {}", o.profile.name(), i + 1, d.order.size())});
  if (o.placement) place(v, entries, engine, *scheduler, o, d);
  clear_stale(by_id, o, d);  // also without placement: a run before this one may have placed
  return d;
}

}  // namespace rltune::slurm
