#pragma once
// The Slurm advisor's decision: from one reading of a live cluster, the order in which the scheduler
// profile would serve the pending GPU jobs, and (with placement) the nodes of the jobs it would start
// now; as the `scontrol` commands that tell Slurm so. A pure function of its inputs, tested on
// recorded `sinfo --json` / `squeue --json` answers.
//
// Rules (documented in the README):
// - Only pending jobs with a GPU request, in `partition` when one is given, are reordered. Running
//   jobs are never touched; they only hold resources in the view.
// - Held jobs (priority 0 or a JobHeld* reason) and jobs an administrator pinned, with
//   AdminComment=rltune=skip or (when admin_priority > 0) a priority of at least admin_priority, are
//   left alone and are not in the view.
// - The order becomes priorities in the band [base, base + kBandWidth), strictly decreasing along it
//   (band_priorities): jobs whose priorities already fit the order keep them, so re-applying changes
//   nothing and a job arriving or leaving costs about one command, not one per pending job.
// - With placement, each job the profile starts now gets `NodeList=` its nodes, unless its user asked
//   for nodes. A NodeList the advisor set earlier (`pins`) that no longer matches a placement
//   of this cycle is cleared (`NodeList=`), so a job is never left pinned to nodes that went away; also
//   without placement (an earlier run, whose record the loop keeps in its state file, may have placed).
// - Nodes map onto pools by GPU type (one pool per type and GPUs per node, named like the type; split
//   by group of partitions, partitions that share a node, when there are several groups, and accepting
//   that group's partitions), or by a cluster map (cluster YAML; a pool takes the nodes of its gpu_type
//   in name order).
// - Left alone too: jobs waiting on something of their own (a dependency, a begin time, a QOS or
//   account limit), a pending array's tasks, and jobs asking for GPUs of several types.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "policy/profile.h"
#include "sim/engine.h"
#include "slurm/state.h"

namespace rltune::slurm {

// The priorities the advisor gives: [priority_base, priority_base + kBandWidth).
constexpr long long kBandWidth = 1'000'000;

// The NodeLists the advisor may have left on each job, by job: sorted node names, more than one list only
// while a command's outcome is unknown. A job holding one of them is the advisor's to change.
using Pins = std::map<long long, std::vector<std::vector<std::string>>>;
// Adds `nodes` (sorted) to the job's pins, once.
void add_pin(Pins& pins, long long job, std::vector<std::string> nodes);

struct AdvisorOptions {
  policy::ProfileOptions profile;       // priority policy, placement, blocking, backfill
  // Estimates = time limits, where Slurm kills a job (after its grace time).
  sim::EngineOptions engine{.runtime = sim::RuntimeKnowledge::requested, .killed_at_limit = true};
  bool placement = false;               // also choose nodes for the jobs that can start now
  std::string partition;                // "" = every partition
  long long priority_base = 100000;
  long long admin_priority = 0;         // > 0: pending jobs with at least this priority are pinned
  long long default_runtime_s = 86400;  // estimate of a job without a time limit
  const cluster::ClusterSpec* cluster_map = nullptr;  // nullptr = one pool per GPU type
  // NodeLists this advisor set in earlier cycles and runs; nullptr = none.
  const Pins* pins = nullptr;
};

struct Command {
  long long job = 0;
  std::vector<std::string> argv;  // {"scontrol", "update", "JobId=12", "Priority=100004"}
  std::string why;
};

struct Decision {
  long long now = 0;
  std::vector<long long> order;     // managed pending jobs, first = served first
  std::vector<Command> commands;    // what to apply, priorities first
  std::size_t left_alone = 0;       // pending jobs held, pinned, of other partitions or without GPUs
  std::string cluster;              // pools of the view, e.g. "v100: 4 x 8"
  // The NodeList of each job placed now (sorted node names), set by `commands` or already held.
  std::map<long long, std::vector<std::string>> node_lists_set;
};

// Priorities for jobs in the order they are to be served, whose priorities are now `current`: strictly
// decreasing, in [base, base + kBandWidth), with as many as possible left as they are (the longest run
// of jobs whose priorities already fit the order with room for the jobs between them). The others get
// values spread evenly between their kept neighbours (or the band's ends), which leaves room for the
// next arrivals. SlurmError past kBandWidth jobs.
std::vector<long long> band_priorities(const std::vector<long long>& current, long long base);

// The pins once `d`'s commands have run: a NodeList set now replaces what the job had, one whose command
// was not run (`not_run`) leaves it as it was, and one whose command did not succeed (`unknown`: an error
// or no answer, after which Slurm may still have applied it) adds to it; a clear that went through
// removes it. A job keeps
// its pins while `jobs` lists it (a running job may be requeued with its NodeList), unless it is pending
// and holds none of them (cleared, or changed by someone else).
Pins pins_after(const Pins& before, const Decision& d, const std::vector<Job>& jobs, const std::set<long long>& not_run,
                const std::set<long long>& unknown);

// The view's cluster: pools from the cluster map, or by GPU type and group of partitions; `node_names[id]` =
// Slurm node name.
cluster::ClusterSpec cluster_of(const std::vector<Node>& nodes, const cluster::ClusterSpec* cluster_map,
                                std::vector<std::string>& node_names);

// SlurmError when the reading is inconsistent (a running job on an unknown node, more GPUs used than exist).
Decision decide(const std::vector<Node>& nodes, const std::vector<Job>& jobs, long long now, const AdvisorOptions& options);

}  // namespace rltune::slurm
