// `rltune simulate`: run scheduler profiles over windows of a trace and write jobs.csv / summary.json.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <optional>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "core/file.h"
#include "core/json_text.h"
#include "core/log.h"
#include "metrics/metrics.h"
#include "policy/registry.h"
#include "report/outputs.h"
#include "report/table.h"
#include "sim/engine.h"
#include "sim/window.h"
#include "workload/model.h"

namespace rltune::cli {

namespace {

struct SimulateArgs {
  std::string cluster = "helios";
  TraceArgs trace;
  std::vector<std::string> policies{"fcfs"};
  ProfileArgs profile;
  std::vector<std::string> windows;
  int warmup = 0;
  std::string out;
};

// "N x reason, M x reason" over the runs' rejected jobs, by the reason's code (the text before its
// details: "no_eligible_pool: no pool accepts ..."), in order of first rejection.
std::string rejection_counts(const std::vector<metrics::RunMetrics>& runs) {
  std::vector<std::pair<std::string, std::size_t>> counts;
  for (const metrics::RunMetrics& run : runs)
    for (const metrics::JobRecord& j : run.jobs) {
      if (j.completed()) continue;
      const std::string code = j.reason.substr(0, j.reason.find(':'));
      auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == code; });
      if (it == counts.end()) it = counts.insert(counts.end(), {code, 0});
      ++it->second;
    }
  std::vector<std::string> parts;
  for (const auto& [reason, n] : counts) parts.push_back(fmt::format("{} x {}", n, reason.empty() ? "(no reason given)" : reason));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// What an earlier simulate wrote in `out` that this run will not replace, so that no result of another
// run sits beside this one's: its files at the top (this run writes one folder per policy), or the
// policy folders its top config.json lists (this run writes at the top, or other folders). Only
// simulate's own files go, and a folder only once nothing else is left in it.
void remove_stale_results(const std::filesystem::path& out, bool at_top, const std::vector<std::string>& folders) {
  namespace fs = std::filesystem;
  static constexpr std::array kFiles{"jobs.csv", "summary.json", "config.json"};
  // The config.json in `dir`, when simulate wrote it.
  const auto simulate_config = [](const fs::path& dir) -> std::optional<nlohmann::json> {
    const auto text = read_file((dir / "config.json").string());
    if (!text) return std::nullopt;
    auto json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object() || !json.contains("command") || json["command"] != "simulate") return std::nullopt;
    return json;
  };
  const auto remove = [](const fs::path& path) {
    std::error_code ec;
    const bool removed = fs::remove(path, ec);
    if (ec) throw InputError(fmt::format("--out: cannot remove the earlier result {}: {}", path.string(), ec.message()));
    return removed;
  };
  const std::optional<nlohmann::json> earlier = simulate_config(out);
  if (!earlier) return;  // none, or check_out_dir refused another command's
  std::vector<std::string> removed;
  if (!earlier->contains("folders")) {  // one policy, at the top
    if (!at_top) {
      for (const char* file : kFiles) remove(out / file);
      removed.push_back("its files at the top");
    }
  } else if ((*earlier)["folders"].is_array()) {
    for (const auto& folder : (*earlier)["folders"]) {
      if (!folder.is_string()) continue;
      const std::string name = folder.get<std::string>();
      // One plain name (the config may be edited: "../x", "/x", "a/b", "." and NULs lead elsewhere), of a
      // real folder (not a link out of --out) that holds one policy's simulate results (not another
      // command's, not a nested several-policy run).
      if (name.empty() || name.find('\0') != std::string::npos || fs::path(name).filename().string() != name || name == "." ||
          name == ".." || (!at_top && std::find(folders.begin(), folders.end(), name) != folders.end()))
        continue;
      const fs::path dir = out / name;
      std::error_code ec;
      if (!fs::is_directory(fs::symlink_status(dir, ec))) continue;
      const std::optional<nlohmann::json> own = simulate_config(dir);
      if (!own || own->contains("folders")) continue;
      bool any = false;
      for (const char* file : kFiles) any = remove(dir / file) || any;
      if (fs::is_empty(dir, ec)) remove(dir);
      if (any) removed.push_back(name + "/");
    }
  }
  if (!removed.empty())
    spdlog::info("--out {}: removed an earlier simulate's results that this one does not replace ({})", out.string(),
                 fmt::join(removed, ", "));
}

int run_simulate(const SimulateArgs& a) {
  if (!a.out.empty()) check_out_dir(a.out, "simulate");
  const cluster::ClusterSpec cluster = cluster::load_cluster(a.cluster);
  const trace::Trace trace = a.trace.load(cluster);
  const auto windows = sim::parse_windows(a.windows, trace.jobs.size(), a.warmup);
  const sim::EngineOptions engine_options = a.profile.engine();
  std::vector<policy::ProfileOptions> profiles;
  for (const auto& name : split_list(a.policies)) {
    profiles.push_back(a.profile.profile(name));
    profiles.back().priority_options.seed = a.trace.sample_seed;  // rl-sampled's stream
  }
  if (profiles.empty()) throw InputError("--policy: no policy given");

  std::cout << fmt::format("cluster  {}: {} pools, {} nodes, {} GPUs\n", cluster.name, cluster.pools.size(),
                           cluster.total_nodes(), cluster.total_gpus());
  std::cout << fmt::format("trace    {} ({} jobs, format {}{})\n", trace.source, trace.jobs.size(), trace.format,
                           trace.skipped.skipped ? fmt::format(", {} rows skipped", trace.skipped.skipped) : "");
  const policy::ProfileOptions shown = a.profile.profile("fcfs");  // the settings, with what --semantics fixes
  std::cout << fmt::format("windows  {}{}; blocking {}; backfill {}; runtime estimates {}; placement {}{}\n\n",
                           windows.size() == 1 ? windows[0].label : std::to_string(windows.size()),
                           a.warmup > 0 ? fmt::format(" after up to {} warm-up jobs", a.warmup) : "",
                           policy::to_string(shown.blocking), shown.backfill ? "on" : "off", a.profile.runtime, shown.placement,
                           shown.semantics == "rltune" ? "" : fmt::format("; semantics {}", shown.semantics));

  // One folder per policy under --out: its name, with the '/' of a model's path as '-'; a name that
  // comes out the same as an earlier one ("rl:a/b" and "rl:a-b") gets "-2", "-3"...
  std::vector<std::string> folder_names;
  for (const auto& p : profiles) {
    std::string base = p.name();
    std::replace(base.begin(), base.end(), '/', '-');
    std::string name = base;
    for (int k = 2; std::find(folder_names.begin(), folder_names.end(), name) != folder_names.end(); ++k)
      name = fmt::format("{}-{}", base, k);
    folder_names.push_back(name);
  }
  std::vector<std::pair<std::string, metrics::Summary>> rows;
  // Why jobs were rejected, per policy ("N x reason, ..."; empty when none was): the table shows only
  // how many, and a run that rejects every job would otherwise say no more than "0 run".
  std::vector<std::string> rejections;
  std::vector<std::string> estimate_lines;  // how good the estimates were, when they are not the truth
  const bool estimated = engine_options.runtime != sim::RuntimeKnowledge::oracle;
  for (const auto& profile_options : profiles) {
    auto scheduler = policy::make_profile(profile_options);
    const std::vector<metrics::RunMetrics> runs =
        experiment::run_windows(cluster, trace.jobs, windows, static_cast<std::size_t>(a.warmup), engine_options, *scheduler);
    for (const metrics::RunMetrics& run : runs)
      if (run.estimate_fallbacks > 0 && rows.empty())  // the same jobs for every policy: said once
        spdlog::warn("window {}: {} jobs have no requested time; their estimate is the true duration", run.window,
                     run.estimate_fallbacks);
    std::vector<const metrics::RunMetrics*> run_ptrs;
    for (const auto& r : runs) run_ptrs.push_back(&r);
    rows.emplace_back(profile_options.name(), metrics::summarize(run_ptrs));
    rejections.push_back(rejection_counts(runs));
    if (const std::string warning = metrics::time_limit_warning(rows.back().second.milp_time_limit_hits, rows.back().second.milp_solves); !warning.empty())
      spdlog::warn("{}: {}", profile_options.name(), warning);
    const metrics::EstimateAccuracy accuracy = metrics::estimate_accuracy(run_ptrs);
    if (estimated) estimate_lines.push_back(fmt::format("  {}: {}", profile_options.name(), metrics::describe(accuracy)));

    if (!a.out.empty()) {
      const std::filesystem::path dir =
          profiles.size() == 1 ? std::filesystem::path(a.out) : std::filesystem::path(a.out) / folder_names[rows.size() - 1];
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec) throw InputError(fmt::format("--out {}: cannot create the directory: {}", dir.string(), ec.message()));
      if (rows.size() == 1) {
        remove_stale_results(a.out, profiles.size() == 1, folder_names);
        // With several policies, the top config.json lists their folders: what a later run here replaces.
        if (profiles.size() > 1)
          report::write_file((std::filesystem::path(a.out) / "config.json").string(),
                             json_text(report::Json{{"command", "simulate"}, {"folders", folder_names}}, 2) + "\n");
      }
      report::write_file((dir / "jobs.csv").string(), [&](std::ostream& out) { report::write_jobs_csv(out, run_ptrs); });
      report::write_file((dir / "summary.json").string(), json_text(report::summary_json(run_ptrs, estimated), 2) + "\n");
      report::Json config = run_config("simulate", cluster, trace, a.trace, a.profile, profile_options);
      report::Json ws = report::Json::array();
      for (const auto& w : windows) ws.push_back(w.label);
      config["windows"] = ws;
      if (a.warmup > 0) config["warmup"] = a.warmup;
      report::write_file((dir / "config.json").string(), json_text(config, 2) + "\n");
    }
  }
  report::print_comparison(std::cout, rows);
  if (std::any_of(rejections.begin(), rejections.end(), [](const std::string& r) { return !r.empty(); })) {
    std::cout << "\nrejected jobs (never run, left out of the averages; each job's reason is in --out's jobs.csv):\n";
    if (std::all_of(rejections.begin(), rejections.end(), [&](const std::string& r) { return r == rejections.front(); }))
      std::cout << fmt::format("  {}: {}\n", rows.size() == 1 ? rows.front().first : "every policy", rejections.front());
    else
      for (std::size_t p = 0; p < rows.size(); ++p)
        if (!rejections[p].empty()) std::cout << fmt::format("  {}: {}\n", rows[p].first, rejections[p]);
  }
  if (estimated) std::cout << fmt::format("\nruntime estimates ({}):\n{}\n", sim::to_string(engine_options.runtime), fmt::join(estimate_lines, "\n"));
  if (!a.out.empty()) {
    std::cout << fmt::format("\nwrote jobs.csv, summary.json and config.json under {}", a.out);
    if (profiles.size() > 1)
      for (std::size_t k = 0; k < profiles.size(); ++k)
        std::cout << fmt::format("\n  {}: {}", profiles[k].name(), (std::filesystem::path(a.out) / folder_names[k]).string());
    std::cout << "\n";
  }
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
                  "Priority policies to compare, repeatable or comma-separated (see `rltune policies`); NAME@PLACEMENT "
                  "gives one its own placement (e.g. rl:models/helios-fcfs-bsld@milp)")
      ->capture_default_str();
  sub->get_option("--seed")->description(
      "Seed of the generated default workload, of gavel duration sampling and of rl-sampled's picks");
  args->profile.add_options(*sub);
  sub->add_option("--window", args->windows, "START:LEN over the submit-sorted trace, repeatable (default: all)");
  sub->add_option("--warmup", args->warmup,
                  "Jobs before each window replayed first by fcfs (same placement, blocking, backfill), not measured")
      ->capture_default_str()
      ->check(setting_bounds(sim::window_setting("warmup")));
  sub->add_option("--out", args->out, "Directory for jobs.csv, summary.json and config.json")->check(path_name());
  return {sub, [args, sub] {
            args->profile.check(*sub, args->policies);
            return run_simulate(*args);
          }};
}

}  // namespace rltune::cli
