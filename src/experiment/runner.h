#pragma once
// `rltune experiment`: every policy of a config on the same windows of each workload (paired), run in
// parallel, resumable, with tidy outputs:
//   config.json      the effective config (defaults filled in, paths resolved) and the rltune version
//   runs/            one JSON file per finished run (metrics, job waits and JCTs, time series): the
//                    journal that --resume reuses
//   runs.csv         one row per cluster, trace, window and policy: status, error and every
//                    deterministic metric of DESIGN.md section 3
//   timings.csv      the same rows' wall-clock measurements (sim_wall_s, decision and MILP times), kept
//                    apart so that every other file is identical, byte for byte, whatever --jobs is
//   summary.csv/.md  per policy and metric: windows, mean and p95 over windows, and the improvement over
//                    each baseline in percent with its 95% paired bootstrap interval
//   cdf.csv          quantiles of job wait and JCT over all windows, per policy (for CDF plots)
//   timeseries.csv   queue length, busy GPUs and fragmentation over time in the first
//                    `timeseries_windows` windows of each workload
#include <span>
#include <string>

#include "experiment/config.h"
#include "metrics/metrics.h"
#include "policy/profile.h"

namespace rltune::experiment {

struct RunOptions {
  int jobs = 1;          // worker threads
  bool resume = false;   // reuse the runs a previous invocation on the same --out finished
  bool progress = true;  // progress bar (stderr)
};

struct Outcome {
  std::size_t runs = 0, reused = 0, failed = 0;
  double wall_s = 0;
};

// Runs the experiment into `out_dir`. Loads every trace and model and checks every window before the
// first run (InputError naming the config line). A run that throws is recorded as failed with its
// error; the others complete. Refuses an `out_dir` holding another experiment's config.json, and one
// holding any experiment unless `resume`.
Outcome run_experiment(const Config& config, const std::string& out_dir, const RunOptions& options);

// Runs `scheduler` on a window and measures it, with this window's share of its placement statistics.
// The window's warm-up jobs are scheduled by fcfs under the scheduler's own placement, blocking and
// backfilling until the first measured job arrives, and are not measured. `observer` (optional) also
// watches the run.
metrics::RunMetrics run_window(const cluster::ClusterSpec& cluster, sim::WarmWindow window,
                               const sim::EngineOptions& engine_options, policy::ProfileScheduler& scheduler,
                               const std::string& label, sim::Observer* observer = nullptr);

}  // namespace rltune::experiment
