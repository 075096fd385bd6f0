#include "metrics/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "cluster/cluster_state.h"
#include "core/error.h"

namespace rltune::metrics {

namespace {

// Bounded slowdown uses 10 s as the shortest runtime that counts (the reference's threshold).
constexpr double kBsldMinRuntimeS = 10;

class Recorder final : public sim::Observer {
 public:
  // Nothing before `measure_from` counts (a warm-up); jobs from `first_measured` on are measured.
  Recorder(RunMetrics& out, Seconds measure_from, JobIndex first_measured)
      : out_(out), measure_from_(measure_from), first_measured_(first_measured) {}
  void on_advance(Seconds from, Seconds to, const cluster::ClusterState& cluster) override {
    if (to <= measure_from_) return;
    from = std::max(from, measure_from_);
    if (!seen_) {
      from_ = from;
      seen_ = true;
    }
    partial_ += static_cast<double>(cluster.partial_nodes()) * static_cast<double>(to - from);
  }
  // The integral so far runs to this end (completions come after the advance to their time).
  void on_finish(Seconds t, JobIndex job) override {
    if (job < first_measured_) return;
    if (!seen_) {  // a job that ends where it was submitted, before time moved: an empty span so far
      from_ = t;
      seen_ = true;
    }
    out_.observed_from = from_;
    out_.observed_to = t;
    out_.partial_node_seconds = partial_;
  }
  void on_decision(Seconds t, double wall_us) override {
    if (t >= measure_from_) out_.decision_us.push_back(wall_us);
  }

 private:
  RunMetrics& out_;
  Seconds measure_from_;
  JobIndex first_measured_;
  bool seen_ = false;
  Seconds from_ = 0;
  double partial_ = 0;
};

double mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (const double x : v) s += x;
  return s / static_cast<double>(v.size());
}

}  // namespace

double bounded_slowdown(double jct_s, double duration_s) { return std::max(1.0, jct_s / std::max(duration_s, kBsldMinRuntimeS)); }

double JobRecord::bsld() const { return bounded_slowdown(static_cast<double>(jct()), static_cast<double>(duration)); }

RunMetrics run_and_measure(sim::Engine& engine, sim::Scheduler& scheduler, const std::string& window,
                           std::size_t first_measured) {
  RunMetrics out;
  out.window = window;
  const auto& spec = engine.cluster_spec();
  out.cluster_gpus = spec.total_gpus();
  out.cluster_nodes = spec.total_nodes();
  RLTUNE_CHECK(first_measured == 0 || first_measured < engine.job_count(), "a window has jobs to measure");
  Recorder recorder(out,
                    first_measured == 0 ? std::numeric_limits<Seconds>::min() : engine.job(static_cast<JobIndex>(first_measured)).spec->submit,
                    static_cast<JobIndex>(first_measured));
  engine.add_observer(&recorder);
  struct Detach {  // the engine must not keep a pointer to the recorder after we return
    sim::Engine& engine;
    sim::Observer* observer;
    ~Detach() { engine.remove_observer(observer); }
  } detach{engine, &recorder};
  const auto begin = std::chrono::steady_clock::now();
  engine.run(scheduler);
  out.sim_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  out.jobs.reserve(engine.job_count());
  for (auto j = static_cast<JobIndex>(first_measured); j < static_cast<JobIndex>(engine.job_count()); ++j) {
    const sim::SimJob& job = engine.job(j);
    JobRecord r;
    r.job_id = job.spec->id;
    r.gpus = job.spec->gpus;
    r.submit = job.spec->submit;
    r.duration = job.spec->duration;
    r.status = sim::to_string(job.state);
    if (job.state == sim::JobState::completed) {
      // Counted here, not by the engine: a warm window's warm-up jobs and rejected jobs had no estimate that mattered.
      if (engine.options().runtime == sim::RuntimeKnowledge::requested && job.spec->requested_time <= 0) ++out.estimate_fallbacks;
      r.pool = spec.pools[job.placement.pool].name;
      r.start = job.start;
      r.end = job.end;
      r.placement = cluster::format_placement(spec, job.placement);
      r.estimate = job.estimate;
      if (sim::is_predicted(engine.options().runtime))
        ++out.estimate_sources[static_cast<std::size_t>(job.estimate_source)];
    } else {
      r.reason = job.reason;
    }
    out.jobs.push_back(std::move(r));
  }
  return out;
}

EstimateAccuracy estimate_accuracy(const std::vector<const RunMetrics*>& runs) {
  EstimateAccuracy a;
  std::vector<double> abs_log;
  std::size_t under = 0, within = 0;
  for (const RunMetrics* run : runs) {
    for (std::size_t s = 0; s < a.sources.size(); ++s) a.sources[s] += run->estimate_sources[s];
    for (const JobRecord& r : run->jobs) {
      if (!r.completed()) continue;
      const double ratio = static_cast<double>(std::max<Seconds>(1, r.estimate)) / static_cast<double>(std::max<Seconds>(1, r.duration));
      abs_log.push_back(std::abs(std::log(ratio)));
      under += ratio < 1;
      within += ratio >= 0.5 && ratio <= 2;
    }
  }
  a.jobs = abs_log.size();
  if (a.jobs == 0) return a;
  a.median_abs_log_ratio = quantile(std::move(abs_log), 0.5);
  a.under_share = static_cast<double>(under) / static_cast<double>(a.jobs);
  a.within_2x_share = static_cast<double>(within) / static_cast<double>(a.jobs);
  return a;
}

std::string time_limit_warning(std::size_t hits, std::size_t solves) {
  if (hits == 0) return "";
  return fmt::format("{} of {} MILP placements hit the wall-clock limit (--milp-time-limit-ms, milp.time_limit_ms): they "
                     "depend on this machine's speed and load and may differ in another run; raise the limit to "
                     "let the node limit decide",
                     hits, solves);
}

std::string describe(const EstimateAccuracy& a) {
  std::string out = fmt::format("median |ln(estimate/true)| {:.2f}, {:.1f}% under-estimated, {:.1f}% within 2x of {} jobs",
                                a.median_abs_log_ratio, 100 * a.under_share, 100 * a.within_2x_share, a.jobs);
  std::size_t predicted = 0;
  for (const std::size_t n : a.sources) predicted += n;
  if (predicted == 0) return out;
  std::vector<std::string> parts;
  for (std::size_t s = 0; s < a.sources.size(); ++s)
    if (a.sources[s] > 0)
      parts.push_back(fmt::format("{} {:.1f}%", sim::kEstimateSourceNames.name(static_cast<sim::EstimateSource>(s)),
                                  100.0 * static_cast<double>(a.sources[s]) / static_cast<double>(predicted)));
  return out + fmt::format("; estimated from {}", fmt::join(parts, ", "));
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return sorted_quantile(v, q);
}

double sorted_quantile(std::span<const double> v, double q) {
  if (v.empty()) return 0;
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

Summary summarize(const RunMetrics& run) { return summarize(std::vector<const RunMetrics*>{&run}); }

Summary summarize(const std::vector<const RunMetrics*>& runs) {
  Summary s;
  std::vector<double> waits, jcts, bslds, decision_us;
  double work = 0, capacity = 0, partial = 0, node_time = 0, makespans = 0;
  std::size_t spans = 0;  // windows where a job ran: one where every job was rejected has no makespan
  for (const RunMetrics* run : runs) {
    Seconds first_submit = kForever, last_end = 0;
    double run_work = 0;
    bool ran = false;
    for (const JobRecord& j : run->jobs) {
      ++s.jobs_total;
      first_submit = std::min(first_submit, j.submit);
      if (!j.completed()) {
        ++s.jobs_rejected;
        continue;
      }
      ++s.jobs_completed;
      ran = true;
      waits.push_back(static_cast<double>(j.wait()));
      jcts.push_back(static_cast<double>(j.jct()));
      bslds.push_back(j.bsld());
      run_work += static_cast<double>(j.duration) * j.gpus;
      last_end = std::max(last_end, j.end);
    }
    const double span = first_submit == kForever ? 0.0 : static_cast<double>(std::max<Seconds>(0, last_end - first_submit));
    work += run_work;
    capacity += span * run->cluster_gpus;
    if (ran) {
      makespans += span;
      ++spans;
    }
    partial += run->partial_node_seconds;
    node_time += static_cast<double>(run->observed_to - run->observed_from) * run->cluster_nodes;
    decision_us.insert(decision_us.end(), run->decision_us.begin(), run->decision_us.end());
    s.sim_wall_s += run->sim_wall_s;
  }
  s.avg_wait_s = mean(waits);
  s.p50_wait_s = quantile(waits, 0.50);
  s.p95_wait_s = quantile(waits, 0.95);
  s.p99_wait_s = quantile(waits, 0.99);
  s.avg_jct_s = mean(jcts);
  s.p95_jct_s = quantile(jcts, 0.95);
  s.avg_bsld = mean(bslds);
  s.p95_bsld = quantile(bslds, 0.95);
  s.gpu_utilization = capacity > 0 ? work / capacity : 0;
  s.makespan_s = spans == 0 ? 0 : makespans / static_cast<double>(spans);
  s.avg_fragmentation = node_time > 0 ? partial / node_time : 0;
  std::vector<double> milp_us;
  for (const auto* run : runs) {
    s.has_milp = s.has_milp || run->has_placement_stats;
    s.milp_solves += run->placement_solves;
    s.milp_fallbacks += run->placement_fallbacks;
    s.milp_time_limit_hits += run->placement_time_limit_hits;
    milp_us.insert(milp_us.end(), run->placement_us.begin(), run->placement_us.end());
  }
  s.milp_us_p50 = quantile(milp_us, 0.50);
  s.milp_us_p99 = quantile(milp_us, 0.99);
  s.decisions = decision_us.size();
  s.decision_us_p50 = quantile(decision_us, 0.50);
  s.decision_us_p99 = quantile(decision_us, 0.99);
  return s;
}

namespace {

using B = Better;
constexpr MetricDef kMetrics[] = {
    {"jobs_total", "jobs", B::neither, false, false, &Summary::jobs_total},
    {"jobs_completed", "jobs", B::neither, false, false, &Summary::jobs_completed},
    {"jobs_rejected", "jobs", B::neither, false, false, &Summary::jobs_rejected},
    {"avg_wait_s", "s", B::lower, false, false, nullptr, &Summary::avg_wait_s},
    {"p50_wait_s", "s", B::lower, false, false, nullptr, &Summary::p50_wait_s},
    {"p95_wait_s", "s", B::lower, false, false, nullptr, &Summary::p95_wait_s},
    {"p99_wait_s", "s", B::lower, false, false, nullptr, &Summary::p99_wait_s},
    {"avg_jct_s", "s", B::lower, false, false, nullptr, &Summary::avg_jct_s},
    {"p95_jct_s", "s", B::lower, false, false, nullptr, &Summary::p95_jct_s},
    {"avg_bsld", "ratio", B::lower, false, false, nullptr, &Summary::avg_bsld},
    {"p95_bsld", "ratio", B::lower, false, false, nullptr, &Summary::p95_bsld},
    {"gpu_utilization", "share", B::higher, false, false, nullptr, &Summary::gpu_utilization},
    {"makespan_s", "s", B::lower, false, false, nullptr, &Summary::makespan_s},
    {"avg_fragmentation", "share", B::lower, false, false, nullptr, &Summary::avg_fragmentation},
    {"decisions", "count", B::neither, false, false, &Summary::decisions},
    {"sim_wall_s", "s", B::neither, true, false, nullptr, &Summary::sim_wall_s},
    {"decision_us_p50", "us", B::neither, true, false, nullptr, &Summary::decision_us_p50},
    {"decision_us_p99", "us", B::neither, true, false, nullptr, &Summary::decision_us_p99},
    {"milp_solves", "count", B::neither, false, true, &Summary::milp_solves},
    {"milp_fallbacks", "count", B::neither, false, true, &Summary::milp_fallbacks},
    {"milp_time_limit_hits", "count", B::neither, true, true, &Summary::milp_time_limit_hits},
    {"milp_us_p50", "us", B::neither, true, true, nullptr, &Summary::milp_us_p50},
    {"milp_us_p99", "us", B::neither, true, true, nullptr, &Summary::milp_us_p99},
};

}  // namespace

std::span<const MetricDef> summary_metrics() { return kMetrics; }

const MetricDef& summary_metric(std::string_view name) {
  for (const MetricDef& m : kMetrics)
    if (m.name == name) return m;
  throw InvariantError("no summary metric named " + std::string(name));
}

std::optional<double> improvement_pct(const MetricDef& metric, double baseline, double value) {
  RLTUNE_CHECK(metric.better != Better::neither, std::string(metric.name) + " has no better direction");
  if (!(baseline > 0)) return std::nullopt;
  return 100 * (metric.better == Better::lower ? baseline - value : value - baseline) / baseline;
}

}  // namespace rltune::metrics
