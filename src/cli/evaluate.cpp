// `rltune evaluate`: a trained model and heuristic baselines on the same windows (paired), with the
// improvement of the model over each baseline; writes evaluation.json (DESIGN.md section 3).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/log.h"
#include "core/rng.h"
#include "policy/registry.h"
#include "report/table.h"
#include "rl/env.h"
#include "rl/rl_policy.h"

namespace rltune::cli {

namespace {

struct EvaluateArgs {
  std::string model;
  std::string cluster = "helios";
  TraceArgs trace;
  ProfileArgs profile;
  std::vector<std::string> baselines{"fcfs,sjf,f1,wfp,uni,multifactor"};
  int windows = 50;
  int window_len = 256;
  double train_split = 0.7;
  std::string split = "test";
  int warmup = 0;
  bool whole = false;  // --window all
  bool sample = false;
  std::string out;
};

// The metrics of evaluation.json's improvements, in its order.
constexpr const char* kImproved[] = {"avg_wait_s", "p95_wait_s", "avg_jct_s", "p95_jct_s", "avg_bsld", "p95_bsld", "gpu_utilization"};

int run_evaluate(const EvaluateArgs& a) {
  const rl::PolicyFile model = rl::load_policy(a.model);
  const cluster::ClusterSpec cluster = cluster::load_cluster(a.cluster);
  const trace::Trace trace = a.trace.load(cluster);
  const sim::EngineOptions engine_options = a.profile.engine();
  const sim::Split split = sim::parse_split(a.split);
  if (a.windows < 1 || a.window_len < 1) throw InputError("--windows and --window-len must be at least 1");
  if (!(a.train_split > 0 && a.train_split < 1)) throw InputError("--train-split must be between 0 and 1");
  const auto [first, last] = sim::split_range(trace.jobs.size(), a.train_split, split);
  if (a.whole && first == last) throw InputError(fmt::format("--window all: the {} split holds no jobs", a.split));
  const std::size_t len = a.whole ? last - first : static_cast<std::size_t>(a.window_len);
  // Windows drawn as the training environment draws them, from the seed; or the whole split.
  Rng rng(a.trace.sample_seed);
  std::vector<std::size_t> starts;
  if (a.whole) starts.push_back(first);
  else
    for (int w = 0; w < a.windows; ++w) starts.push_back(sim::draw_window(rng, trace.jobs.size(), a.train_split, split, len));

  struct Entry {
    std::string name;
    policy::ProfileOptions options;
    std::unique_ptr<policy::ProfileScheduler> scheduler;
    std::vector<metrics::RunMetrics> runs;
  };
  std::vector<Entry> entries;
  for (const auto& name : split_list(a.baselines)) {
    if (name == "rl" || name == "rl-sampled" || rl::parse_rl_spec(name)) throw InputError("--baselines: list heuristics only; the model is --model");
    policy::ProfileOptions p = a.profile.profile(name);
    entries.push_back({name, p, policy::make_profile(p), {}});
  }
  {
    policy::ProfileOptions p = a.profile.profile("fcfs");
    p.priority = "rl";
    entries.push_back(
        {"rl", p, rl::make_rl_profile(model, p, a.sample ? std::optional<std::uint64_t>(a.trace.sample_seed) : std::nullopt), {}});
  }

  std::cout << fmt::format("model    {} (epoch {}, baseline {}, features {}, trained on {})\n", a.model, model.epoch,
                           model.baseline, rl::to_string(model.observation.features), model.score);
  std::cout << fmt::format("cluster  {}: {} pools, {} GPUs; trace {} ({} jobs)\n", cluster.name, cluster.pools.size(),
                           cluster.total_gpus(), trace.source, trace.jobs.size());
  std::cout << fmt::format("windows  {} x {} jobs from the {} split (jobs {}..{}){}; placement {}; {}\n\n", starts.size(), len,
                           a.split, first, last, a.warmup > 0 ? fmt::format(" after up to {} warm-up jobs", a.warmup) : "",
                           a.profile.placement, a.sample ? "sampled actions" : "argmax actions");

  for (auto& e : entries)
    for (const std::size_t s : starts) {
      const sim::WarmWindow jobs = sim::warm_window(trace.jobs, s, len, static_cast<std::size_t>(a.warmup));
      e.runs.push_back(run_window(cluster, jobs, engine_options, *e.scheduler, fmt::format("{}:{}", s, len)));
    }

  report::Json evaluation;
  evaluation["metric"] = model.score;
  evaluation["model"] = a.model;
  evaluation["split"] = a.split;
  evaluation["seed"] = a.trace.sample_seed;
  if (a.warmup > 0) evaluation["warmup"] = a.warmup;
  report::Json windows = report::Json::array();
  for (std::size_t w = 0; w < starts.size(); ++w) {
    report::Json policies;
    for (const auto& e : entries) policies[e.name] = report::to_json(metrics::summarize(e.runs[w]));
    windows.push_back({{"window", entries[0].runs[w].window}, {"policies", policies}});
  }
  evaluation["windows"] = windows;
  std::vector<std::pair<std::string, metrics::Summary>> rows;
  for (const auto& e : entries) {
    std::vector<const metrics::RunMetrics*> ptrs;
    for (const auto& r : e.runs) ptrs.push_back(&r);
    rows.emplace_back(e.name, metrics::summarize(ptrs));
    if (const std::string warning = metrics::time_limit_warning(rows.back().second.milp_time_limit_hits, rows.back().second.milp_solves); !warning.empty())
      spdlog::warn("{}: {}", e.name, warning);
    evaluation["aggregate"][e.name] = report::to_json(rows.back().second);
  }
  const report::Json& rl = evaluation["aggregate"]["rl"];
  std::string lines;
  for (const auto& e : entries) {
    if (e.name == "rl") continue;
    const report::Json& base = evaluation["aggregate"][e.name];
    report::Json pct;
    for (const char* key : kImproved)
      pct[std::string(key) + "_pct"] = metrics::improvement_pct(metrics::summary_metric(key), base[key].get<double>(), rl[key].get<double>());
    evaluation["improvement"][e.name] = pct;
    lines += fmt::format("  rl vs {:<12} bsld {:+6.1f}%  wait {:+6.1f}%  jct {:+6.1f}%  utilisation {:+6.1f}%\n", e.name,
                         pct["avg_bsld_pct"].get<double>(), pct["avg_wait_s_pct"].get<double>(),
                         pct["avg_jct_s_pct"].get<double>(), pct["gpu_utilization_pct"].get<double>());
  }
  report::print_comparison(std::cout, rows);
  std::cout << "\nimprovement of rl (positive = rl better; utilisation: higher is better):\n" << lines;
  if (!a.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.out, ec);
    if (ec) throw InputError(fmt::format("--out {}: cannot create the directory: {}", a.out, ec.message()));
    const std::string file = (std::filesystem::path(a.out) / "evaluation.json").string();
    report::write_file(file, evaluation.dump(2) + "\n");
    std::cout << fmt::format("\nwrote {}\n", file);
  }
  return 0;
}

}  // namespace

Command add_evaluate(CLI::App& app) {
  auto args = std::make_shared<EvaluateArgs>();
  args->trace.sample_jobs = 20000;  // the same default workload as `rltune train`
  CLI::App* sub = app.add_subcommand("evaluate", "Compare a trained model with heuristics on the same held-out windows");
  sub->add_option("--model", args->model, "Training run directory (its best.json) or a policy .json file")->required();
  sub->add_option("--cluster", args->cluster, "Cluster preset (" + cluster::preset_names() + ") or YAML file")
      ->capture_default_str();
  args->trace.add_options(*sub);
  sub->get_option("--seed")->description("Seed of the windows (and of --sample) and of the generated workload: "
                                         "use the training run's seed to evaluate on its workload");
  args->profile.add_options(*sub);
  sub->add_option("--baselines", args->baselines, "Heuristic priority policies to compare, comma-separated")
      ->capture_default_str();
  auto* windows = sub->add_option("--windows", args->windows, "Number of windows (drawn with --seed)")->capture_default_str();
  auto* window_len = sub->add_option("--window-len", args->window_len, "Jobs per window")->capture_default_str();
  sub->add_option_function<std::string>(
         "--window",
         [args](const std::string& value) {
           if (value != "all") throw CLI::ValidationError("--window", "only 'all' (the whole --split as one window) is accepted");
           args->whole = true;
         },
         "all: one window, the whole --split (warmed by --warmup jobs before it), instead of drawn windows")
      ->excludes(windows)
      ->excludes(window_len);
  sub->add_option("--warmup", args->warmup,
                  "Jobs before each window replayed first by fcfs (same placement, blocking, backfill), not measured")
      ->capture_default_str()
      ->check(CLI::Range(0, 100'000'000));
  sub->add_option("--split", args->split, "Where windows come from: test, validation, train or all")
      ->capture_default_str()
      ->check(CLI::IsMember(sim::kSplitNames.names()));
  sub->add_option("--train-split", args->train_split, "Share of the trace (by job index) used for training")
      ->capture_default_str();
  sub->add_flag("--sample", args->sample, "Sample the model's actions (seeded) instead of taking the argmax");
  sub->add_option("--out", args->out, "Directory for evaluation.json");
  return {sub, [args, sub] {
            args->profile.check(*sub);
            return run_evaluate(*args);
          }};
}

}  // namespace rltune::cli
