#pragma once
// The workload generator: jobs drawn from a model, with arrivals scaled so that the offered GPU load on
// a cluster (total GPU-seconds / (cluster GPUs x arrival span)) is the target.
#include <cstdint>

#include "cluster/cluster_spec.h"
#include "trace/job_spec.h"
#include "workload/model.h"

namespace rltune::workload {

struct GenerateOptions {
  int jobs = 2000;           // kMinJobs..kMaxJobs
  double load = 0.9;         // target offered load, kMinLoad..kMaxLoad
  std::uint64_t seed = 1;
};
// Bounds of what generate accepts (a load of 1e-300 would space arrivals past the clock's range).
inline constexpr int kMinJobs = 1, kMaxJobs = 100'000'000;
inline constexpr double kMinLoad = 0.001, kMaxLoad = 100;

// Generates jobs sorted by submit time, the first at 0. Arrivals are Poisson with the model's daily cycle.
// When the cluster's pools are told apart by VC (every pool accepts named VCs) or by GPU type (all pool
// types differ), each job is sent to one pool, chosen so that every pool gets the same offered load, and
// carries that pool's VC or GPU type; its GPU count is then drawn among the counts that pool accepts.
// With user behaviour that holds in expectation over seeds: a trace's users and their templates are drawn
// once, so its pools' loads can differ widely.
// GPU counts no pool can hold are never drawn.
trace::Trace generate(const WorkloadModel& model, const cluster::ClusterSpec& cluster, const GenerateOptions& options);

}  // namespace rltune::workload
