#pragma once
// Command registration: each command adds its subcommand and options to the app and returns the
// function that runs it after parsing.
#include <CLI/CLI.hpp>
#include <functional>
#include <string_view>
#include <string>
#include <vector>

#include <array>
#include <optional>

#include "cluster/cluster_spec.h"
#include "experiment/profile_settings.h"
#include "experiment/runner.h"
#include "metrics/metrics.h"
#include "policy/profile.h"
#include "report/outputs.h"
#include "sim/engine.h"
#include "sim/window.h"
#include "trace/job_spec.h"
#include "trace/reader.h"

namespace rltune::cli {

using Run = std::function<int()>;
struct Command {
  CLI::App* app;
  Run run;  // called after parsing when `app` was chosen; returns the exit code
};

// Where jobs come from: a trace file, or the built-in sample workload when no file is given.
struct TraceArgs {
  std::vector<std::string> paths;  // empty = built-in sample
  std::string pai_job_table;       // pai format: the job table (same as --trace)
  trace::ReadOptions read;
  std::string like;  // workload family or model of the generated default; "" = the one named like the cluster
  int sample_jobs = 2000;
  unsigned long long sample_seed = 1;
  double sample_load = 0.9;
  std::vector<const CLI::Option*> sample_options;  // --like, --sample-jobs, --sample-load: errors with a trace file
  std::vector<std::pair<const CLI::Option*, std::string>> format_options;  // a format's own options, and that format
  std::vector<const CLI::Option*> file_options;  // every option about reading a file (--format, --skip-invalid, format_options)
  void add_options(CLI::App& app);
  // InputError naming the first file option given, when no file is read (`why`).
  void refuse_file_options(const std::string& why) const;
  bool uses_sample() const { return paths.empty() && pai_job_table.empty(); }
  // The options that tell how to read a file (format and per-format settings), without the sample ones.
  // --seed (also the sample's seed) is left to the command when with_seed is false.
  void add_format_options(CLI::App& app, bool with_seed = true);
  // Reads the given files (for commands that take them as arguments); logs what was skipped.
  trace::Trace read_files(std::vector<std::string> files) const;
  // Loads the trace (or generates the default workload for `cluster`) and logs what was skipped.
  trace::Trace load(const cluster::ClusterSpec& cluster) const;
  // Adds what decides the jobs to a config.json object: the files, the per-format settings and the seed
  // (which also draws gavel durations), or the generated workload's family.
  void describe(report::Json& config, const cluster::ClusterSpec& cluster, const trace::Trace& trace) const;
};

// How policies run, shared by simulate, train, evaluate, trace-stats and slurm: the settings
// (experiment/profile_settings.h) and their flags.
struct ProfileArgs : experiment::ProfileSettings {
  void add_options(CLI::App& app);
  // After parsing: MILP options without the MILP placement would be silently ignored, so they are errors.
  // `policies` may name placements with NAME@PLACEMENT.
  void check(const CLI::App& app, const std::vector<std::string>& policies = {}) const;
};

// config.json's common part for a command that runs `policy` on a trace: the command, cluster, trace
// and every scheduling setting (simulate and evaluate add their windows).
report::Json run_config(const std::string& command, const cluster::ClusterSpec& cluster, const trace::Trace& trace,
                        const TraceArgs& trace_args, const ProfileArgs& profile, const policy::ProfileOptions& policy);

// The command line of `train --resume --out DIR` given with nothing but --epochs, --threads, --quiet or
// --log-level: the run's own arguments from DIR/config.json with those replacing theirs. Any other
// command line is returned as it is (a resume given every argument is checked against the stored run).
std::vector<std::string> resumed_train_arguments(std::vector<std::string> command_line);

// CLI::Range for real numbers without its hole: "nan" compares false with both bounds and passes it.
CLI::Validator number_range(double min, double max);
// A file or folder name: an empty one ("--out ''") would be taken for none given.
CLI::Validator path_name();
// A seed: a whole number from 0 to 2^64 - 1. CLI11 alone would wrap -1 and saturate 2^64 silently.
CLI::Validator seed_value();
// The bounds of a numeric setting record (core/settings.h), checked at parse time in the flag's name:
// a number, within [min, max], and whole for an integer setting.
CLI::Validator setting_bounds(double min, double max, bool integer);
template <typename Options>
CLI::Validator setting_bounds(const NumberSetting<Options>& s) {
  return setting_bounds(s.min, s.max, s.integer());
}

// One flag per setting, bound to its field in `o` (its default shown), its bounds checked at parse time.
template <typename Options>
void add_settings(CLI::App& sub, std::span<const NumberSetting<Options>> settings, Options& o) {
  for (const NumberSetting<Options>& s : settings)
    std::visit([&](auto member) { sub.add_option(s.flag, o.*member, s.description)->capture_default_str()->check(setting_bounds(s)); },
               s.field);
}

// "a,b" "c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::vector<std::string>& items);

using experiment::run_window;

// The command word: the first argument that is not an option (nor --log-level's value); empty if none.
std::string_view command_word(int argc, char** argv);

// An output file replaces its file: written over an input (by file identity, so ./X and links count),
// the input would be lost. InputError "FLAG OUT: is INPUT, ..." for the first such input.
void refuse_overwriting(const std::string& flag, const std::string& out, const std::vector<std::string>& inputs);

// --out must not be another command's folder (a training run, an experiment): writing config.json there
// would replace theirs, which resume and report read. A folder of the same command is written over.
void check_out_dir(const std::string& out, const std::string& command);

// Parses and runs one of the commands `adds` registers; returns the exit code.
int run_app(int argc, char** argv, const std::vector<Command (*)(CLI::App&)>& adds);

Command add_simulate(CLI::App& app);
Command add_train(CLI::App& app);   // rltune-train only
Command add_export(CLI::App& app);  // rltune-train only
Command add_evaluate(CLI::App& app);
Command add_experiment(CLI::App& app);
Command add_report(CLI::App& app);
Command add_slurm(CLI::App& app);
Command add_trace_stats(CLI::App& app);
Command add_policies(CLI::App& app);
Command add_generate(CLI::App& app);
Command add_convert(CLI::App& app);
Command add_cluster_from(CLI::App& app);

}  // namespace rltune::cli
