// Trace loading shared by commands, and the commands that inspect or make inputs:
// `trace-stats`, `policies`, `generate` and `convert`.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "core/log.h"
#include "metrics/metrics.h"
#include "policy/registry.h"
#include "report/outputs.h"
#include "report/table.h"
#include "sim/runtime_fit.h"
#include "sim/window.h"
#include "workload/generator.h"

namespace rltune::cli {

void TraceArgs::add_format_options(CLI::App& app, bool with_seed) {
  if (with_seed)
    app.add_option("--seed", sample_seed, "Seed of the generated default workload and of gavel duration sampling")
        ->capture_default_str()
        ->check(seed_value());
  std::string names = "auto";
  for (const auto& r : trace::readers()) names += ", " + r.name;
  file_options = {app.add_option("--format", read.format, "Trace format: " + names)->capture_default_str()};
  format_options = {
      {app.add_option("--vc-column", read.vc_column, "rltune format: 0-based VC column, -1 = none")
           ->capture_default_str()
           ->check(CLI::Range(trace::kMinColumn, trace::kMaxColumn)),
       trace::format_of_setting("vc_column")},
      {app.add_option("--gpu-type-column", read.gpu_type_column, "rltune format: 0-based GPU-type column, -1 = none")
           ->capture_default_str()
           ->check(CLI::Range(trace::kMinColumn, trace::kMaxColumn)),
       trace::format_of_setting("gpu_type_column")},
      {app.add_option("--duration-source", read.duration_source,
                      "gavel format: CSV of real runtimes to sample durations from (e.g. philly_job_distribution.csv)"),
       trace::format_of_setting("duration_source")},
      {app.add_option("--gpus-per-proc", read.gpus_per_proc, "swf format: GPUs per SWF processor")
           ->capture_default_str()
           ->check(number_range(trace::kMinGpusPerProc, trace::kMaxGpusPerProc)),
       trace::format_of_setting("gpus_per_proc")},
      {app.add_option("--pai-job-table", pai_job_table, "pai format: the PAI 2020 job table (pai_job_table.csv)"), "pai"},
      {app.add_option("--pai-task-table", read.pai_task_table, "pai format: the PAI 2020 task table (pai_task_table.csv)"),
       trace::format_of_setting("pai_task_table")}};
  file_options.push_back(app.add_flag("--skip-invalid", read.skip_invalid, "Skip bad rows (counted by reason) instead of stopping"));
  file_options.push_back(app.add_option("--max-line-bytes", read.max_line_bytes,
                                        "Longest line a text trace may have; a longer one stops the read (binary or wrong file)")
                             ->capture_default_str()
                             ->check(CLI::Range(std::size_t{64}, std::size_t{1} << 32)));
  for (const auto& [option, format] : format_options) file_options.push_back(option);
}

void TraceArgs::refuse_file_options(const std::string& why) const {
  for (const CLI::Option* o : file_options)
    if (o->count() > 0) throw InputError(fmt::format("{} applies only to reading a trace file; {}", o->get_name(), why));
}

report::Json run_config(const std::string& command, const cluster::ClusterSpec& cluster, const trace::Trace& trace,
                        const TraceArgs& trace_args, const ProfileArgs& profile, const policy::ProfileOptions& policy) {
  report::Json config;
  config["command"] = command;
  config["cluster"] = cluster.source;
  config["trace"] = trace.source;
  config["format"] = trace.format;
  trace_args.describe(config, cluster, trace);
  config["policy"] = policy.priority;
  profile.describe(config, policy);
  return config;
}

void TraceArgs::describe(report::Json& config, const cluster::ClusterSpec& cluster, const trace::Trace& trace) const {
  config["trace"] = trace.source;
  config["format"] = trace.format;
  config["rows_skipped"] = trace.skipped.skipped;
  report::Json files = report::Json::array();
  if (!pai_job_table.empty()) files.push_back(pai_job_table);
  for (const auto& f : paths) files.push_back(f);
  config["trace_files"] = files;
  config["seed"] = sample_seed;
  if (uses_sample())
    config["generated"] = {{"like", like.empty() ? workload::default_family(cluster.source) : like},
                           {"jobs", sample_jobs}, {"load", sample_load}};
  else
    config["read_options"] = {{"vc_column", read.vc_column}, {"gpu_type_column", read.gpu_type_column},
                              {"duration_source", read.duration_source}, {"gpus_per_proc", read.gpus_per_proc},
                              {"pai_task_table", read.pai_task_table}, {"skip_invalid", read.skip_invalid}};
}

void TraceArgs::add_options(CLI::App& app) {
  app.add_option("--trace", paths, "Trace file(s) of one format (default: the built-in sample workload)");
  add_format_options(app);
  sample_options = {
      app.add_option("--like", like,
                     "Workload family (philly, helios, alibaba) or model file of the generated default workload "
                     "(default: the family named like the cluster preset, else philly)"),
      app.add_option("--sample-jobs", sample_jobs, "Jobs in the generated default workload")
          ->capture_default_str()
          ->check(CLI::Range(1, 10'000'000)),
      app.add_option("--sample-load", sample_load, "Offered load of the generated default workload")
          ->capture_default_str()
          ->check(number_range(workload::kMinLoad, workload::kMaxLoad))};
}

trace::Trace TraceArgs::read_files(std::vector<std::string> files) const {
  if (!pai_job_table.empty()) files.insert(files.begin(), pai_job_table);
  trace::ReadOptions options = read;
  options.seed = sample_seed;
  std::vector<trace::GivenSetting> given;
  for (const auto& [option, format] : format_options)
    if (option->count() > 0) given.push_back({option->get_name(), format});
  trace::Trace t = trace::read_traces_as_given(files, options, given);
  if (t.skipped.skipped > 0) {
    spdlog::warn("{}: skipped {} rows", t.source, t.skipped.skipped);
    for (const auto& [reason, count] : t.skipped.by_reason) spdlog::warn("  {} x {}", count, reason);
    for (const auto& example : t.skipped.examples) spdlog::info("  e.g. {}", example);
  }
  return t;
}

trace::Trace TraceArgs::load(const cluster::ClusterSpec& cluster) const {
  for (const CLI::Option* o : sample_options)  // the workload would not be generated: the option would do nothing
    if (!uses_sample() && o->count() > 0)
      throw InputError(fmt::format("{} applies only to the generated default workload, not to --trace", o->get_name()));
  if (uses_sample()) {
    refuse_file_options("no --trace is given");
    const workload::WorkloadModel model = workload::load_model(like.empty() ? workload::default_family(cluster.source) : like);
    return workload::generate(model, cluster, {.jobs = sample_jobs, .load = sample_load, .seed = sample_seed});
  }
  return read_files(paths);
}

namespace {

struct StatsArgs {
  TraceArgs trace;
  std::string cluster = "helios";
  ProfileArgs profile;  // --runtime: estimates are measured in an fcfs replay under these settings
};

// How good the runtime estimates are when fcfs replays the trace: predictions depend on which jobs have
// finished, so on the schedule.
// Predictions are also measured on the jobs after the default training split alone: where a learned
// model is fitted, those are the jobs it never saw.
void print_estimate_accuracy(const StatsArgs& a, const cluster::ClusterSpec& cluster, const trace::Trace& t) {
  const double train_split = sim::WindowSettings{}.train_split;
  const sim::EngineOptions engine = sim::with_runtime_model(a.profile.engine(), t.jobs, train_split);
  if (engine.runtime == sim::RuntimeKnowledge::oracle) return;
  const policy::ProfileOptions fcfs = a.profile.profile("fcfs");
  const auto scheduler = policy::make_profile(fcfs);
  const metrics::RunMetrics run = run_window(cluster, {t.jobs, 0}, engine, *scheduler, "all");
  std::cout << fmt::format("\nruntime estimates ({}, in an {} replay):\n  all jobs:  {}\n", sim::to_string(engine.runtime), fcfs.name(),
                           metrics::describe(metrics::estimate_accuracy({&run})));
  if (!sim::is_predicted(engine.runtime)) return;
  const std::size_t first = sim::split_range(t.jobs.size(), train_split, sim::Split::validation).first;
  metrics::RunMetrics held_out = run;
  held_out.jobs.erase(held_out.jobs.begin(), held_out.jobs.begin() + static_cast<std::ptrdiff_t>(std::min(first, held_out.jobs.size())));
  held_out.estimate_sources = {};  // counted over all jobs only
  std::cout << fmt::format("  held out:  {} (jobs {}.. after the training split{})\n",
                           metrics::describe(metrics::estimate_accuracy({&held_out})), first,
                           engine.runtime_model && engine.runtime_model_file.empty() ? ", which the model was fitted on" : "");
}

// Offered load: GPU-seconds demanded over GPU-seconds available during the submit span, for the cluster
// and per pool (a job that several pools accept is shared equally between them), with the jobs that
// would be rejected. Warns when the jobs arrive faster than the long ones run: the load then says
// little about contention (most of the work runs after the last arrival).
void print_offered_load(const cluster::ClusterSpec& cluster, std::span<const trace::JobSpec> jobs) {
  if (jobs.empty()) return;
  const Seconds first = jobs.front().submit, last = jobs.back().submit;
  std::vector<double> pool_work(cluster.pools.size(), 0);
  std::vector<double> durations;
  std::map<std::string, std::size_t> rejected;
  std::vector<PoolId> eligible;
  double total_work = 0;
  for (const auto& j : jobs) {
    durations.push_back(static_cast<double>(j.duration));
    const std::string problem = cluster::admission_problem(cluster, j, eligible);
    if (!problem.empty()) {
      ++rejected[problem.substr(0, problem.find(':'))];
      continue;
    }
    const double work = static_cast<double>(j.duration) * j.gpus;
    total_work += work;
    for (const PoolId p : eligible) pool_work[p] += work / static_cast<double>(eligible.size());
  }
  const double span = static_cast<double>(last - first);
  // Jobs that all arrive in one second have no arrival rate: a load over a 1 s span would be nonsense.
  const auto load = [&](double work, int gpus) { return span > 0 ? fmt::format("{:.2f}", work / (span * gpus)) : std::string("n/a"); };
  std::cout << fmt::format("\noffered load on cluster {} ({} GPUs): {}{}\n", cluster.name, cluster.total_gpus(),
                           load(total_work, cluster.total_gpus()), span > 0 ? "" : " (every job arrives at the same second)");
  for (std::size_t p = 0; p < cluster.pools.size(); ++p)
    std::cout << fmt::format("  pool {:<10} {:>5} GPUs  load {}\n", cluster.pools[p].name, cluster.pools[p].total_gpus(),
                             load(pool_work[p], cluster.pools[p].total_gpus()));
  for (const auto& [reason, n] : rejected) std::cout << fmt::format("  would be rejected: {} x {}\n", n, reason);
  if (const double p99 = metrics::quantile(durations, 0.99); span > 0 && span < p99)
    spdlog::warn("the jobs arrive within {}, less than the p99 duration ({}): much of the work runs after the last "
                 "arrival, so the offered load overstates how contended the cluster is",
                 report::human_duration(span), report::human_duration(p99));
}

int run_trace_stats(const StatsArgs& a) {
  const cluster::ClusterSpec cluster = cluster::load_cluster(a.cluster);
  const trace::Trace t = a.trace.load(cluster);
  const auto& jobs = t.jobs;
  const Seconds first = jobs.front().submit, last = jobs.back().submit;
  std::cout << fmt::format("trace      {} (format {})\n", t.source, t.format);
  std::cout << fmt::format("jobs       {}{}\n", jobs.size(),
                           t.skipped.skipped ? fmt::format(" ({} rows skipped)", t.skipped.skipped) : "");
  std::cout << fmt::format("submits    {} .. {} s (span {})\n", first, last, report::human_duration(double(last - first)));

  std::map<int, std::size_t> by_gpus;
  std::vector<double> durations;
  std::size_t with_request = 0;
  for (const auto& j : jobs) {
    ++by_gpus[j.gpus];
    durations.push_back(static_cast<double>(j.duration));
    with_request += j.requested_time > 0;
  }
  std::cout << "GPUs       ";
  for (const auto& [g, n] : by_gpus) std::cout << fmt::format("{}:{} ", g, n);
  std::cout << "\nduration   ";
  for (const double q : {0.1, 0.5, 0.9, 0.99, 1.0})
    std::cout << fmt::format("p{:g}={} ", q * 100, report::human_duration(metrics::quantile(durations, q)));
  std::cout << fmt::format("\nrequested  {} of {} jobs give a requested time\n", with_request, jobs.size());

  print_offered_load(cluster, jobs);
  print_estimate_accuracy(a, cluster, t);
  return 0;
}

int run_policies() {
  std::cout << "priority policies (--policy):\n";
  for (const auto& p : policy::priority_policies()) std::cout << fmt::format("  {:<12} {}\n", p.name, p.description);
  std::cout << "\nplacement policies (--placement):\n";
  for (const auto& p : policy::placement_policies()) std::cout << fmt::format("  {:<12} {}\n", p.name, p.description);
  std::cout << "\nblocking (--blocking): global (a blocked job stops all starts), pool (only in its pools)\n"
               "backfill (--backfill): EASY backfilling by runtime estimates (--runtime oracle|requested|predicted)\n";
  std::cout << "\nsemantics (--semantics), see docs/fidelity.md:\n";
  for (const auto& s : policy::semantics_profiles()) std::cout << fmt::format("  {:<12} {}\n", s.name, s.description);
  return 0;
}

struct GenerateArgs {
  TraceArgs input;  // how to read --like when it is a trace
  std::string like;
  std::string cluster = "helios";
  std::string out;
  std::string save_model;
  int jobs = 2000;
  unsigned long long seed = 1;
  double load = 0.9;
};

bool is_model_file(const std::string& path) {
  const auto ends = [&](const std::string& suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

// --like: a family, a model file, or a trace to fit.
workload::WorkloadModel resolve_model(const GenerateArgs& a) {
  const std::string like = a.like.empty() ? workload::default_family(a.cluster) : a.like;
  const auto families = workload::family_names();
  // Neither a family nor a file: load_model's message lists the families, where reading a trace would
  // only say that the file cannot be opened.
  if (std::find(families.begin(), families.end(), like) != families.end() || is_model_file(like) ||
      !std::filesystem::exists(like)) {
    a.input.refuse_file_options(fmt::format("--like {} is not a trace file", like));
    return workload::load_model(like);
  }
  trace::Trace t;
  try {
    t = a.input.read_files({like});
  } catch (const InputError& e) {  // a model file named otherwise is read as a trace, of no format
    if (std::string(e.what()).find("cannot tell the trace format") == std::string::npos) throw;
    throw InputError(fmt::format("{} (--like reads a file as a workload model only when it ends in .yaml or .yml)", e.what()));
  }
  return workload::fit_model(t, std::filesystem::path(like).stem().string());
}

int run_generate(const GenerateArgs& a) {
  // Nor any file a trace given as --like is read with.
  const std::vector<std::string> inputs{a.like, a.cluster, a.input.pai_job_table, a.input.read.pai_task_table,
                                        a.input.read.duration_source};
  refuse_overwriting("--out", a.out, inputs);
  refuse_overwriting("--save-model", a.save_model, inputs);
  std::error_code ec;  // neither need exist yet: compared as paths
  if (!a.out.empty() && std::filesystem::weakly_canonical(a.out, ec) == std::filesystem::weakly_canonical(a.save_model, ec))
    throw InputError(fmt::format("--save-model {}: is also --out; the trace would replace the model", a.save_model));
  const cluster::ClusterSpec cluster = cluster::load_cluster(a.cluster);
  const workload::WorkloadModel model = resolve_model(a);
  if (!a.save_model.empty()) {
    report::write_file(a.save_model, workload::to_yaml(model, "Workload model written by rltune generate --save-model.\n"
                                                             "Regenerate: rltune generate --like <source> --save-model <file>"));
    std::cout << fmt::format("wrote the workload model ({}) to {}\n", model.source, a.save_model);
  }
  if (a.out.empty()) return 0;
  const trace::Trace t = workload::generate(model, cluster, {.jobs = a.jobs, .load = a.load, .seed = a.seed});
  // Streamed: a large trace is not held a second time as text.
  report::write_file(a.out, [&](std::ostream& out) { trace::write_canonical(out, t.jobs); });
  std::cout << fmt::format("wrote {} jobs like {} at offered load {} on {} ({} GPUs), seed {}, to {}\n", t.jobs.size(),
                           model.name, t.jobs.size() > 1 ? fmt::format("{}", a.load) : "n/a (one job has no arrival rate)",
                           cluster.name, cluster.total_gpus(), a.seed, a.out);
  print_offered_load(cluster, t.jobs);  // the target is the cluster's; its pools may differ
  return 0;
}

struct ConvertArgs {
  TraceArgs input;
  std::vector<std::string> files;
  std::string out;
};

// A one-paragraph account of what was read, kept and skipped.
std::string conversion_report(const trace::Trace& t, std::size_t files, const std::string& out) {
  std::size_t gpus = 0, censored = 0, fractional = 0, typed = 0;
  for (const auto& j : t.jobs) {
    gpus += j.gpus > 0;
    censored += j.censored;
    fractional += j.gpu_demand >= 0 && std::abs(j.gpu_demand - std::round(j.gpu_demand)) > 1e-6;  // as whole_count: noise is not a fraction
    typed += !j.gpu_types.empty();
  }
  std::string text = fmt::format("Read {} file{} as {}: kept {} jobs", files, files == 1 ? "" : "s", t.format, t.jobs.size());
  if (!t.jobs.empty())
    text += fmt::format(" submitted over {} ({} with GPUs, {} naming GPU types, {} with fractional GPU demand rounded "
                        "up, {} with censored durations)",
                        report::human_duration(double(t.jobs.back().submit - t.jobs.front().submit)), gpus, typed,
                        fractional, censored);
  if (t.skipped.skipped == 0) text += "; nothing was skipped.";
  else {
    text += fmt::format("; skipped {} rows:", t.skipped.skipped);
    for (std::size_t i = 0; i < t.skipped.by_reason.size(); ++i)
      text += fmt::format("{} {} x {}", i ? "," : "", t.skipped.by_reason[i].second, t.skipped.by_reason[i].first);
    text += ".";
  }
  text += fmt::format(" Wrote {}.\n", out);
  if (t.time_origin != 0) {  // the canonical format has no calendar: files converted apart lose their common clock
    const std::time_t origin = t.time_origin;
    std::tm utc{};
    gmtime_r(&origin, &utc);
    // PAI's times are seconds on the trace's own clock, not dates: 1970 would mislead.
    const std::string when = t.time_origin >= 946'684'800 ? fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", utc)
                                                          : fmt::format("{} s on the files' own clock", t.time_origin);
    text += fmt::format("Its times count from the first submit, {}; to keep several such files on one clock, convert them "
                        "together.\n",
                        when);
  }
  return text;
}

int run_convert(const ConvertArgs& a) {
  std::vector<std::string> inputs = a.files;
  inputs.push_back(a.input.pai_job_table);
  inputs.push_back(a.input.read.pai_task_table);
  inputs.push_back(a.input.read.duration_source);
  refuse_overwriting("--out", a.out, inputs);
  const trace::Trace t = a.input.read_files(a.files);
  report::write_file(a.out, [&](std::ostream& out) { trace::write_canonical(out, t.jobs); });
  std::cout << conversion_report(t, a.files.size() + !a.input.pai_job_table.empty(), a.out);
  return 0;
}

}  // namespace

Command add_trace_stats(CLI::App& app) {
  auto args = std::make_shared<StatsArgs>();
  CLI::App* sub = app.add_subcommand("trace-stats", "Summarise a trace: sizes, durations, offered load per pool");
  args->trace.add_options(*sub);
  sub->add_option("--cluster", args->cluster, "Cluster for the offered load (preset or YAML file)")->capture_default_str();
  const std::size_t before = sub->get_options().size();
  args->profile.add_options(*sub);
  // The scheduler options only shape the FCFS replay that measures runtime estimates.
  std::vector<std::string> replay_flags;
  for (std::size_t k = before; k < sub->get_options().size(); ++k)
    if (const std::string name = sub->get_options()[k]->get_name(); name != "--runtime") replay_flags.push_back(name);
  for (const auto& s : policy::sampling_settings()) sub->get_option(s.flag)->group("");  // fcfs draws nothing
  for (const auto& s : policy::multifactor_settings()) sub->get_option(s.flag)->group("");
  sub->get_option("--mf-favor-small")->group("");
  return {sub, [args, sub, replay_flags] {
            args->profile.check(*sub, {"fcfs"});
            if (sim::parse_runtime_knowledge(args->profile.runtime) == sim::RuntimeKnowledge::oracle)
              for (const std::string& flag : replay_flags)
                if (sub->count(flag) > 0)
                  throw InputError(fmt::format("{} shapes only the replay that measures runtime estimates, which --runtime oracle "
                                               "does not run (give --runtime requested or predicted)",
                                               flag));
            return run_trace_stats(*args);
          }};
}

Command add_policies(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("policies", "List priority and placement policies");
  return {sub, [] { return run_policies(); }};
}

Command add_generate(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* sub = app.add_subcommand("generate", "Generate a workload like a trace family, a model file or a given trace");
  sub->add_option("--like", args->like,
                  "philly, helios, alibaba, a model YAML, or a trace to fit (default: the family named like --cluster)");
  sub->add_option("--out", args->out, "Output canonical CSV file")->check(path_name());
  sub->add_option("--save-model", args->save_model, "Also write the workload model used, as YAML")->check(path_name());
  sub->add_option("--cluster", args->cluster, "Cluster the load is relative to (preset or YAML file)")->capture_default_str();
  sub->add_option("--jobs", args->jobs, "Number of jobs")->capture_default_str()->check(CLI::Range(workload::kMinJobs, workload::kMaxJobs));
  sub->add_option("--seed", args->seed, "Random seed")->capture_default_str()->check(seed_value());
  sub->add_option("--load", args->load, "Offered GPU load on the cluster (GPU-seconds demanded / available)")
      ->capture_default_str()
      ->check(number_range(workload::kMinLoad, workload::kMaxLoad));
  args->input.add_format_options(*sub, /*with_seed=*/false);
  return {sub, [args] {
            args->input.sample_seed = args->seed;
            if (args->out.empty() && args->save_model.empty())
              throw InputError("generate: give --out (the jobs) and/or --save-model (the model)");
            return run_generate(*args);
          }};
}

Command add_convert(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* sub = app.add_subcommand("convert", "Convert traces of any supported format to the canonical CSV");
  sub->add_option("files", args->files, "Input files of one format (the pai job table may be given by --pai-job-table)");
  sub->add_option("--out", args->out, "Output canonical CSV file")->check(path_name())->required();
  args->input.add_format_options(*sub);
  return {sub, [args] {
            if (args->files.empty() && args->input.pai_job_table.empty()) throw InputError("convert: no input file given");
            return run_convert(*args);
          }};
}

}  // namespace rltune::cli
