#pragma once
// How policies run, as a front end states it (the CLI's flags, Python's keyword arguments): placement
// (and its MILP settings), blocking, backfilling, runtime knowledge and the multifactor weights, as
// given, turned into the options of each component. No CLI11 here: the Python module uses it too.
#include <optional>
#include <string>
#include <vector>

#include "experiment/config.h"
#include "policy/profile.h"
#include "sim/engine.h"

namespace rltune::experiment {

struct ProfileSettings {
  std::string semantics = "rltune";
  std::string placement = "greedy";
  std::string blocking = "global";
  std::string runtime = "oracle";
  bool backfill = false;
  std::vector<std::optional<double>> multifactor_values;  // per policy::multifactor_settings(); unset = default
  bool favor_small = false;
  std::string milp_model = "nodes";
  std::vector<std::optional<double>> milp_values;    // per policy::milp_settings(); unset = the model's default
  std::vector<std::optional<double>> engine_values;  // per sim::engine_settings()

  // Sets one numeric setting by its group ("milp", "multifactor" or "runtime", as the CLI's help groups
  // the flags) and key (the experiment YAML's); InputError naming GROUP.KEY for an unknown one, a
  // value out of its bounds, or a fractional value of a whole-number setting.
  void set(const std::string& group, const std::string& key, double value);

  policy::MultifactorOptions multifactor() const;  // the defaults with the values given
  // The profile for one priority policy, "NAME" or "NAME@PLACEMENT" (which overrides the placement);
  // InputError for unknown names or bad values.
  policy::ProfileOptions profile(const std::string& spec) const;
  sim::EngineOptions engine() const;
  // Adds placement, blocking, backfill, runtime, milp and multifactor settings to a config.json object.
  void describe(Json& config, const policy::ProfileOptions& profile) const;
};

}  // namespace rltune::experiment
