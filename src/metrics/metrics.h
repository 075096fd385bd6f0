#pragma once
// Per-job records collected by observing the engine, and every aggregate computed only from them
// (definitions in DESIGN.md section 3).
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine.h"

namespace rltune::metrics {

// Bounded slowdown of one job: max(1, jct / max(duration, 10 s)), 10 s being the reference's shortest
// runtime that counts. The one formula: summaries and the RL environment's rewards both use it.
double bounded_slowdown(double jct_s, double duration_s);

struct JobRecord {
  std::string job_id;
  std::string pool;       // "" when rejected
  int gpus = 0;
  Seconds submit = 0, start = -1, end = -1, duration = 0;  // start/end -1 when rejected
  std::string placement;  // "vc0-1:8+vc0-2:2", "" when rejected
  std::string status;     // "completed" or "rejected"
  std::string reason;     // why rejected, "" otherwise
  Seconds estimate = 0;   // the runtime estimate schedulers saw (completed jobs)
  bool completed() const { return status == "completed"; }
  Seconds wait() const { return start - submit; }
  Seconds jct() const { return end - submit; }
  // Bounded slowdown: max(1, jct / max(duration, 10)).
  double bsld() const;
};

// Everything measured in one simulation run (one window under one scheduler).
struct RunMetrics {
  std::string window;  // "START:LEN" or "all"
  std::vector<JobRecord> jobs;  // in trace (submit) order
  int cluster_gpus = 0;
  int cluster_nodes = 0;
  // Integral of the partially used node count over [observed_from, observed_to]: from the first
  // measured submit to the last measured end, the span utilisation is over (neither warm-up jobs that
  // run on after the window nor a rejected last arrival extend it). 0 and an empty span when no
  // measured job ran.
  double partial_node_seconds = 0;
  Seconds observed_from = 0, observed_to = 0;
  std::vector<double> decision_us;  // wall time of each scheduler call
  double sim_wall_s = 0;
  std::size_t estimate_fallbacks = 0;
  std::array<std::size_t, 6> estimate_sources{};  // predicted runtimes: completed jobs per sim::EstimateSource
  // Look-ahead placement (milp): whether it ran, its solves, fallbacks and time per placement.
  bool has_placement_stats = false;
  std::size_t placement_solves = 0, placement_fallbacks = 0, placement_time_limit_hits = 0;
  std::vector<double> placement_us;
};

// Runs `engine` to completion with `scheduler` and returns what happened to the jobs from index
// `first_measured` on. Earlier jobs are a warm-up: they fill the cluster and the queue but are not
// measured, and the time integrals and decisions count from the first measured job's arrival.
RunMetrics run_and_measure(sim::Engine& engine, sim::Scheduler& scheduler, const std::string& window,
                           std::size_t first_measured = 0);

// The summary.json keys of DESIGN.md section 3, in that order.
struct Summary {
  std::size_t jobs_total = 0, jobs_completed = 0, jobs_rejected = 0;
  double avg_wait_s = 0, p50_wait_s = 0, p95_wait_s = 0, p99_wait_s = 0;
  double avg_jct_s = 0, p95_jct_s = 0;
  double avg_bsld = 0, p95_bsld = 0;
  double gpu_utilization = 0;
  double makespan_s = 0;
  double avg_fragmentation = 0;
  std::size_t decisions = 0;
  double sim_wall_s = 0, decision_us_p50 = 0, decision_us_p99 = 0;
  // Written as milp_solves, milp_fallbacks, milp_time_limit_hits, milp_us_p50, milp_us_p99 when the
  // placement is milp. Time-limit hits are the placements the wall clock decided: they may differ
  // between identical runs, like the timings.
  bool has_milp = false;
  std::size_t milp_solves = 0, milp_fallbacks = 0, milp_time_limit_hits = 0;
  double milp_us_p50 = 0, milp_us_p99 = 0;
};

// The summary's metrics, one row each, in summary.json order: every writer (summary.json, runs.csv,
// evaluation.json, printed tables) and every comparison (improvements, best in column) takes names,
// directions and kinds from here.
enum class Better { lower, higher, neither };
struct MetricDef {
  const char* name;  // the summary.json key
  const char* unit;  // "jobs", "s", "us", "ratio" (bsld), "share" (0..1), "count"
  Better better;
  bool wall_clock;   // a measurement of this machine's time, not a simulated result: never reproducible
  bool milp_only;    // present only when the placement solves MILPs
  std::size_t Summary::*count = nullptr;  // integer metrics (written as integers)
  double Summary::*real = nullptr;        // the others
  double of(const Summary& s) const { return count ? static_cast<double>(s.*count) : s.*real; }
};
std::span<const MetricDef> summary_metrics();
const MetricDef& summary_metric(std::string_view name);  // InvariantError for a name not in the table
// Change from `baseline` to `value` in percent of the baseline, positive when `value` is better;
// undefined (nullopt) when the baseline is not positive.
std::optional<double> improvement_pct(const MetricDef& metric, double baseline, double value);

// One run's summary. Job averages are over completed jobs; utilisation = sum(duration x GPUs) /
// (cluster GPUs x (last end - first submit)); makespan = last end - first submit.
Summary summarize(const RunMetrics& run);
// Several runs (windows) together: job statistics over all their jobs; utilisation and fragmentation
// weighted by each run's span; makespan is the mean over runs; decisions and wall time are summed.
Summary summarize(const std::vector<const RunMetrics*>& runs);

// How close runtime estimates came to the true durations, over completed jobs (durations and estimates
// of 0 count as 1 s): the median of |ln(estimate / duration)|, the share of jobs under-estimated, and the
// share estimated within a factor of 2 either way.
struct EstimateAccuracy {
  std::size_t jobs = 0;
  double median_abs_log_ratio = 0, under_share = 0, within_2x_share = 0;
  std::array<std::size_t, 6> sources{};  // summed over the runs
};
EstimateAccuracy estimate_accuracy(const std::vector<const RunMetrics*>& runs);
// "median |ln(est/true)| 0.41, 31.0% under-estimated, 72.5% within 2x (user+gpus+vc 80.1%, user 9.3%, ...)"
std::string describe(const EstimateAccuracy& accuracy);
// When the MILP's wall-clock limit decided `hits` of `solves` placements: a warning that they depend on
// the machine's speed and load; "" when none did.
std::string time_limit_warning(std::size_t hits, std::size_t solves);

// Quantile q in [0,1] with linear interpolation between order statistics (numpy's default); 0 if empty.
double quantile(std::vector<double> values, double q);
// The same of values already sorted ascending (no copy, no sort: for many quantiles of one sample).
double sorted_quantile(std::span<const double> sorted, double q);

}  // namespace rltune::metrics
