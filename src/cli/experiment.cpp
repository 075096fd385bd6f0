// `rltune experiment --config EXP.yaml --out DIR` and `rltune report DIR`.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "core/comm.h"
#include "core/error.h"
#include "core/file.h"
#include "experiment/config.h"
#include "experiment/runner.h"
#include "report/experiment_report.h"

namespace rltune::cli {

namespace {

struct ExperimentArgs {
  std::string config;
  std::string out;
  int jobs = default_threads();
  bool resume = false;
  bool quiet = false;
  bool report = false;
};

// Says which figures of an earlier report a report removed (nothing when none): a user who put them
// there learns where they went.
std::string removed_note(const report::ReportOutcome& r) {
  if (r.removed.empty()) return "";
  return fmt::format("removed {} files of an earlier report's figures that this one does not draw: {}\n", r.removed.size(),
                     fmt::join(r.removed, ", "));
}

int run_experiment(const ExperimentArgs& a) {
  const Comm& comm = world();
  experiment::Config config;
  together(comm, [&] {  // the same on every rank, but a rank may fail to read the file
    if (a.jobs < 1) throw InputError("--jobs must be at least 1");
    config = experiment::load_config(a.config);
  });
  std::size_t runs = 0;
  for (const auto& w : config.workloads) runs += w.policies.size() * static_cast<std::size_t>(w.windows.count);
  const std::string ranks = comm.size() > 1 ? fmt::format(" on each of {} MPI ranks", comm.size()) : "";
  std::cout << fmt::format("experiment {}: {} workloads, {} runs on {} threads{}\n", config.name, config.workloads.size(),
                           runs, a.jobs, ranks)
            << std::flush;  // to a file, it would be lost with the buffer when the run is stopped
  const experiment::Outcome o =
      experiment::run_experiment(config, a.out, {.jobs = a.jobs, .resume = a.resume, .progress = !a.quiet}, comm);
  // The summary tables, as summary.md holds them (Markdown reads well on a terminal too).
  if (const auto summary = read_file((std::filesystem::path(a.out) / "summary.md").string())) std::cout << *summary << '\n';
  std::cout << fmt::format("{} runs ({} reused from an earlier invocation, {} failed) in {:.1f} s\n", o.runs, o.reused,
                           o.failed, o.wall_s);
  std::cout << fmt::format("wrote runs.csv, timings.csv, summary.csv, summary.md, cdf.csv, timeseries.csv and config.json under {}\n",
                           a.out);
  if (a.report && comm.rank() == 0) {
    const auto r = report::make_report(a.out);
    std::cout << fmt::format("wrote report.html, report.md and {} figures under {}/figures\n{}", r.figures.size(), a.out, removed_note(r));
  }
  if (o.failed > 0) {
    std::cerr << fmt::format("rltune: {} runs failed; their errors are in {}/runs.csv\n", o.failed, a.out);
    return 1;
  }
  return 0;
}

}  // namespace

Command add_experiment(CLI::App& app) {
  auto args = std::make_shared<ExperimentArgs>();
  CLI::App* sub = app.add_subcommand("experiment", "Compare policies on the same windows of several workloads, from one config");
  sub->add_option("--config", args->config, "Experiment config (YAML; see experiments/)")->required();
  sub->add_option("--out", args->out, "Folder for the results")->check(path_name())->required();
  sub->add_option("--jobs", args->jobs, "Runs in parallel (default: every core, shared by the MPI ranks on this machine; results do not depend on it)")->capture_default_str();
  sub->add_flag("--resume", args->resume, "Continue an interrupted experiment in --out, reusing finished runs");
  sub->add_flag("--quiet", args->quiet, "No progress bar");
  sub->add_flag("--report", args->report, "Also write the report (as `rltune report DIR`)");
  return {sub, [args] { return run_experiment(*args); }};
}

Command add_report(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto gnuplot = std::make_shared<std::string>("gnuplot");
  CLI::App* sub = app.add_subcommand("report", "Figures (PNG, SVG), report.html and report.md of an experiment folder");
  sub->add_option("dir", *dir, "Folder written by `rltune experiment`")->required();
  sub->add_option("--gnuplot", *gnuplot, "The gnuplot program")->capture_default_str();
  return {sub, [dir, gnuplot] {
            const auto r = report::make_report(*dir, {.gnuplot = *gnuplot});
            std::cout << fmt::format("wrote {}/report.html, {}/report.md and {} figures (PNG and SVG) under {}/figures\n{}", *dir,
                                     *dir, r.figures.size(), *dir, removed_note(r));
            return 0;
          }};
}

}  // namespace rltune::cli
