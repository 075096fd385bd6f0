#include "experiment/profile_settings.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "policy/registry.h"

namespace rltune::experiment {

namespace {

template <typename Options>
void apply_settings(std::span<const NumberSetting<Options>> settings, const std::vector<std::optional<double>>& values,
                    Options& o) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i]) settings[i].set(o, *values[i]);
}

template <typename Options>
void set_value(std::span<const NumberSetting<Options>> settings, std::vector<std::optional<double>>& values, const std::string& group,
               const std::string& key, double value) {
  values.resize(settings.size());
  std::string known;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    const NumberSetting<Options>& s = settings[i];
    known += (i ? ", " : "") + std::string(s.key);
    if (key != s.key) continue;
    if (!(value >= s.min && value <= s.max))
      throw InputError(fmt::format("{}.{} {}: must be between {} and {}", group, key, value, s.min, s.max));
    if (s.integer() && value != std::floor(value)) throw InputError(fmt::format("{}.{} {}: must be a whole number", group, key, value));
    values[i] = value;
    return;
  }
  throw InputError(fmt::format("{}.{}: no such setting (known: {})", group, key, known));
}

}  // namespace

void ProfileSettings::set(const std::string& group, const std::string& key, double value) {
  if (group == "milp") set_value(policy::milp_settings(), milp_values, group, key, value);
  else if (group == "multifactor") set_value(policy::multifactor_settings(), multifactor_values, group, key, value);
  else if (group == "runtime") set_value(sim::engine_settings(), engine_values, group, key, value);
  else throw InputError(fmt::format("{}: no such group of settings (known: milp, multifactor, runtime)", group));
}

policy::ProfileOptions ProfileSettings::profile(const std::string& spec) const {
  // "NAME@PLACEMENT" overrides --placement for this policy.
  const auto at = spec.rfind('@');
  const std::string priority = at == std::string::npos ? spec : spec.substr(0, at);
  if (at != std::string::npos && at + 1 == spec.size()) throw InputError("--policy " + spec + ": a placement after @ is missing");
  // MILP options: the model's defaults, then the values given on the command line.
  policy::MilpOptions m = policy::MilpOptions::for_model(milp_model);
  apply_settings(policy::milp_settings(), milp_values, m);
  policy::ProfileOptions p;
  p.priority = priority;
  p.placement = at == std::string::npos ? placement : spec.substr(at + 1);
  p.blocking = policy::parse_blocking(blocking);
  p.backfill = backfill;
  p.priority_options.multifactor = multifactor();
  p.milp = m;
  p.semantics = policy::find_semantics(semantics).name;
  const std::string asked = p.placement;
  policy::apply_semantics(p);
  if (at != std::string::npos && p.placement != asked)
    throw InputError(fmt::format("--policy {}: --semantics {} places with {}", spec, semantics, p.placement));
  policy::make_profile(p);  // fail on unknown names before any work
  return p;
}

policy::MultifactorOptions ProfileSettings::multifactor() const {
  policy::MultifactorOptions mf;
  apply_settings(policy::multifactor_settings(), multifactor_values, mf);
  mf.favor_small = favor_small;
  return mf;
}

sim::EngineOptions ProfileSettings::engine() const {
  sim::EngineOptions e;
  e.runtime = sim::parse_runtime_knowledge(runtime);
  apply_settings(sim::engine_settings(), engine_values, e);
  return e;
}

void ProfileSettings::describe(Json& config, const policy::ProfileOptions& p) const {
  if (p.semantics != "rltune") config["semantics"] = std::string(p.semantics);
  config["placement"] = p.placement;
  config["blocking"] = policy::to_string(p.blocking);
  config["backfill"] = p.backfill;
  config["runtime"] = runtime;
  if (const sim::EngineOptions e = engine(); e.runtime == sim::RuntimeKnowledge::predicted)
    write_settings(config, e, sim::engine_settings());
  if (p.placement == "milp") config["milp"] = milp_json(p.milp);
  config["multifactor"] = multifactor_json(multifactor());
}

}  // namespace rltune::experiment
