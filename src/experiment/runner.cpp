#include "experiment/runner.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "cluster/cluster_spec.h"
#include "core/comm.h"
#include "core/csv.h"
#include "core/error.h"
#include "core/file.h"
#include "core/json_text.h"
#include "core/parallel.h"
#include "core/progress.h"
#include "core/rng.h"
#include "experiment/stats.h"
#include "policy/registry.h"
#include "report/experiment_report.h"
#include "rl/rl_policy.h"
#include "sim/runtime_fit.h"
#include "workload/generator.h"

#ifndef RLTUNE_VERSION
#define RLTUNE_VERSION "unknown"
#endif

namespace rltune::experiment {

namespace fs = std::filesystem;

metrics::RunMetrics run_window(const cluster::ClusterSpec& cluster, sim::WarmWindow window,
                               const sim::EngineOptions& engine_options, policy::ProfileScheduler& scheduler,
                               const std::string& label, sim::Observer* observer) {
  sim::Engine engine(cluster, window.jobs, engine_options);
  if (observer) engine.add_observer(observer);
  const policy::PlacementStats* stats = scheduler.placement().stats();
  const policy::PlacementStats before =
      stats ? policy::PlacementStats{stats->solves, stats->fallbacks, stats->time_limit_hits, {}} : policy::PlacementStats{};
  const std::size_t first_us = stats ? stats->solve_us.size() : 0;
  metrics::RunMetrics run;
  if (window.warmup == 0) {
    run = metrics::run_and_measure(engine, scheduler, label);
  } else {
    const auto fcfs = policy::make_profile(policy::warmup_profile(scheduler.options()));
    sim::WarmStart warm(*fcfs, scheduler, window.jobs[window.warmup].submit);
    run = metrics::run_and_measure(engine, warm, label, window.warmup);
  }
  if (stats) {  // this window's share of the scheduler's running totals
    run.has_placement_stats = true;
    run.placement_solves = stats->solves - before.solves;
    run.placement_fallbacks = stats->fallbacks - before.fallbacks;
    run.placement_time_limit_hits = stats->time_limit_hits - before.time_limit_hits;
    run.placement_us.assign(stats->solve_us.begin() + static_cast<std::ptrdiff_t>(first_us), stats->solve_us.end());
  }
  return run;
}

std::vector<metrics::RunMetrics> run_windows(const cluster::ClusterSpec& cluster, std::span<const trace::JobSpec> jobs,
                                             std::span<const sim::LabelledWindow> windows, std::size_t warmup,
                                             const sim::EngineOptions& engine_options, policy::ProfileScheduler& scheduler,
                                             sim::Observer* observer) {
  std::vector<metrics::RunMetrics> runs;
  const double train_split = sim::WindowSettings{}.train_split;
  const sim::EngineOptions engine = sim::with_runtime_model(engine_options, jobs, train_split);
  const std::size_t in_sample = sim::in_sample_jobs(engine, jobs.size(), train_split);
  for (const sim::LabelledWindow& w : windows) sim::warn_in_sample(in_sample, w.start, w.start + w.length);
  for (const sim::LabelledWindow& w : windows)
    runs.push_back(run_window(cluster, sim::warm_window(jobs, w.start, w.length, warmup), engine, scheduler, w.label, observer));
  return runs;
}

namespace {

// Metrics of runs.csv: the deterministic summary keys (wall-clock ones go to timings.csv).
// The metrics compared across policies in summary.csv, in its row order (each row's bootstrap stream
// depends on its place here).
constexpr const char* kCompared[] = {"avg_wait_s", "p95_wait_s", "avg_jct_s", "p95_jct_s",        "avg_bsld",
                                     "p95_bsld",   "gpu_utilization", "avg_fragmentation", "makespan_s"};

// runs.csv's metric columns (the simulated ones), or timings.csv's (the wall-clock ones).
std::vector<const char*> run_columns(bool timings) {
  std::vector<const char*> columns;
  for (const metrics::MetricDef& m : metrics::summary_metrics())
    if (m.wall_clock == timings) columns.push_back(m.name);
  return columns;
}

std::string number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : ""; }

// Queue length, busy GPUs and fragmentation at every change, relative to the window's first submit.
class SeriesRecorder final : public sim::Observer {
 public:
  // Nothing before `measure_from` is recorded (a warm window's warm-up); the queue counts every job.
  SeriesRecorder(Json& out, Seconds measure_from) : out_(out), measure_from_(measure_from) {
    for (const char* k : {"time_s", "queue_jobs", "gpus_busy", "fragmentation"}) out_[k] = Json::array();
  }
  void on_arrival(Seconds, JobIndex) override { ++queue_; }
  void on_reject(Seconds, JobIndex) override { --queue_; }
  void on_start(Seconds, JobIndex) override { --queue_; }
  void on_advance(Seconds from, Seconds to, const cluster::ClusterState& cluster) override {
    if (to <= measure_from_) return;
    from = std::max(from, measure_from_);
    if (!seen_) origin_ = from, seen_ = true;
    const int busy = cluster.spec().total_gpus() - cluster.free_total();
    const double frag = static_cast<double>(cluster.partial_nodes()) / cluster.spec().total_nodes();
    if (!(queue_ == last_queue_ && busy == last_busy_ && frag == last_frag_)) {
      out_["time_s"].push_back(from - origin_);
      out_["queue_jobs"].push_back(queue_);
      out_["gpus_busy"].push_back(busy);
      out_["fragmentation"].push_back(frag);
      last_queue_ = queue_, last_busy_ = busy, last_frag_ = frag;
    }
    end_ = to;
  }
  void close() {  // the idle cluster after the last completion
    if (!seen_) return;
    out_["time_s"].push_back(end_ - origin_);
    out_["queue_jobs"].push_back(0);
    out_["gpus_busy"].push_back(0);
    out_["fragmentation"].push_back(0.0);
  }

 private:
  Json& out_;
  Seconds measure_from_;
  bool seen_ = false;
  Seconds origin_ = 0, end_ = 0;
  long queue_ = 0, last_queue_ = -1;
  int last_busy_ = -1;
  double last_frag_ = -1;
};

}  // namespace

void draw_windows(const WindowSpec& ws, LoadedWorkload& l, const std::string& name) {
  const std::string which = name.empty() ? "" : fmt::format("workload {}: ", name);
  l.starts.clear();
  l.train_split = ws.train_split;
  if (ws.whole) {
    const auto [first, last] = sim::split_range(l.trace.jobs.size(), ws.train_split, ws.split);
    if (first == last)
      throw InputError(fmt::format("the {} split holds none of its {} jobs", sim::to_string(ws.split), l.trace.jobs.size()));
    l.starts = {first};
    l.length = last - first;
  } else {
    l.length = static_cast<std::size_t>(ws.length);
    Rng rng(ws.seed);
    for (int k = 0; k < ws.count; ++k) l.starts.push_back(sim::draw_window(rng, l.trace.jobs.size(), ws.train_split, ws.split, l.length));
    // Starts are drawn independently, so a short split gives some window twice: the same pair counted
    // again, which narrows the paired intervals without new evidence.
    const std::set<std::size_t> distinct(l.starts.begin(), l.starts.end());
    if (distinct.size() < l.starts.size())
      spdlog::warn("{}{} of the {} windows of {} jobs repeat another window (the {} split offers few starts): paired "
                   "intervals count them as independent; ask for fewer or shorter windows, or a longer trace",
                   which, l.starts.size() - distinct.size(), l.starts.size(), l.length, sim::to_string(ws.split));
  }
  // A window near the trace's start has fewer jobs before it than the warm-up asks for: colder than the rest.
  const auto cold = std::ranges::count_if(l.starts, [&](std::size_t start) { return start < static_cast<std::size_t>(ws.warmup); });
  if (cold > 0)
    spdlog::warn("{}{} of the {} windows start before job {}, so fewer than the {} warm-up jobs precede them", which, cold,
                 l.starts.size(), ws.warmup, ws.warmup);
}

LoadedWorkload load_workload(const Workload& w) {
  LoadedWorkload l{cluster::load_cluster(w.cluster), {}, {}, 0};
  const TraceSource& t = w.trace;
  try {
    if (t.files.empty()) {
      const auto model = workload::load_model(t.like.empty() ? workload::default_family(l.cluster.source) : t.like);
      l.trace = workload::generate(model, l.cluster, {.jobs = t.jobs, .load = t.load, .seed = t.seed});
    } else {
      l.trace = trace::read_traces_as_given(t.files, t.read, t.given);
      if (l.trace.skipped.skipped > 0) spdlog::warn("{}: skipped {} invalid rows", l.trace.source, l.trace.skipped.skipped);
    }
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: workload {}/{}: {}", w.where, w.cluster_label, t.label, e.what()));
  }
  // As simulate warns: `runtime: requested` estimates a job without a requested time by its true duration.
  std::vector<std::string> requested;
  for (const PolicySpec& p : w.policies)
    if (p.engine.runtime == sim::RuntimeKnowledge::requested) requested.push_back(p.label);
  const auto unknown = std::ranges::count_if(l.trace.jobs, [](const trace::JobSpec& j) { return j.requested_time <= 0; });
  if (unknown > 0 && !requested.empty())
    spdlog::warn("workload {}/{}: {} of its {} jobs have no requested time; {} (runtime requested) estimate them by their true duration",
                 w.cluster_label, t.label, unknown, l.trace.jobs.size(), fmt::join(requested, ", "));
  const WindowSpec& ws = w.windows;
  try {
    draw_windows(ws, l, fmt::format("{}/{}", w.cluster_label, t.label));
  } catch (const InputError& e) {
    if (ws.whole) throw InputError(fmt::format("{}: length all: workload {}/{}: {}", ws.where, w.cluster_label, t.label, e.what()));
    throw InputError(fmt::format("{}: windows of {} jobs: workload {}/{} ({} jobs): {}", ws.where, ws.length, w.cluster_label,
                                 t.label, l.trace.jobs.size(), e.what()));
  }
  l.engines = prepared_engines(w, l);
  return l;
}

std::vector<sim::EngineOptions> prepared_engines(const Workload& w, const LoadedWorkload& l) {
  std::vector<sim::EngineOptions> engines;
  for (const PolicySpec& p : w.policies) {
    try {
      engines.push_back(sim::with_runtime_model(p.engine, l.trace.jobs, l.train_split));
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}: {}", p.where, p.label, e.what()));
    }
    const std::size_t in_sample = sim::in_sample_jobs(p.engine, l.trace.jobs.size(), l.train_split);
    for (const std::size_t start : l.starts) sim::warn_in_sample(in_sample, start, start + l.length);
  }
  return engines;
}

Models load_models(std::span<const Workload> workloads) {
  Models models;
  for (const auto& w : workloads)
    for (const auto& s : w.policies)
      if (const auto rl_spec = rl::parse_rl_spec(s.profile.priority); rl_spec && !models.count(rl_spec->model)) {
        try {
          models.emplace(rl_spec->model, rl::load_policy(rl_spec->model));
        } catch (const InputError& e) {
          throw InputError(fmt::format("{}: policy {}: {}", s.where, s.label, e.what()));
        }
      }
  return models;
}

namespace {

// A digest of every file the runs read (traces, runtime sources, cluster and workload files, models), by
// path: what --resume compares, since a file can change while the config stays the same.
Json input_digests(const Config& config, const Models& models) {
  std::set<std::string> files;
  for (const Workload& w : config.workloads) {
    const TraceSource& t = w.trace;
    files.insert(t.files.begin(), t.files.end());
    for (const std::string& f : {w.cluster, t.like, t.read.duration_source, t.read.pai_task_table})
      if (!f.empty() && fs::is_regular_file(f)) files.insert(f);
  }
  for (const auto& [path, model] : models) files.insert(model.files.begin(), model.files.end());
  for (const Workload& w : config.workloads)
    for (const PolicySpec& p : w.policies)
      if (!p.engine.runtime_model_file.empty()) files.insert(p.engine.runtime_model_file);
  Json out = Json::object();
  for (const auto& [file, digest] : file_digests(files)) out[file] = digest;
  return out;
}

std::unique_ptr<policy::ProfileScheduler> make_scheduler(const PolicySpec& s, const Models& models) {
  const auto& p = s.profile;
  const auto rl_spec = rl::parse_rl_spec(p.priority);
  if (!rl_spec) return policy::make_profile(p);
  return rl::make_rl_profile(models.at(rl_spec->model), p,
                             rl_spec->sampled ? std::optional<std::uint64_t>(p.priority_options.seed) : std::nullopt);
}

std::string window_label(const LoadedWorkload& l, std::size_t window) { return fmt::format("{}:{}", l.starts[window], l.length); }

sim::WarmWindow window_jobs(const Workload& w, const LoadedWorkload& l, std::size_t window) {
  return sim::warm_window(l.trace.jobs, l.starts[window], l.length, static_cast<std::size_t>(w.windows.warmup));
}

// `engine`: s.engine with its runtime model (prepared_engines).
metrics::RunMetrics run_policy(const LoadedWorkload& l, const PolicySpec& s, const sim::EngineOptions& engine, const sim::WarmWindow& jobs,
                               const std::string& label, const Models& models, sim::Observer* observer) {
  auto scheduler = make_scheduler(s, models);
  return run_window(l.cluster, jobs, engine, *scheduler, label, observer);
}

// One run's record: what runs/*.json holds and every output is computed from.
Json run_one(const Workload& w, const LoadedWorkload& l, std::size_t policy, std::size_t window, bool series, const Models& models) {
  const PolicySpec& s = w.policies[policy];
  Json record;
  record["window"] = window_label(l, window);
  record["policy"] = s.label;
  try {
    Json ts;
    const sim::WarmWindow jobs = window_jobs(w, l, window);
    SeriesRecorder recorder(ts, jobs.warmup > 0 ? jobs.jobs[jobs.warmup].submit : std::numeric_limits<Seconds>::min());
    const metrics::RunMetrics run =
        run_policy(l, s, l.engines[policy], jobs, record["window"].get<std::string>(), models, series ? &recorder : nullptr);
    recorder.close();
    const metrics::Summary m = metrics::summarize(run);
    record["status"] = "completed";
    record["error"] = "";
    Json summary = report::to_json(m);
    if (!m.has_milp)  // every run record has every column
      for (const metrics::MetricDef& d : metrics::summary_metrics())
        if (d.milp_only) summary[d.name] = 0;
    record["metrics"] = summary;
    Json waits = Json::array(), jcts = Json::array();
    for (const auto& j : run.jobs)
      if (j.completed()) waits.push_back(j.wait()), jcts.push_back(j.jct());
    record["wait_s"] = waits;
    record["jct_s"] = jcts;
    if (series) record["timeseries"] = ts;
  } catch (const std::exception& e) {
    record["status"] = "failed";
    record["error"] = e.what();
  }
  return record;
}

// Why a record read back from runs/ cannot stand for this task's run ("" when it can). A completed
// run writes every key checked here; a record cut, edited or written for another task is run again,
// never read with keys missing or of another type (the outputs would read past them).
std::string record_problem(const Json& r, const std::string& window, const std::string& policy, bool series) {
  if (!r.is_object()) return "not a JSON object";
  const auto is_text = [&](const char* key, const std::string& value) { return r.contains(key) && r[key].is_string() && r[key] == value; };
  if (!is_text("window", window)) return "not the run of window " + window;
  if (!is_text("policy", policy)) return "not the run of policy " + policy;
  if (!r.contains("metrics") || !r["metrics"].is_object()) return "no metrics";
  for (const metrics::MetricDef& d : metrics::summary_metrics())
    if (!r["metrics"].contains(d.name) || !r["metrics"][d.name].is_number()) return fmt::format("metrics.{} is not a number", d.name);
  const auto numbers = [](const Json& list, bool integers) {
    return list.is_array() && std::all_of(list.begin(), list.end(), [&](const Json& v) { return integers ? v.is_number_integer() : v.is_number(); });
  };
  for (const char* key : {"wait_s", "jct_s"})
    if (!r.contains(key) || !numbers(r[key], false)) return fmt::format("{} is not a list of numbers", key);
  if (r.contains("timeseries") != series) return series ? "no timeseries" : "a timeseries this config does not record";
  if (series) {
    const Json& ts = r["timeseries"];
    if (!ts.is_object() || !ts.contains("time_s") || !numbers(ts["time_s"], false)) return "timeseries.time_s is not a list of numbers";
    for (const char* key : {"queue_jobs", "gpus_busy", "fragmentation"})
      if (!ts.contains(key) || !numbers(ts[key], key != std::string_view("fragmentation")) || ts[key].size() != ts["time_s"].size())
        return fmt::format("timeseries.{} is not a list of numbers as long as time_s", key);
  }
  return "";
}

// A completed run in which at least one job ran: only such a run has job averages.
bool ran_jobs(const Json& record) {
  return record["status"] == "completed" && record["metrics"]["jobs_completed"].get<double>() > 0;
}

struct Task {
  std::size_t workload, window, policy;
};
using Records = std::vector<std::vector<std::vector<Json>>>;  // run records by workload, window, policy

std::string run_file(const Task& t) { return fmt::format("w{}-k{:04}-p{:02}.json", t.workload, t.window, t.policy); }

void write_row(std::ostream& out, std::initializer_list<std::string_view> fields) {
  bool first = true;
  for (const auto f : fields) {
    if (!first) out << ',';
    csv::write_field(out, f);
    first = false;
  }
}

// The outputs, computed only from the run records (fresh or reused: the same bytes either way).
struct Writer {
  const Config& config;
  const Records& records;  // [workload][window][policy]

  std::string runs_csv(bool timings) const {
    std::ostringstream out;
    out << "cluster,trace,window,policy";
    if (!timings) out << ",status,error";
    const std::vector<const char*> columns = run_columns(timings);
    for (const char* k : columns) out << ',' << k;
    out << '\n';
    for (std::size_t w = 0; w < records.size(); ++w)
      for (const auto& window : records[w])
        for (const Json& r : window) {
          const Workload& wl = config.workloads[w];
          write_row(out, {wl.cluster_label, wl.trace.label, r["window"].get<std::string>(), r["policy"].get<std::string>()});
          if (!timings) {
            out << ',' << r["status"].get<std::string>() << ',';
            csv::write_field(out, r["error"].get<std::string>());
          }
          for (const char* k : columns) out << ',' << (r.contains("metrics") ? number(r["metrics"][k].get<double>()) : "");
          out << '\n';
        }
    return out.str();
  }

  // Per-window values of `metric` for policy p of workload w: NaN where the run failed or no job of
  // the window ran (every one rejected), which leaves its averages undefined, not 0.
  std::vector<double> values(std::size_t w, std::size_t p, const char* metric) const {
    std::vector<double> v;
    for (const auto& window : records[w]) {
      const Json& r = window[p];
      v.push_back(ran_jobs(r) ? r["metrics"][metric].get<double>() : std::nan(""));
    }
    return v;
  }

  struct Row {
    std::string metric;
    std::size_t windows = 0;
    double mean = 0, p95 = 0;
    std::vector<Improvement> vs;  // per baseline; windows = 0 for the baseline itself
  };
  std::vector<Row> summary(std::size_t w, std::size_t p) const {
    const Workload& wl = config.workloads[w];
    std::vector<Row> rows;
    for (std::size_t m = 0; m < std::size(kCompared); ++m) {
      const metrics::MetricDef& metric = metrics::summary_metric(kCompared[m]);
      const auto mine = values(w, p, metric.name);
      Row row{metric.name, 0, 0, 0, {}};
      std::vector<double> ok;
      for (const double x : mine)
        if (!std::isnan(x)) ok.push_back(x);
      row.windows = ok.size();
      for (const double x : ok) row.mean += x / static_cast<double>(ok.size());
      row.p95 = metrics::quantile(ok, 0.95);
      for (std::size_t b = 0; b < config.baselines.size(); ++b) {
        std::size_t bp = 0;
        while (wl.policies[bp].label != config.baselines[b]) ++bp;
        if (bp == p) {
          row.vs.push_back({});
          continue;
        }
        const auto base = values(w, bp, metric.name);
        std::vector<double> pb, pp;  // pairs where both runs completed
        for (std::size_t k = 0; k < base.size(); ++k)
          if (!std::isnan(base[k]) && !std::isnan(mine[k])) pb.push_back(base[k]), pp.push_back(mine[k]);
        // One stream per comparison, from the seed: intervals do not depend on the order of computation.
        const std::uint64_t seed = config.seed ^ (0x9E3779B97F4A7C15ULL * (1 + w * 1000003 + p * 1009 + bp * 101 + m));
        row.vs.push_back(paired_improvement(pb, pp, metric.better == metrics::Better::lower, config.bootstrap, seed));
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  // summary.csv's table (its text is to_csv(); summary.md reads the same table, not the text).
  report::CsvTable summary_table() const {
    report::CsvTable t;
    t.header = {"cluster", "trace", "policy", "metric", "windows", "mean", "p95"};
    for (const auto& b : config.baselines)
      for (const char* suffix : {"pct", "ci_low", "ci_high", "pairs"}) t.header.push_back(fmt::format("vs_{}_{}", b, suffix));
    for (std::size_t w = 0; w < records.size(); ++w) {
      const Workload& wl = config.workloads[w];
      for (std::size_t p = 0; p < wl.policies.size(); ++p)
        for (const Row& row : summary(w, p)) {
          std::vector<std::string> r = {wl.cluster_label, wl.trace.label, wl.policies[p].label, row.metric, std::to_string(row.windows),
                                        row.windows ? number(row.mean) : "", row.windows ? number(row.p95) : ""};
          for (const Improvement& i : row.vs) {
            const bool shown = i.windows != 0 && i.defined;
            for (const double v : {i.pct, i.ci_low, i.ci_high}) r.push_back(shown ? number(v) : "");
            r.push_back(std::to_string(i.windows));
          }
          t.rows.push_back(std::move(r));
        }
    }
    return t;
  }

  std::string cdf_csv() const {
    std::ostringstream out;
    out << "cluster,trace,policy,metric,quantile,value\n";
    for (std::size_t w = 0; w < records.size(); ++w) {
      const Workload& wl = config.workloads[w];
      for (std::size_t p = 0; p < wl.policies.size(); ++p)
        for (const char* metric : {"wait_s", "jct_s"}) {
          std::vector<double> all;
          for (const auto& window : records[w])
            if (window[p]["status"] == "completed")
              for (const auto& v : window[p][metric]) all.push_back(v.get<double>());
          if (all.empty()) continue;
          std::sort(all.begin(), all.end());
          for (int q = 0; q <= 100; ++q) {
            write_row(out, {wl.cluster_label, wl.trace.label, wl.policies[p].label, metric});
            out << ',' << number(q / 100.0) << ',' << number(metrics::sorted_quantile(all, q / 100.0)) << '\n';
          }
        }
    }
    return out.str();
  }

  std::string timeseries_csv() const {
    std::ostringstream out;
    out << "cluster,trace,window,policy,time_s,queue_jobs,gpus_busy,fragmentation\n";
    for (std::size_t w = 0; w < records.size(); ++w) {
      const Workload& wl = config.workloads[w];
      for (const auto& window : records[w])
        for (const Json& r : window) {
          if (!r.contains("timeseries")) continue;
          const Json& ts = r["timeseries"];
          for (std::size_t i = 0; i < ts["time_s"].size(); ++i) {
            write_row(out, {wl.cluster_label, wl.trace.label, r["window"].get<std::string>(), r["policy"].get<std::string>()});
            out << ',' << number(ts["time_s"][i].get<double>()) << ',' << ts["queue_jobs"][i].get<long>() << ','
                << ts["gpus_busy"][i].get<long>() << ',' << number(ts["fragmentation"][i].get<double>()) << '\n';
          }
        }
    }
    return out.str();
  }
};

Json read_json(const fs::path& path) {
  const auto text = read_file(path.string());
  if (!text) throw InputError(path.string() + ": cannot open");
  return Json::parse(*text);
}

}  // namespace

namespace {

// Claims `out` for the experiment whose effective config is `config_text`: refuses a folder that holds
// another experiment (or any, without `resume`) and writes config.json.
void claim_out_dir(const fs::path& out, const Json& effective, const std::string& config_text, bool resume) {
  const std::string out_dir = out.string();
  std::error_code ec;
  if (fs::exists(out / "config.json")) {
    // Another command's results (each of those records its command; an experiment's config does not).
    if (const auto text = read_file((out / "config.json").string())) {
      const Json other = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
      if (other.is_object() && other.contains("command") && other["command"].is_string())
        throw InputError(fmt::format("--out {}: holds the results of rltune {}, not an experiment; choose another folder", out_dir,
                                     other["command"].get<std::string>()));
    }
    if (!resume)
      throw InputError(fmt::format("--out {}: already holds an experiment; add --resume to continue it, or choose "
                                   "another folder", out_dir));
    Json previous;
    try {
      previous = read_json(out / "config.json");
    } catch (const std::exception& e) {
      throw InputError(fmt::format("{}: unreadable: {}", (out / "config.json").string(), e.what()));
    }
    if (!previous.is_object()) throw InputError(fmt::format("{}: unreadable: not a JSON object", (out / "config.json").string()));
    // The config file's own path may differ (./exp.yaml, another working folder), and so may what only
    // the outputs read (they are written again from the runs); what the runs depend on may not.
    Json a = previous, b = Json::parse(json_text(effective));  // as written: bytes that are not UTF-8 replaced
    a.erase("config_file"), b.erase("config_file");
    bool outputs_change = false;
    for (const char* key : {"name", "description", "baselines", "bootstrap"}) {
      outputs_change |= a.value(key, Json()) != b.value(key, Json());
      a.erase(key), b.erase(key);
    }
    if (a.contains("inputs") && a["inputs"] != b["inputs"]) {
      for (const auto& [file, digest] : b["inputs"].items())
        if (a["inputs"].value(file, "") != digest)
          throw InputError(fmt::format("--resume: {} has changed since the runs in {} (its checksum differs); run into "
                                       "another --out",
                                       file, out_dir));
      throw InputError(fmt::format("--resume: the runs in {} read other input files; run into another --out", out_dir));
    }
    if (a != b) {  // named down to the first value that differs, e.g. workloads/0/policies/2
      const std::string path = Json::diff(a, b).at(0).at("path").get<std::string>().substr(1);
      throw InputError(fmt::format("--resume: {} was written by a different config ('{}' differs); choose another --out",
                                   (out / "config.json").string(), path));
    }
    // What the old name, description, baselines or bootstrap produced goes now, so that a resume stopped
    // before its end leaves no summary or report that config.json no longer describes.
    if (outputs_change)
      for (const char* f : {"summary.csv", "summary.md", "report.md", "report.html", "figures"})
        if (fs::remove_all(out / f, ec); ec)
          throw InputError(fmt::format("--resume: cannot remove {}, which the changed config no longer describes: {}",
                                       (out / f).string(), ec.message()));
  } else if (!fs::is_empty(out / "runs", ec) && !ec) {
    // Without the config that wrote them, nothing tells these runs' workloads and policies from this one's:
    // reused by file name, they would give another config's numbers.
    throw InputError(fmt::format("--out {}: holds runs but no config.json, so which config wrote them is unknown; restore "
                                 "its config.json or choose another folder",
                                 out_dir));
  }
  fs::create_directories(out / "runs", ec);
  if (ec) throw InputError(fmt::format("--out {}: cannot create the folder: {}", out_dir, ec.message()));
  write_file((out / "config.json").string(), config_text);
}

// Runs without a job that ran: their rows stay in runs.csv, but summaries leave them out.
void warn_no_jobs_ran(const Records& records) {
  std::size_t empty = 0;
  for (const auto& workload : records)
    for (const auto& window : workload)
      for (const Json& r : window) empty += r["status"] == "completed" && !ran_jobs(r);
  if (empty > 0)
    spdlog::warn("{} run(s) had no job that ran (every job of the window rejected): left out of the summaries, whose "
                 "'windows' column counts the rest",
                 empty);
}

// Warns once when MILP solves hit the wall-clock limit (their results may then depend on machine load).
void warn_time_limit_hits(const Records& records) {
  std::size_t hits = 0, solves = 0;
  for (const auto& workload : records)
    for (const auto& window : workload)
      for (const Json& r : window)
        if (r.contains("metrics") && r["metrics"].contains("milp_time_limit_hits")) {
          hits += r["metrics"]["milp_time_limit_hits"].get<std::size_t>();
          solves += r["metrics"]["milp_solves"].get<std::size_t>();
        }
  if (const std::string warning = metrics::time_limit_warning(hits, solves); !warning.empty()) spdlog::warn("{}", warning);
}

void write_outputs(const fs::path& out, const Config& config, const Json& effective, const Records& records) {
  const Writer writer{config, records};
  write_file((out / "runs.csv").string(), writer.runs_csv(false));
  write_file((out / "timings.csv").string(), writer.runs_csv(true));
  report::CsvTable summary = writer.summary_table();
  summary.source = (out / "summary.csv").string();  // what summary.md's errors name
  write_file((out / "summary.csv").string(), summary.to_csv());
  write_file((out / "summary.md").string(), report::summary_markdown(effective, summary));
  write_file((out / "cdf.csv").string(), writer.cdf_csv());
  write_file((out / "timeseries.csv").string(), writer.timeseries_csv());
}

}  // namespace

Outcome run_experiment(const Config& config, const std::string& out_dir, const RunOptions& options, const Comm& comm) {
  const auto begin = std::chrono::steady_clock::now();
  const bool writer = comm.rank() == 0;  // the rank that writes the outputs and shows progress
  // Everything that can fail on bad input fails here, before the first run.
  std::vector<LoadedWorkload> loaded;
  Models models;
  const fs::path out(out_dir);
  Json effective = config.effective;
  std::optional<FolderLock> lock;  // held until the experiment ends
  together(comm, [&] {
    for (const auto& w : config.workloads) loaded.push_back(load_workload(w));
    models = load_models(config.workloads);
    effective["rltune_version"] = RLTUNE_VERSION;
    effective["inputs"] = input_digests(config, models);
    if (writer) {
      std::error_code ec;
      fs::create_directories(out, ec);
      if (ec) throw InputError(fmt::format("--out {}: cannot create the folder: {}", out.string(), ec.message()));
      lock.emplace(out.string(), "--out " + out.string());  // before the claim: two runs into one folder would mix their runs
      claim_out_dir(out, effective, json_text(effective, 2) + "\n", options.resume);
    }
  });

  // Runs in rounds of one window of every workload, so that the progress bar's ETA, taken from the
  // runs done so far, sees every workload's cost from the first round (workload after workload, a
  // cheap first workload made it several times too low). Records are kept by task: the order of
  // running changes no output.
  std::vector<Task> tasks;
  Records records(config.workloads.size());
  std::size_t rounds = 0;
  for (std::size_t w = 0; w < config.workloads.size(); ++w) {
    records[w].assign(loaded[w].starts.size(), std::vector<Json>(config.workloads[w].policies.size()));
    rounds = std::max(rounds, loaded[w].starts.size());
  }
  for (std::size_t k = 0; k < rounds; ++k)
    for (std::size_t w = 0; w < config.workloads.size(); ++w)
      if (k < loaded[w].starts.size())
        for (std::size_t p = 0; p < config.workloads[w].policies.size(); ++p) tasks.push_back({w, k, p});

  // Rank 0 decides which runs an earlier invocation finished, and tells the others what is left.
  Outcome outcome;
  outcome.runs = tasks.size();
  std::string left;  // the tasks to run, as indices into `tasks`, one per line
  for (std::size_t i = 0; writer && i < tasks.size(); ++i) {
    const Task& t = tasks[i];
    const fs::path file = out / "runs" / run_file(t);
    if (options.resume && fs::exists(file)) {
      try {
        Json r = read_json(file);
        if (r.is_object() && r.value("status", "") == "completed") {  // a failed run is simply run again
          const std::string problem = record_problem(r, window_label(loaded[t.workload], t.window),
                                                     config.workloads[t.workload].policies[t.policy].label,
                                                     static_cast<int>(t.window) < config.timeseries_windows);
          if (problem.empty()) {
            records[t.workload][t.window][t.policy] = std::move(r);
            ++outcome.reused;
            continue;
          }
          spdlog::warn("{}: {}; running it again", file.string(), problem);
        }
      } catch (const std::exception& e) {
        spdlog::warn("{}: unreadable ({}); running it again", file.string(), e.what());
      }
    }
    left += std::to_string(i) + "\n";
  }
  std::vector<Task> todo;  // this rank's share: every size()-th task left, so each rank gets every workload
  std::istringstream lines(comm.all_gather(writer ? left : "")[0]);
  for (std::size_t i = 0, k = 0; lines >> i; ++k)
    if (k % static_cast<std::size_t>(comm.size()) == static_cast<std::size_t>(comm.rank())) todo.push_back(tasks[i]);

  std::mutex mutex;  // guards progress, the failure count and the records
  std::size_t done = 0;
  std::unique_ptr<Progress> progress;
  if (options.progress && writer && !todo.empty())
    progress = std::make_unique<Progress>(fmt::format("experiment {}{}", config.name,
                                                      comm.size() > 1 ? fmt::format(" (rank 0 of {})", comm.size()) : ""),
                                          static_cast<double>(todo.size()));
  together(comm, [&] {
    try {
      for_each_parallel(todo.size(), options.jobs, [&](std::size_t i, int) {
        const Task& t = todo[i];
        const Workload& w = config.workloads[t.workload];
        fail_here_for_tests(comm, static_cast<long>(i), "run " + run_file(t));
        Json r = run_one(w, loaded[t.workload], t.policy, t.window,
                         static_cast<int>(t.window) < config.timeseries_windows, models);
        write_file((out / "runs" / run_file(t)).string(), json_text(r) + "\n");  // a failed write stops everyone
        std::lock_guard lock(mutex);
        if (r["status"] != "completed") {
          ++outcome.failed;
          spdlog::error("run {}/{} window {} policy {} failed: {}", w.cluster_label, w.trace.label, r["window"].get<std::string>(),
                        w.policies[t.policy].label, r["error"].get<std::string>());
        }
        records[t.workload][t.window][t.policy] = std::move(r);
        ++done;
        if (progress)
          progress->update(static_cast<double>(done), fmt::format("{}/{} runs{}", done, todo.size(),
                                                                  outcome.failed ? fmt::format(", {} failed", outcome.failed) : ""));
      });
    } catch (const std::exception& e) {
      throw InputError(std::string("experiment stopped: ") + e.what());
    }
  });
  if (progress) progress->finish(fmt::format("{} runs, {} failed", todo.size(), outcome.failed));

  // Every rank's records to rank 0 (each line: the task's index, then its record).
  if (comm.size() > 1) {
    std::string mine;
    for (const Task& t : todo)
      mine += fmt::format("{} {} {} {}\n", t.workload, t.window, t.policy, json_text(records[t.workload][t.window][t.policy]));
    const auto all = comm.gather_to_root(mine);
    outcome.failed = 0;
    for (std::size_t r = 0; r < all.size(); ++r) {
      std::istringstream in(all[r]);
      for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        Task t;
        fields >> t.workload >> t.window >> t.policy;
        Json& record = records[t.workload][t.window][t.policy];
        record = Json::parse(line.substr(static_cast<std::size_t>(fields.tellg()) + 1));
        outcome.failed += record["status"] != "completed";
      }
    }
  }
  together(comm, [&] {
    if (!writer) return;
    warn_time_limit_hits(records);
    warn_no_jobs_ran(records);
    write_outputs(out, config, effective, records);
  });
  outcome.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return outcome;
}

std::vector<std::vector<metrics::RunMetrics>> run_paired(const Workload& workload, const LoadedWorkload& loaded,
                                                         const Models& models, int threads) {
  const std::size_t policies = workload.policies.size();
  const std::vector<sim::EngineOptions> engines = prepared_engines(workload, loaded);
  std::vector<std::vector<metrics::RunMetrics>> runs(loaded.starts.size(), std::vector<metrics::RunMetrics>(policies));
  for_each_parallel(runs.size() * policies, threads, [&](std::size_t i, int) {
    const std::size_t window = i / policies, policy = i % policies;
    runs[window][policy] = run_policy(loaded, workload.policies[policy], engines[policy], window_jobs(workload, loaded, window),
                                      window_label(loaded, window), models, nullptr);
  });
  return runs;
}

}  // namespace rltune::experiment
