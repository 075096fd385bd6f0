// Trace loading shared by commands, and the commands that inspect or make inputs:
// `trace-stats`, `policies` and `generate`.
#include <fmt/format.h>

#include <algorithm>
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

namespace rltune::cli {

void TraceArgs::add_format_options(CLI::App& app) {
  std::string names = "auto";
  for (const auto& r : trace::readers()) names += ", " + r.name;
  app.add_option("--format", read.format, "Trace format: " + names)->capture_default_str();
  app.add_option("--vc-column", read.vc_column, "rltune format: 0-based VC column, -1 = none")
      ->capture_default_str()
      ->check(CLI::Range(-1, 19));
  app.add_option("--gpu-type-column", read.gpu_type_column, "rltune format: 0-based GPU-type column, -1 = none")
      ->capture_default_str()
      ->check(CLI::Range(-1, 19));
  app.add_option("--duration-source", read.duration_source,
                 "gavel format: CSV of real runtimes to sample durations from (e.g. philly_job_distribution.csv)");
  app.add_option("--gpus-per-proc", read.gpus_per_proc, "swf format: GPUs per SWF processor")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1024.0));
  app.add_option("--pai-job-table", pai_job_table, "pai format: the PAI 2020 job table (pai_job_table.csv)");
  app.add_option("--pai-task-table", read.pai_task_table, "pai format: the PAI 2020 task table (pai_task_table.csv)");
  app.add_flag("--skip-invalid", read.skip_invalid, "Skip bad rows (counted by reason) instead of stopping");
}

void TraceArgs::add_options(CLI::App& app) {
  app.add_option("--trace", paths, "Trace file(s) of one format (default: the built-in sample workload)");
  add_format_options(app);
  app.add_option("--sample-jobs", sample_jobs, "Jobs in the built-in sample workload")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000'000));
  app.add_option("--seed", sample_seed, "Seed of the built-in sample workload and of gavel duration sampling")
      ->capture_default_str();
  app.add_option("--sample-load", sample_load, "Offered load of the built-in sample workload")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 100.0));
}

trace::Trace TraceArgs::read_files(std::vector<std::string> files) const {
  if (!pai_job_table.empty()) files.insert(files.begin(), pai_job_table);
  trace::ReadOptions options = read;
  options.seed = sample_seed;
  if (!options.pai_task_table.empty() && options.format == "auto") options.format = "pai";
  trace::Trace t = trace::read_traces(files, options);
  if (t.skipped.skipped > 0) {
    spdlog::warn("{}: skipped {} rows", t.source, t.skipped.skipped);
    for (const auto& [reason, count] : t.skipped.by_reason) spdlog::warn("  {} x {}", count, reason);
    for (const auto& example : t.skipped.examples) spdlog::info("  e.g. {}", example);
  }
  if (t.jobs.empty()) throw InputError(t.source + ": no valid job left after skipping rows");
  return t;
}

trace::Trace TraceArgs::load(const cluster::ClusterSpec& cluster) const {
  if (uses_sample())
    return trace::make_sample(cluster::sample_options_for(cluster, sample_jobs, sample_seed, sample_load));
  return read_files(paths);
}

namespace {

struct StatsArgs {
  TraceArgs trace;
  std::string cluster = "helios";
};

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

  // Offered load: GPU-seconds demanded over GPU-seconds available during the submit span. A job that
  // several pools accept is shared equally between them.
  std::vector<double> pool_work(cluster.pools.size(), 0);
  std::map<std::string, std::size_t> rejected;
  std::vector<PoolId> eligible;
  double total_work = 0;
  for (const auto& j : jobs) {
    const std::string problem = cluster::admission_problem(cluster, j, eligible);
    if (!problem.empty()) {
      ++rejected[problem.substr(0, problem.find(':'))];
      continue;
    }
    const double work = static_cast<double>(j.duration) * j.gpus;
    total_work += work;
    for (const PoolId p : eligible) pool_work[p] += work / static_cast<double>(eligible.size());
  }
  const double span = std::max<double>(1, static_cast<double>(last - first));
  std::cout << fmt::format("\noffered load on cluster {} ({} GPUs): {:.2f}\n", cluster.name, cluster.total_gpus(),
                           total_work / (span * cluster.total_gpus()));
  for (std::size_t p = 0; p < cluster.pools.size(); ++p)
    std::cout << fmt::format("  pool {:<10} {:>5} GPUs  load {:.2f}\n", cluster.pools[p].name,
                             cluster.pools[p].total_gpus(), pool_work[p] / (span * cluster.pools[p].total_gpus()));
  for (const auto& [reason, n] : rejected) std::cout << fmt::format("  would be rejected: {} x {}\n", n, reason);
  return 0;
}

int run_policies() {
  std::cout << "priority policies (--policy):\n";
  for (const auto& p : policy::priority_policies()) std::cout << fmt::format("  {:<12} {}\n", p.name, p.description);
  std::cout << "\nplacement policies (--placement):\n";
  for (const auto& p : policy::placement_policies()) std::cout << fmt::format("  {:<12} {}\n", p.name, p.description);
  std::cout << "\nblocking (--blocking): global (a blocked job stops all starts), pool (only in its pools)\n"
               "backfill (--backfill): EASY backfilling by runtime estimates (--runtime oracle|requested)\n";
  return 0;
}

struct GenerateArgs {
  std::string cluster = "helios";
  std::string out;
  int jobs = 2000;
  unsigned long long seed = 1;
  double load = 0.9;
};

int run_generate(const GenerateArgs& a) {
  const cluster::ClusterSpec cluster = cluster::load_cluster(a.cluster);
  const trace::Trace t = trace::make_sample(cluster::sample_options_for(cluster, a.jobs, a.seed, a.load));
  std::ostringstream text;
  trace::write_canonical(text, t.jobs);
  report::write_file(a.out, text.str());
  std::cout << fmt::format("wrote {} jobs ({}) to {}\n", t.jobs.size(), t.source, a.out);
  return 0;
}

}  // namespace

Command add_trace_stats(CLI::App& app) {
  auto args = std::make_shared<StatsArgs>();
  CLI::App* sub = app.add_subcommand("trace-stats", "Summarise a trace: sizes, durations, offered load per pool");
  args->trace.add_options(*sub);
  sub->add_option("--cluster", args->cluster, "Cluster for the offered load (preset or YAML file)")->capture_default_str();
  return {sub, [args] { return run_trace_stats(*args); }};
}

Command add_policies(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("policies", "List priority and placement policies");
  return {sub, [] { return run_policies(); }};
}

Command add_generate(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* sub = app.add_subcommand("generate", "Write the built-in sample workload as canonical CSV");
  sub->add_option("--out", args->out, "Output CSV file")->required();
  sub->add_option("--cluster", args->cluster, "Cluster whose VCs and size the sample follows")->capture_default_str();
  sub->add_option("--jobs", args->jobs, "Number of jobs")->capture_default_str()->check(CLI::Range(1, 10'000'000));
  sub->add_option("--seed", args->seed, "Random seed")->capture_default_str();
  sub->add_option("--load", args->load, "Offered load (GPU demand / capacity)")->capture_default_str()->check(CLI::Range(0.01, 100.0));
  return {sub, [args] { return run_generate(*args); }};
}

}  // namespace rltune::cli
