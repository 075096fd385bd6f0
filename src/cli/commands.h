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
  std::string path;  // "" = built-in sample
  trace::ReadOptions read;
  int sample_jobs = 2000;
  unsigned long long sample_seed = 1;
  double sample_load = 0.9;
  void add_options(CLI::App& app);
  // Loads the trace (or makes the sample sized for `cluster`) and logs what was skipped.
  trace::Trace load(const cluster::ClusterSpec& cluster) const;
};

Command add_simulate(CLI::App& app);
Command add_trace_stats(CLI::App& app);
Command add_policies(CLI::App& app);
Command add_generate(CLI::App& app);

}  // namespace rltune::cli
