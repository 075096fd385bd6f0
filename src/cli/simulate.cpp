// `rltune simulate`: run scheduler profiles over windows of a trace and write jobs.csv / summary.json.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/log.h"
#include "metrics/metrics.h"
#include "policy/registry.h"
#include "report/outputs.h"
#include "report/table.h"
#include "sim/engine.h"
#include "workload/model.h"

namespace rltune::cli {

namespace {

struct Window {
  std::size_t start = 0, length = 0;
  std::string label;  // "START:LEN" or "all"
};

std::vector<Window> parse_windows(const std::vector<std::string>& texts, std::size_t job_count) {
  if (texts.empty()) return {{0, job_count, "all"}};
  std::vector<Window> windows;
  for (const auto& text : texts) {
    const auto colon = text.find(':');
    long long start = -1, length = -1;
    try {
      std::size_t used1 = 0, used2 = 0;
      if (colon != std::string::npos) {
        start = std::stoll(text.substr(0, colon), &used1);
        length = std::stoll(text.substr(colon + 1), &used2);
        if (used1 != colon || used2 != text.size() - colon - 1) start = -1;
      }
    } catch (const std::exception&) {
      start = -1;
    }
    if (start < 0 || length < 1)
      throw InputError(fmt::format("--window '{}': expected START:LEN with START >= 0 and LEN >= 1", text));
    if (static_cast<std::size_t>(start) >= job_count || static_cast<std::size_t>(length) > job_count - start)
      throw InputError(fmt::format("--window '{}': the trace has only {} jobs", text, job_count));
    windows.push_back({static_cast<std::size_t>(start), static_cast<std::size_t>(length), fmt::format("{}:{}", start, length)});
  }
  return windows;
}

std::vector<std::string> split_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ','))
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

struct SimulateArgs {
  std::string cluster = "helios";
  TraceArgs trace;
  std::vector<std::string> policies{"fcfs"};
  std::string placement = "greedy";
  std::string blocking = "global";
  std::string runtime = "oracle";
  bool backfill = false;
  policy::MultifactorOptions multifactor;
  policy::MilpOptions milp;
  std::string milp_model = "nodes";
  std::array<std::optional<double>, 5> milp_weights;  // alpha, beta, gamma, delta, waste; unset = model default
  std::vector<std::string> windows;
  std::string out;
};

int run_simulate(const SimulateArgs& a) {
  const cluster::ClusterSpec cluster = cluster::load_cluster(a.cluster);
  const trace::Trace trace = a.trace.load(cluster);
  const auto windows = parse_windows(a.windows, trace.jobs.size());
  sim::EngineOptions engine_options;
  engine_options.runtime = sim::parse_runtime_knowledge(a.runtime);
  const auto& mf = a.multifactor;
  if (!std::isfinite(mf.age_weight) || !std::isfinite(mf.size_weight) || !std::isfinite(mf.max_age_s) || mf.max_age_s <= 0)
    throw InputError("--mf-age-weight, --mf-size-weight and --mf-max-age must be finite, and --mf-max-age > 0");

  // MILP options: the model's defaults, then the weights given on the command line.
  policy::MilpOptions milp = policy::MilpOptions::for_model(a.milp_model);
  milp.lookahead = a.milp.lookahead;
  milp.extra_nodes = a.milp.extra_nodes;
  milp.time_limit_ms = a.milp.time_limit_ms;
  milp.node_limit = a.milp.node_limit;
  double* weights[] = {&milp.alpha, &milp.beta, &milp.gamma, &milp.delta, &milp.waste};
  for (std::size_t i = 0; i < a.milp_weights.size(); ++i)
    if (a.milp_weights[i]) *weights[i] = *a.milp_weights[i];

  std::vector<policy::ProfileOptions> profiles;
  for (const auto& name : split_list(a.policies)) {
    policy::ProfileOptions p;
    p.priority = name;
    p.placement = a.placement;
    p.blocking = policy::parse_blocking(a.blocking);
    p.backfill = a.backfill;
    p.priority_options.multifactor = a.multifactor;
    p.milp = milp;
    policy::make_profile(p);  // fail on unknown names before any work
    profiles.push_back(p);
  }
  if (profiles.empty()) throw InputError("--policy: no policy given");

  std::cout << fmt::format("cluster  {}: {} pools, {} nodes, {} GPUs\n", cluster.name, cluster.pools.size(),
                           cluster.total_nodes(), cluster.total_gpus());
  std::cout << fmt::format("trace    {} ({} jobs, format {}{})\n", trace.source, trace.jobs.size(), trace.format,
                           trace.skipped.skipped ? fmt::format(", {} rows skipped", trace.skipped.skipped) : "");
  std::cout << fmt::format("windows  {}; blocking {}; backfill {}; runtime estimates {}; placement {}\n\n",
                           windows.size() == 1 ? windows[0].label : std::to_string(windows.size()), a.blocking,
                           a.backfill ? "on" : "off", a.runtime, a.placement);

  std::vector<std::pair<std::string, metrics::Summary>> rows;
  for (const auto& profile_options : profiles) {
    auto scheduler = policy::make_profile(profile_options);
    std::vector<metrics::RunMetrics> runs;
    for (const auto& w : windows) {
      const std::span<const trace::JobSpec> jobs(trace.jobs.data() + w.start, w.length);
      sim::Engine engine(cluster, jobs, engine_options);
      const policy::PlacementStats* stats = scheduler->placement().stats();
      const policy::PlacementStats before =
          stats ? policy::PlacementStats{stats->solves, stats->fallbacks, {}} : policy::PlacementStats{};
      const std::size_t first_us = stats ? stats->solve_us.size() : 0;
      runs.push_back(metrics::run_and_measure(engine, *scheduler, w.label));
      if (stats) {  // this window's share of the scheduler's running totals
        metrics::RunMetrics& run = runs.back();
        run.has_placement_stats = true;
        run.placement_solves = stats->solves - before.solves;
        run.placement_fallbacks = stats->fallbacks - before.fallbacks;
        run.placement_us.assign(stats->solve_us.begin() + static_cast<std::ptrdiff_t>(first_us), stats->solve_us.end());
      }
      if (runs.back().estimate_fallbacks > 0)
        spdlog::warn("window {}: {} jobs have no requested time; their estimate is the true duration", w.label,
                     runs.back().estimate_fallbacks);
    }
    std::vector<const metrics::RunMetrics*> run_ptrs;
    for (const auto& r : runs) run_ptrs.push_back(&r);
    rows.emplace_back(profile_options.name(), metrics::summarize(run_ptrs));

    if (!a.out.empty()) {
      std::string folder = profile_options.name();  // "fcfs/milp+backfill" -> one folder "fcfs-milp+backfill"
      std::replace(folder.begin(), folder.end(), '/', '-');
      const std::filesystem::path dir =
          profiles.size() == 1 ? std::filesystem::path(a.out) : std::filesystem::path(a.out) / folder;
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec) throw InputError(fmt::format("--out {}: cannot create the directory: {}", dir.string(), ec.message()));
      std::ostringstream jobs_csv;
      report::write_jobs_csv(jobs_csv, run_ptrs);
      report::write_file((dir / "jobs.csv").string(), jobs_csv.str());
      report::write_file((dir / "summary.json").string(), report::summary_json(run_ptrs).dump(2) + "\n");
      report::Json config;
      config["command"] = "simulate";
      config["cluster"] = cluster.source;
      config["trace"] = trace.source;
      config["format"] = trace.format;
      config["rows_skipped"] = trace.skipped.skipped;
      // Everything that decides the jobs: the files, the per-format settings and the seed (which also
      // draws gavel durations), or the generated workload's family.
      report::Json files = report::Json::array();
      if (!a.trace.pai_job_table.empty()) files.push_back(a.trace.pai_job_table);
      for (const auto& f : a.trace.paths) files.push_back(f);
      config["trace_files"] = files;
      config["seed"] = a.trace.sample_seed;
      if (a.trace.uses_sample())
        config["generated"] = {{"like", a.trace.like.empty() ? workload::default_family(cluster.source) : a.trace.like},
                               {"jobs", a.trace.sample_jobs}, {"load", a.trace.sample_load}};
      else
        config["read_options"] = {{"vc_column", a.trace.read.vc_column}, {"gpu_type_column", a.trace.read.gpu_type_column},
                                  {"duration_source", a.trace.read.duration_source},
                                  {"gpus_per_proc", a.trace.read.gpus_per_proc},
                                  {"pai_task_table", a.trace.read.pai_task_table},
                                  {"skip_invalid", a.trace.read.skip_invalid}};
      config["policy"] = profile_options.priority;
      config["placement"] = profile_options.placement;
      config["blocking"] = policy::to_string(profile_options.blocking);
      config["backfill"] = profile_options.backfill;
      config["runtime"] = sim::to_string(engine_options.runtime);
      if (a.placement == "milp") {
        const policy::MilpOptions& m = profile_options.milp;
        config["milp"] = {{"model", m.model},         {"alpha", m.alpha},           {"beta", m.beta},
                          {"gamma", m.gamma},         {"delta", m.delta},           {"waste", m.waste},
                          {"lookahead", m.lookahead}, {"extra_nodes", m.extra_nodes}, {"node_limit", m.node_limit},
                          {"time_limit_ms", m.time_limit_ms}};
      }
      config["multifactor"] = {{"age_weight", a.multifactor.age_weight},
                               {"size_weight", a.multifactor.size_weight},
                               {"max_age_s", a.multifactor.max_age_s},
                               {"favor_small", a.multifactor.favor_small}};
      report::Json ws = report::Json::array();
      for (const auto& w : windows) ws.push_back(w.label);
      config["windows"] = ws;
      report::write_file((dir / "config.json").string(), config.dump(2) + "\n");
    }
  }
  report::print_comparison(std::cout, rows);
  if (!a.out.empty()) std::cout << fmt::format("\nwrote jobs.csv, summary.json and config.json under {}\n", a.out);
  return 0;
}

}  // namespace

Command add_simulate(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* sub = app.add_subcommand("simulate", "Simulate scheduler profiles on a trace and compare them");
  sub->add_option("--cluster", args->cluster, "Cluster preset (" + cluster::preset_names() + ") or YAML file")
      ->capture_default_str();
  args->trace.add_options(*sub);
  sub->add_option("--policy", args->policies,
                  "Priority policies to compare, repeatable or comma-separated (see `rltune policies`)")
      ->capture_default_str();
  sub->add_option("--placement", args->placement, "Placement policy: greedy, defrag, balance or milp")->capture_default_str();
  auto& w = args->milp_weights;
  sub->add_option("--milp-model", args->milp_model, "milp: nodes (nodes grouped by free GPUs) or ways (the paper's)")
      ->capture_default_str();
  sub->add_option("--milp-alpha", w[0], "milp: weight of partially used nodes (default: nodes 0, ways 1)");
  sub->add_option("--milp-beta", w[1], "milp: weight of load imbalance: variance of node utilisation (nodes; default 0) or free-GPU range (ways; 0.3)");
  sub->add_option("--milp-gamma", w[2], "milp: reward per upcoming job that still fits (default 0.5)");
  sub->add_option("--milp-delta", w[3], "milp: weight per node used (default: nodes 0.05, ways 0)");
  sub->add_option("--milp-waste", w[4], "milp: weight per GPU left free on the nodes used (default: nodes 0.1, ways 0)");
  policy::MilpOptions& milp = args->milp;
  sub->add_option("--milp-lookahead", milp.lookahead, "milp: upcoming jobs considered (K)")->capture_default_str();
  sub->add_option("--milp-extra-nodes", milp.extra_nodes, "milp nodes model: nodes allowed beyond ceil(R/G)")
      ->capture_default_str();
  sub->add_option("--milp-node-limit", milp.node_limit,
                  "milp: branch-and-bound nodes per solve (then best solution or defrag; deterministic)")
      ->capture_default_str();
  sub->add_option("--milp-time-limit-ms", milp.time_limit_ms, "milp: time limit per solve (then best solution or defrag)")
      ->capture_default_str();
  sub->add_option("--blocking", args->blocking, "global: a blocked job stops every start; pool: only in its pools")
      ->capture_default_str();
  sub->add_flag("--backfill", args->backfill, "EASY backfilling behind blocked jobs (by runtime estimates)");
  sub->add_option("--runtime", args->runtime, "Runtime estimates: oracle (true duration) or requested")
      ->capture_default_str();
  sub->add_option("--window", args->windows, "START:LEN over the submit-sorted trace, repeatable (default: all)");
  sub->add_option("--out", args->out, "Directory for jobs.csv, summary.json and config.json");
  sub->add_option("--mf-age-weight", args->multifactor.age_weight, "multifactor: Slurm PriorityWeightAge")
      ->capture_default_str();
  sub->add_option("--mf-size-weight", args->multifactor.size_weight, "multifactor: Slurm PriorityWeightJobSize")
      ->capture_default_str();
  sub->add_option("--mf-max-age", args->multifactor.max_age_s, "multifactor: Slurm PriorityMaxAge in seconds")
      ->capture_default_str();
  sub->add_flag("--mf-favor-small", args->multifactor.favor_small, "multifactor: Slurm PriorityFavorSmall=YES");
  return {sub, [args, sub] {
            // MILP options without the MILP placement would be silently ignored: an error instead.
            for (const char* name : {"--milp-model", "--milp-alpha", "--milp-beta", "--milp-gamma", "--milp-delta",
                                     "--milp-waste", "--milp-lookahead", "--milp-extra-nodes", "--milp-node-limit",
                                     "--milp-time-limit-ms"})
              if (sub->count(name) > 0 && args->placement != "milp")
                throw InputError(fmt::format("{} applies only to --placement milp (placement is {})", name, args->placement));
            return run_simulate(*args);
          }};
}

}  // namespace rltune::cli
