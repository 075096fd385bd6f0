#pragma once
// Command registration: each command adds its subcommand and options to the app and returns the
// function that runs it after parsing.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
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
  void add_options(CLI::App& app);
  bool uses_sample() const { return paths.empty() && pai_job_table.empty(); }
  // The options that tell how to read a file (format and per-format settings), without the sample ones.
  // --seed (also the sample's seed) is left to the command when with_seed is false.
  void add_format_options(CLI::App& app, bool with_seed = true);
  // Reads the given files (for commands that take them as arguments); logs what was skipped.
  trace::Trace read_files(std::vector<std::string> files) const;
  // Loads the trace (or generates the default workload for `cluster`) and logs what was skipped.
  trace::Trace load(const cluster::ClusterSpec& cluster) const;
};

Command add_simulate(CLI::App& app);
Command add_trace_stats(CLI::App& app);
Command add_policies(CLI::App& app);
Command add_generate(CLI::App& app);
Command add_convert(CLI::App& app);
Command add_cluster_from(CLI::App& app);

}  // namespace rltune::cli
