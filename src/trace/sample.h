#pragma once
// A small deterministic workload generator for the embedded default and for tests: Poisson arrivals
// scaled to a target offered load, GPU requests and log-normal runtimes shaped like public DL traces,
// and user runtime estimates that over-estimate as users do. Not calibrated to any trace.
#include <cstdint>
#include <string>
#include <vector>

#include "trace/job_spec.h"

namespace rltune::trace {

struct SampleOptions {
  int jobs = 2000;               // number of jobs, >= 1
  std::uint64_t seed = 1;
  double load = 0.9;             // offered load: total GPU-seconds / (capacity_gpus x arrival span), > 0
  int capacity_gpus = 136;       // GPUs the load is relative to, >= 1
  int max_gpus = 16;             // largest request generated, >= 1
  // VC names and relative weights (e.g. each VC's GPU count); empty = jobs carry no VC.
  std::vector<std::string> vcs;
  std::vector<double> vc_weights;
};

// Generates the sample; the result is sorted by submit time and starts at time 0.
Trace make_sample(const SampleOptions& options);

}  // namespace rltune::trace
