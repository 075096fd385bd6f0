#pragma once
// How policies run, as a front end states it (the CLI's flags, Python's keyword arguments): placement
// (and its MILP settings), blocking, backfilling, runtime knowledge and the multifactor weights, as
// given, turned into the options of each component. No CLI11 here: the Python module uses it too.
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "experiment/config.h"
#include "policy/profile.h"
#include "sim/engine.h"

namespace rltune::experiment {

struct ProfileSettings;

// One record per choice of how policies run (the numbers have NumberSetting records): its CLI flag, its
// key in experiment YAML (under `defaults` or a policy; "milp.model" is `model` in the `milp` map) and
// in config.json, its meaning, where ProfileSettings keeps it, and what it sets. The CLI's flags, the
// YAML reader, Python's keywords (the key with '.' as '_') and ProfileSettings are all made from them.
struct ChoiceSetting {
  const char* flag;  // "--milp-model"
  const char* key;   // "milp.model"
  const char* description;
  std::variant<std::string ProfileSettings::*, bool ProfileSettings::*> field;
  // Sets the choice in `p` and `e`: InputError naming the known values for an unknown one.
  void (*apply_text)(policy::ProfileOptions& p, sim::EngineOptions& e, const std::string& value);
  void (*apply_switch)(policy::ProfileOptions& p, sim::EngineOptions& e, bool value);
  const char* value_name = "NAME";  // what the flag takes, for --help

  bool is_switch() const { return field.index() == 1; }
  std::string python_keyword() const;  // "milp_model"
};
std::span<const ChoiceSetting> choice_settings();
const ChoiceSetting* find_choice(std::string_view key);  // by key; nullptr for none
// The keys of experiment YAML's `defaults` and policy entries that set how policies run: the choices'
// (their first part: "milp", "multifactor"), and the numbers' groups and runtime settings.
std::set<std::string> profile_keys();

struct ProfileSettings {
  std::string semantics = "rltune";
  std::string placement = "greedy";
  std::string blocking = "global";
  std::string runtime = "oracle";
  std::string runtime_model;  // predicted:learned: a model file; "" = fit one on the trace
  bool backfill = false;
  bool backfill_limits = false;  // backfilling plans with time limits (EngineOptions::backfill_on_limits)
  std::vector<std::optional<double>> multifactor_values;  // per policy::multifactor_settings(); unset = default
  bool favor_small = false;
  std::string milp_model = "nodes";
  std::vector<std::optional<double>> milp_values;    // per policy::milp_settings(); unset = the model's default
  std::vector<std::optional<double>> engine_values;  // per sim::engine_settings()
  std::vector<std::optional<double>> sampling_values;  // per policy::sampling_settings()

  // Sets one numeric setting by its group ("milp", "multifactor", "runtime" or "sampling", as the CLI's help groups
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
  // A semantics fixes some settings: one given again with the same value is fine, with another an
  // InputError. `given(key)`: whether the caller gave that key; `prefix` goes before the names ("--"
  // for the CLI's flags, "" for Python's keywords). Returns the settings with the semantics applied.
  policy::ProfileOptions check_semantics(const std::function<bool(const std::string& key)>& given, const std::string& prefix) const;
};

}  // namespace rltune::experiment
