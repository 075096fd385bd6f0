#pragma once
// An experiment config (EXP.yaml): which clusters and traces, which windows, and which scheduler profiles
// to compare on them. Every error names the file, line and key path; unknown keys are errors.
//
//   name: helios-paper
//   description: what it compares and how long it takes
//   seed: 1                       # windows, generated workloads and bootstrap resampling
//   windows: {count: 50, length: 256, split: all, train_split: 0.7}   # seed: default the config's
//   defaults: {placement: greedy, blocking: global, backfill: false, runtime: oracle}   # or {semantics: helios}
//   policies: [fcfs, sjf, {name: sjf-bf, priority: sjf, backfill: true}, "rl:../models/x@milp"]
//   baselines: [fcfs]             # improvements are over these (default: the first policy)
//   timeseries_windows: 1         # windows per workload whose queue/GPU/fragmentation series are kept
//   bootstrap: 2000               # resamples of the paired bootstrap
//   workloads:
//     - cluster: helios           # preset or cluster YAML
//       trace: {generate: {like: helios, jobs: 20000, load: 0.9}}
//       policies: ["rl:../models/helios-fcfs-bsld"]   # extra policies for this workload only
//     - cluster: alibaba
//       trace: {files: [../../shared/traces/alibaba/openb_pod_list_gpuspec33.csv], format: openb}
//       windows: {length: 1024}   # this workload's own window keys
//
// Relative paths (cluster files, traces, models) are relative to the config file's folder.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/profile.h"
#include "sim/engine.h"
#include "sim/window.h"
#include "trace/reader.h"

namespace rltune::experiment {

using Json = nlohmann::ordered_json;

// Where a workload's jobs come from: trace files, or the generator.
struct TraceSource {
  std::string label;                // name in outputs: "generated-helios", or the first file's name
  std::vector<std::string> files;   // empty = generated
  trace::ReadOptions read;
  std::vector<trace::GivenSetting> given;  // the format settings the YAML gave (each checked against the format read)
  std::string like;                 // generator family or model file; "" = the cluster's family
  int jobs = 20000;
  double load = 0.9;
  std::uint64_t seed = 1;
};

struct PolicySpec {
  std::string label;                // column name in outputs, unique within a workload
  policy::ProfileOptions profile;   // priority "rl:PATH" holds the resolved model path
  sim::EngineOptions engine;        // runtime knowledge and the predictor's settings
  std::string where;                // "FILE:LINE" of the entry, for messages
};

// A workload's windows: the numeric settings (sim::window_settings(): count, length, warmup,
// train_split), then the rest.
struct WindowSpec : sim::WindowSettings {
  bool whole = false;               // `length: all`: one window, the whole split (count is 1)
  sim::Split split = sim::Split::all;
  std::uint64_t seed = 1;           // draws the windows; default: the config's seed
  std::string where;                // "FILE:LINE" where they are set, for messages
};

struct Workload {
  std::string cluster;              // preset name or resolved cluster file
  std::string cluster_label;        // name in outputs
  int cluster_gpus = 0;
  TraceSource trace;
  std::vector<PolicySpec> policies; // the config's policies, then the workload's own
  WindowSpec windows;               // the config's, with the workload's own keys applied
  std::string where;
};

struct Config {
  std::string source;               // the config file
  std::string name, description;
  std::uint64_t seed = 1;
  WindowSpec windows;
  std::vector<Workload> workloads;
  std::vector<std::string> baselines;  // policy labels present in every workload
  int timeseries_windows = 1;
  int bootstrap = 2000;
  // The effective config: every default filled in and every path resolved (written as config.json).
  Json effective;
};

// The MILP and multifactor settings as written into config.json files (experiment, simulate, train).
Json milp_json(const policy::MilpOptions& milp);
Json multifactor_json(const policy::MultifactorOptions& multifactor);
// A sampled policy's sampling settings (temperature), into `j`, when they are not the defaults.
void write_sampling(Json& j, const policy::ProfileOptions& profile);

// Parses EXP.yaml text; `file` names it in errors and anchors relative paths. Checks every name
// (cluster presets, policies, placements, models exist) without reading traces.
Config parse_config(const std::string& yaml, const std::string& file);
Config load_config(const std::string& path);

}  // namespace rltune::experiment
