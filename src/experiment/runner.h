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
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/comm.h"
#include "experiment/config.h"
#include "metrics/metrics.h"
#include "policy/profile.h"

namespace rltune::rl {
struct PolicyFile;
}

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
// holding any experiment unless `resume`. With several ranks (every rank calls it alike), the runs left
// are dealt out in turn; each rank writes its runs' files under runs/ and rank 0 writes the rest, the
// same files as one process would (timings.csv aside). Outcome: rank 0's.
Outcome run_experiment(const Config& config, const std::string& out_dir, const RunOptions& options,
                       const Comm& comm = single_process());

// A workload ready to run: its cluster, its jobs, and its windows (the same for every policy: paired).
struct LoadedWorkload {
  cluster::ClusterSpec cluster;
  trace::Trace trace;
  std::vector<std::size_t> starts;  // first job of each window
  std::size_t length = 0;           // jobs per window
  double train_split = sim::WindowSettings{}.train_split;  // the windows' split: a learned runtime model fits on its training part
  std::vector<sim::EngineOptions> engines{};  // per policy: its engine options with its runtime model (load_workload)
};

// Reads or generates the workload's jobs and draws its windows; InputError naming the config line.
LoadedWorkload load_workload(const Workload& workload);
// Each policy's engine options with its learned runtime model loaded or fitted (sim::with_runtime_model),
// warning when measured jobs are in-sample; InputError naming the policy's config line.
std::vector<sim::EngineOptions> prepared_engines(const Workload& workload, const LoadedWorkload& loaded);
// Draws `spec`'s windows over `loaded`'s jobs (from spec.seed, as training draws them), or takes the whole
// split as one window; InputError when the split cannot hold them. `name` (cluster/trace) heads its warnings.
void draw_windows(const WindowSpec& spec, LoadedWorkload& loaded, const std::string& name = "");

// The models that the workloads' policies name (rl:PATH, rl-sampled:PATH), each loaded once, by path.
using Models = std::map<std::string, rl::PolicyFile>;
Models load_models(std::span<const Workload> workloads);

// Every policy of `workload` on every window of `loaded` (its models from `models`), on `threads` threads: runs[window][policy], the
// same whatever the thread count. A run that throws stops the others; its exception is rethrown.
std::vector<std::vector<metrics::RunMetrics>> run_paired(const Workload& workload, const LoadedWorkload& loaded,
                                                         const Models& models, int threads);

// Runs `scheduler` on a window and measures it, with this window's share of its placement statistics.
// The window's warm-up jobs are scheduled by fcfs under the scheduler's own placement, blocking and
// backfilling until the first measured job arrives, and are not measured. `observer` (optional) also
// watches the run.
metrics::RunMetrics run_window(const cluster::ClusterSpec& cluster, sim::WarmWindow window,
                               const sim::EngineOptions& engine_options, policy::ProfileScheduler& scheduler,
                               const std::string& label, sim::Observer* observer = nullptr);
// One scheduler over windows of `jobs` (each after up to `warmup` jobs), as `rltune simulate` and
// Python's rltune.simulate run it: one run per window, in order. A learned runtime model is fitted on
// the default training split of `jobs` (sim::WindowSettings) unless the options name a file. `observer`
// watches every window's engine.
std::vector<metrics::RunMetrics> run_windows(const cluster::ClusterSpec& cluster, std::span<const trace::JobSpec> jobs,
                                             std::span<const sim::LabelledWindow> windows, std::size_t warmup,
                                             const sim::EngineOptions& engine_options, policy::ProfileScheduler& scheduler,
                                             sim::Observer* observer = nullptr);

}  // namespace rltune::experiment
