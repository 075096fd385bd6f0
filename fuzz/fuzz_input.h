#pragma once
// What a fuzzed input must do, shared by the libFuzzer target (fuzz_inputs.cpp) and the test that
// replays the seeds and crash reproducers in every test run (tests/test_fuzz_inputs.cpp).
//
// An input is a first line naming what to read, then the text:
//   a trace format (`canonical`, `sacct`, ...) or `auto`, optionally followed by ` skip-invalid`;
//     for `pai` the task table follows a "\n--\n" line; gavel reads its durations from a fixed source;
//   `cluster`, `workload`, `experiment`: YAML; `policy`: a policy.json.
// Naming the kind, instead of numbering it, keeps each seed on its reader when readers are added.
// The input must be read, or refused with InputError; another exception or a broken invariant of the
// result is a bug (and a crash or sanitizer report is one too, found by the sanitizers).
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <typeinfo>
#include <unistd.h>
#include <vector>

#include "cluster/cluster_spec.h"
#include "core/error.h"
#include "experiment/config.h"
#include "policy/registry.h"
#include "rl/rl_policy.h"
#include "rl/trainer.h"
#include "trace/reader.h"
#include "workload/model.h"

namespace rltune::fuzz {

enum class Outcome { read, refused, unknown_kind, bug };

struct Verdict {
  Outcome outcome;
  std::string detail;  // the refusal's message, or what went wrong
};

inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("rltune-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::ofstream(d / "durations.csv") << "duration_s,num_gpus\n100,1\n3600,8\n";
    return d;
  }();
  return dir;
}

// Reads the text as a trace of `format`; a result must hold ids and be sorted by submit time.
inline Verdict read_trace_input(const std::string& format, bool skip_invalid, std::string text) {
  trace::ReadOptions options;
  options.format = format;
  options.skip_invalid = skip_invalid;
  options.duration_source = (scratch() / "durations.csv").string();
  options.pai_task_table = (scratch() / "tasks.csv").string();
  std::string tasks;
  if (const auto cut = text.find("\n--\n"); cut != std::string::npos) {
    tasks = text.substr(cut + 4);
    text.resize(cut);
  }
  std::ofstream(options.pai_task_table) << tasks;
  std::istringstream in(text);
  const trace::Trace t = trace::read_trace(in, "fuzz", options);
  for (std::size_t i = 0; i < t.jobs.size(); ++i) {
    const auto& j = t.jobs[i];
    if (j.id.empty() || j.submit < 0 || (i > 0 && t.jobs[i - 1].submit > j.submit))
      return {Outcome::bug, "job " + std::to_string(i) + " breaks the trace invariants"};
  }
  return {Outcome::read, ""};
}

// Parses a policy.json and runs its network on an empty observation.
inline Verdict read_policy_input(const std::string& text) {
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return {Outcome::refused, "not JSON"};
  const rl::PolicyFile f = rl::parse_policy_file(json, "fuzz");
  rl::Observation obs;
  obs.features = f.net.features;
  obs.visible = 1;
  obs.mask[0] = 1;
  std::vector<float> logits(rl::kActions);
  f.net.logits(obs, logits);
  return {Outcome::read, ""};
}

inline Verdict check_input(std::string_view data) {
  static const bool registered = [] {  // experiment configs name policies, as on the command line
    policy::register_builtins();
    rl::register_rl_policy();
    return true;
  }();
  (void)registered;
  const auto newline = data.find('\n');
  if (newline == std::string_view::npos) return {Outcome::unknown_kind, "no first line"};
  std::string kind(data.substr(0, newline));
  std::string text(data.substr(newline + 1));
  bool skip_invalid = false;
  if (kind.ends_with(" skip-invalid")) {
    skip_invalid = true;
    kind.resize(kind.size() - 13);
  }
  try {
    if (kind == "cluster") cluster::parse_cluster(text, "fuzz.yaml");
    else if (kind == "workload") workload::parse_model(text, "fuzz.yaml");
    else if (kind == "experiment") experiment::parse_config(text, (scratch() / "fuzz.yaml").string());
    else if (kind == "policy") return read_policy_input(text);
    else if (kind == "auto") return read_trace_input(kind, skip_invalid, std::move(text));
    else {
      bool known = false;
      for (const auto& r : trace::readers()) known = known || r.name == kind;
      if (!known) return {Outcome::unknown_kind, kind};
      return read_trace_input(kind, skip_invalid, std::move(text));
    }
    return {Outcome::read, ""};
  } catch (const InputError& e) {
    return {Outcome::refused, e.what()};
  } catch (const std::exception& e) {
    return {Outcome::bug, std::string(typeid(e).name()) + ": " + e.what()};
  }
}

}  // namespace rltune::fuzz
