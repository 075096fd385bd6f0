#pragma once
// What the Slurm advisor reads of a live cluster: nodes from `sinfo --json` (Slurm 22.05) or
// `scontrol show nodes --json` (23.02 on), jobs from `squeue --json`: Slurm's OpenAPI data, v0.0.38 in
// 22.05; from 23.02 (data_parser v0.0.39 on) numbers may be {"set", "infinite", "number"} objects and
// states arrays of words, both read. Parsing is strict about what the advisor relies on and throws
// SlurmError with the field at fault, so a malformed answer skips a cycle instead of producing partial
// decisions.
#include <stdexcept>
#include <string>
#include <vector>

namespace rltune::slurm {

class SlurmError : public std::runtime_error {
 public:
  explicit SlurmError(const std::string& message) : std::runtime_error(message) {}
};

struct Node {
  std::string name;
  std::string gpu_type;             // from gres "gpu:TYPE:N"; "" when untyped
  int gpus = 0, gpus_used = 0;
  int cpus = 0, cpus_used = 0;
  long long memory_mib = 0, memory_used_mib = 0;
  std::string state;                // idle, mixed, allocated, down, drained, ...
  std::vector<std::string> partitions;
  bool mixed_gpu_types = false;     // GPUs of more than one type (gres "gpu:a100:4,gpu:v100:4")
  // A node jobs can be placed on: not down, drained, draining, failing, in maintenance, powered down,
  // not responding or in error, and with GPUs of one type.
  bool usable() const;
};

struct Job {
  long long id = 0;
  std::string state;                // PENDING, RUNNING, ... (Slurm's job_state)
  int gpus = 0;                     // total GPUs requested (per node x nodes, or per job)
  int gpus_per_node = 0;            // 0 when the job asks for GPUs per job
  int nodes = 1;
  std::string gpu_type;             // "" = any
  long long submit = 0, start = 0;  // Unix seconds; start = 0 when not started
  long long time_limit_s = -1;      // -1 = none (infinite)
  std::string partition, user;
  long long priority = 0;
  std::string reason;               // state_reason
  std::string admin_comment;
  bool mixed_gpu_types = false;     // asks for GPUs of more than one type
  std::string array_tasks;          // a pending array's tasks not yet started ("0-99"); "" for a single job
  std::vector<std::string> required_nodes;  // expanded NodeList= request of a pending job
  std::vector<std::string> node_list;  // expanded, for running jobs
  std::vector<int> gpus_on_node;       // per node_list entry, for running jobs
  bool pending() const { return state == "PENDING"; }
  // Holding resources: running, or still configuring or completing.
  bool active() const { return state == "RUNNING" || state == "CONFIGURING" || state == "COMPLETING"; }
  // Held by a user or an administrator (priority 0 or a JobHeld* reason).
  bool held() const;
};

// "n[1-3,7],gpu[01-02],x" -> n1 n2 n3 n7 gpu01 gpu02 x (zero padding kept). SlurmError when malformed.
std::vector<std::string> expand_hostlist(const std::string& list);

// "gpu:v100:8(S:0-1)", "gpu:8", "gres:gpu:v100:2", "gpu:v100:8(IDX:0-7),shard:2" -> GPU type and count
// summed over the gpu entries; {"", 0} when no gpu entry; `mixed` when the entries name more than one
// type (the type is then the first's). SlurmError when the count is not a number.
struct GresGpus {
  std::string type;
  int count = 0;
  bool mixed = false;
};
GresGpus parse_gres(const std::string& gres);

// Nodes from `sinfo --json` (22.05) or `scontrol show nodes --json` (23.02 on), named `command` in errors.
std::vector<Node> parse_nodes(const std::string& nodes_json, const char* command = "sinfo --json");
// Whether `sinfo --json` answered as Slurm 23.02 on does: rows per partition and state, not nodes.
bool summarises_partitions(const std::string& sinfo_json);
std::vector<Job> parse_jobs(const std::string& squeue_json);

}  // namespace rltune::slurm
