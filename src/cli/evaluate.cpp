// `rltune evaluate`: a trained model and heuristic baselines on the same windows (paired), with the
// improvement of the model over each baseline; writes evaluation.json (DESIGN.md section 3). The runs
// are an experiment of one workload (experiment::run_paired).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include "cli/commands.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/log.h"
#include "policy/registry.h"
#include "report/table.h"
#include "rl/rl_policy.h"

namespace rltune::cli {

namespace {

struct EvaluateArgs {
  std::string model;
  std::string cluster = "helios";
  TraceArgs trace;
  ProfileArgs profile;
  std::vector<std::string> baselines{"fcfs,sjf,f1,wfp,uni,multifactor"};
  sim::WindowSettings window;  // --windows, --window-len, --warmup, --train-split
  std::string split = "test";
  bool whole = false;  // --window all
  bool sample = false;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string out;
};

// The metrics of evaluation.json's improvements, in its order.
constexpr const char* kImproved[] = {"avg_wait_s", "p95_wait_s", "avg_jct_s", "p95_jct_s", "avg_bsld", "p95_bsld", "gpu_utilization"};

// Windows that reach into the jobs the model was trained on (the same workload, before its training
// split's end) measure what it saw, not how it does on unseen data: said, with how many.
void warn_if_seen(const rl::PolicyFile& model, const trace::Trace& trace, const experiment::LoadedWorkload& loaded) {
  if (!model.trained_on) return;
  std::error_code ec;
  const std::string& trained = model.trained_on->trace;
  if (trained != trace.source && !std::filesystem::equivalent(trained, trace.source, ec)) return;
  const auto train_end = static_cast<std::size_t>(std::floor(model.trained_on->train_split * static_cast<double>(trace.jobs.size())));
  const auto seen = std::ranges::count_if(loaded.starts, [&](std::size_t start) { return start < train_end; });
  if (seen > 0)
    spdlog::warn("{} of the {} windows hold jobs the model was trained on (jobs 0..{} of this workload, its train_split {}): "
                 "they do not measure unseen data; evaluate the test split with the model's --train-split",
                 seen, loaded.starts.size(), train_end, model.trained_on->train_split);
}

int run_evaluate(const EvaluateArgs& a) {
  if (!a.out.empty()) check_out_dir(a.out, "evaluate");  // a training run's folder, say: its config.json is the model's
  experiment::Models models;
  const rl::PolicyFile& model = models.emplace(a.model, rl::load_policy(a.model)).first->second;
  if (a.jobs < 1) throw InputError("--jobs must be at least 1");
  // A paired experiment of one workload: the baselines, then the model.
  experiment::Workload workload;
  static_cast<sim::WindowSettings&>(workload.windows) = a.window;
  workload.windows.whole = a.whole;
  workload.windows.split = sim::parse_split(a.split);
  workload.windows.seed = a.trace.sample_seed;
  const sim::EngineOptions engine_options = a.profile.engine();
  for (const auto& name : split_list(a.baselines)) {
    if (name == "rl" || name == "rl-sampled" || rl::parse_rl_spec(name)) throw InputError("--baselines: list heuristics only; the model is --model");
    for (const auto& before : workload.policies)  // two rows and one JSON key for them
      if (before.label == name) throw InputError(fmt::format("--baselines: {} is given twice", name));
    workload.policies.push_back({name, a.profile.profile(name), engine_options, ""});
  }
  if (workload.policies.empty()) throw InputError("--baselines: names no heuristic to compare the model with");
  policy::ProfileOptions rl_profile = a.profile.profile("fcfs");
  rl_profile.priority = (a.sample ? "rl-sampled:" : "rl:") + a.model;
  rl_profile.priority_options.seed = a.trace.sample_seed;
  rl::make_rl_picker(model, rl_profile.priority_options);  // refuses what the model cannot run under, before the baselines run
  workload.policies.push_back({"rl", rl_profile, engine_options, ""});

  experiment::LoadedWorkload loaded{cluster::load_cluster(a.cluster), {}, {}, 0};
  loaded.trace = a.trace.load(loaded.cluster);
  try {
    experiment::draw_windows(workload.windows, loaded);  // as the training environment draws them, from the seed
  } catch (const InputError& e) {
    if (a.whole) throw InputError(fmt::format("--window all: {}", e.what()));
    throw;
  }
  const cluster::ClusterSpec& cluster = loaded.cluster;
  const trace::Trace& trace = loaded.trace;
  warn_if_seen(model, trace, loaded);
  const auto [first, last] = sim::split_range(trace.jobs.size(), a.window.train_split, workload.windows.split);
  std::cout << fmt::format("model    {} (epoch {}, baseline {}, features {}, trained on {})\n", a.model, model.epoch,
                           model.baseline, rl::to_string(model.observation.features), model.score);
  std::cout << fmt::format("cluster  {}: {} pools, {} GPUs; trace {} ({} jobs)\n", cluster.name, cluster.pools.size(),
                           cluster.total_gpus(), trace.source, trace.jobs.size());
  const bool own_semantics = rl_profile.semantics == "rltune";
  std::cout << fmt::format("windows  {} x {} jobs from the {} split (jobs {}..{}){}; placement {}{}; {}\n\n", loaded.starts.size(),
                           loaded.length, a.split, first, last, a.window.warmup > 0 ? fmt::format(" after up to {} warm-up jobs", a.window.warmup) : "",
                           rl_profile.placement, own_semantics ? "" : fmt::format("; semantics {}", rl_profile.semantics),
                           a.sample ? "sampled actions" : "argmax actions");
  const auto runs = experiment::run_paired(workload, loaded, models, a.jobs);  // runs[window][policy]

  report::Json evaluation;
  evaluation["metric"] = model.score;
  evaluation["model"] = a.model;
  evaluation["split"] = a.split;
  evaluation["seed"] = a.trace.sample_seed;
  if (a.window.warmup > 0) evaluation["warmup"] = a.window.warmup;
  if (!own_semantics) evaluation["semantics"] = std::string(rl_profile.semantics);
  const auto& policies = workload.policies;
  report::Json windows = report::Json::array();
  for (std::size_t w = 0; w < runs.size(); ++w) {
    report::Json by_policy;
    for (std::size_t p = 0; p < policies.size(); ++p) by_policy[policies[p].label] = report::to_json(metrics::summarize(runs[w][p]));
    windows.push_back({{"window", runs[w][0].window}, {"policies", by_policy}});
  }
  evaluation["windows"] = windows;
  std::vector<std::pair<std::string, metrics::Summary>> rows;
  for (std::size_t p = 0; p < policies.size(); ++p) {
    std::vector<const metrics::RunMetrics*> ptrs;
    for (const auto& window : runs) ptrs.push_back(&window[p]);
    rows.emplace_back(policies[p].label, metrics::summarize(ptrs));
    if (const std::string warning = metrics::time_limit_warning(rows.back().second.milp_time_limit_hits, rows.back().second.milp_solves); !warning.empty())
      spdlog::warn("{}: {}", policies[p].label, warning);
    evaluation["aggregate"][policies[p].label] = report::to_json(rows.back().second);
  }
  const report::Json& rl = evaluation["aggregate"]["rl"];
  std::string lines;
  for (const auto& baseline : policies) {
    if (baseline.label == "rl") continue;
    const std::string& name = baseline.label;
    const report::Json& base = evaluation["aggregate"][name];
    report::Json pct;
    std::map<std::string, std::string> shown;  // an improvement over a baseline of 0 is undefined: null, and n/a
    for (const char* key : kImproved) {
      const auto value = metrics::improvement_pct(metrics::summary_metric(key), base[key].get<double>(), rl[key].get<double>());
      pct[std::string(key) + "_pct"] = value ? report::Json(*value) : report::Json(nullptr);
      shown[key] = value ? fmt::format("{:+6.1f}%", *value) : std::string("    n/a");
    }
    evaluation["improvement"][name] = pct;
    lines += fmt::format("  rl vs {:<12} bsld {}  wait {}  jct {}  utilisation {}\n", name, shown["avg_bsld"],
                         shown["avg_wait_s"], shown["avg_jct_s"], shown["gpu_utilization"]);
  }
  report::print_comparison(std::cout, rows);
  std::cout << "\nimprovement of rl (positive = rl better; utilisation: higher is better):\n" << lines;
  if (!a.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.out, ec);
    if (ec) throw InputError(fmt::format("--out {}: cannot create the directory: {}", a.out, ec.message()));
    const std::string file = (std::filesystem::path(a.out) / "evaluation.json").string();
    report::write_file(file, json_text(evaluation, 2) + "\n");
    // How the comparison was run (placement, runtimes, sampling, windows), as simulate's config.json says it.
    report::Json config = run_config("evaluate", cluster, trace, a.trace, a.profile, rl_profile);
    config["model"] = a.model;
    report::Json labels = report::Json::array(), starts = report::Json::array();
    for (const auto& p : policies) labels.push_back(p.label);
    for (const auto& window : runs) starts.push_back(window[0].window);
    config["policies"] = labels;
    config["windows"] = starts;
    config["split"] = a.split;
    config["train_split"] = a.window.train_split;
    if (a.window.warmup > 0) config["warmup"] = a.window.warmup;
    report::write_file((std::filesystem::path(a.out) / "config.json").string(), json_text(config, 2) + "\n");
    std::cout << fmt::format("\nwrote {} and config.json\n", file);
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
  auto* windows = sub->add_option("--windows", args->window.count, "Number of windows (drawn with --seed)")
                      ->capture_default_str()
                      ->check(setting_bounds(sim::window_setting("count")));
  auto* window_len = sub->add_option("--window-len", args->window.length, "Jobs per window")
                         ->capture_default_str()
                         ->check(setting_bounds(sim::window_setting("length")));
  sub->add_option_function<std::string>(
         "--window",
         [args](const std::string& value) {
           if (value != "all") throw CLI::ValidationError("--window", "only 'all' (the whole --split as one window) is accepted");
           args->whole = true;
         },
         "all: one window, the whole --split (warmed by --warmup jobs before it), instead of drawn windows")
      ->excludes(windows)
      ->excludes(window_len);
  sub->add_option("--warmup", args->window.warmup,
                  "Jobs before each window replayed first by fcfs (same placement, blocking, backfill), not measured")
      ->capture_default_str()
      ->check(setting_bounds(sim::window_setting("warmup")));
  sub->add_option("--split", args->split, "Where windows come from: test, validation, train or all")
      ->capture_default_str()
      ->check(CLI::IsMember(sim::kSplitNames.names()));
  sub->add_option("--train-split", args->window.train_split, "Share of the trace (by job index) used for training")
      ->capture_default_str()
      ->check(setting_bounds(sim::window_setting("train_split")));
  sub->add_flag("--sample", args->sample, "Sample the model's actions (seeded) instead of taking the argmax");
  sub->add_option("--jobs", args->jobs, "Runs in parallel (results do not depend on it)")->capture_default_str();
  sub->add_option("--out", args->out, "Directory for evaluation.json")->check(path_name());
  return {sub, [args, sub] {
            std::vector<std::string> policies = args->baselines;
            policies.push_back((args->sample ? "rl-sampled:" : "rl:") + args->model);
            args->profile.check(*sub, policies);
            return run_evaluate(*args);
          }};
}

}  // namespace rltune::cli
