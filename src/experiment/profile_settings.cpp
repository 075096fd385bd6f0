#include "experiment/profile_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

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

std::span<const ChoiceSetting> choice_settings() {
  using P = policy::ProfileOptions;
  using E = sim::EngineOptions;
  static const ChoiceSetting choices[] = {
      {"--semantics", "semantics", "rltune; helios (HeliosArtifact's: consolidate placement, pool blocking, no backfill, ties by arrival); or reference "
       "(the published RLTune's; docs/fidelity.md)",
       &ProfileSettings::semantics, [](P& p, E&, const std::string& v) { p.semantics = policy::find_semantics(v).name; }, nullptr},
      // Known placements are checked with the whole profile (policy::make_profile): "NAME@PLACEMENT" too.
      {"--placement", "placement", "Placement policy: greedy, defrag, balance, consolidate or milp", &ProfileSettings::placement,
       [](P& p, E&, const std::string& v) { p.placement = v; }, nullptr},
      {"--milp-model", "milp.model", "milp: nodes (nodes grouped by free GPUs) or ways (the paper's)", &ProfileSettings::milp_model,
       [](P& p, E&, const std::string& v) {
         // The model's weights with it, so that weights given beside it override them whatever the order.
         const policy::MilpOptions base = policy::MilpOptions::for_model(v);
         p.milp.model = base.model;
         p.milp.alpha = base.alpha, p.milp.beta = base.beta, p.milp.gamma = base.gamma, p.milp.delta = base.delta;
         p.milp.waste = base.waste;
       },
       nullptr},
      {"--blocking", "blocking", "global: a blocked job stops every start; pool: only in its pools", &ProfileSettings::blocking,
       [](P& p, E&, const std::string& v) { p.blocking = policy::parse_blocking(v); }, nullptr},
      {"--backfill", "backfill", "EASY backfilling behind blocked jobs (by runtime estimates)", &ProfileSettings::backfill, nullptr,
       [](P& p, E&, bool v) { p.backfill = v; }},
      {"--backfill-limits", "backfill_limits",
       "backfill: plan with the jobs' time limits, as Slurm's backfill does, whatever --runtime estimates for the priorities "
       "(a job without a time limit is planned with its estimate)",
       &ProfileSettings::backfill_limits, nullptr, [](P&, E& e, bool v) { e.backfill_on_limits = v; }},
      {"--runtime", "runtime",
       "Runtime estimates: oracle (true duration), requested (the trace's time limits), predicted (= predicted:history, the "
       "mean of the user's last finished jobs) or predicted:learned (boosted trees over that history: --runtime-model)",
       &ProfileSettings::runtime, [](P&, E& e, const std::string& v) { e.runtime = sim::parse_runtime_knowledge(v); }, nullptr},
      {"--runtime-model", "runtime_model",
       "predicted:learned: a fitted runtime model file (as train writes beside its model); default: fit one on the trace's "
       "training split",
       &ProfileSettings::runtime_model, [](P&, E& e, const std::string& v) { e.runtime_model_file = v; }, nullptr, "FILE"},
      {"--mf-favor-small", "multifactor.favor_small", "multifactor: Slurm PriorityFavorSmall=YES", &ProfileSettings::favor_small,
       nullptr, [](P& p, E&, bool v) { p.priority_options.multifactor.favor_small = v; }},
  };
  return choices;
}

std::string ChoiceSetting::python_keyword() const {
  std::string k = key;
  std::replace(k.begin(), k.end(), '.', '_');
  return k;
}

const ChoiceSetting* find_choice(std::string_view key) {
  for (const ChoiceSetting& c : choice_settings())
    if (key == c.key) return &c;
  return nullptr;
}

std::set<std::string> profile_keys() {
  std::set<std::string> keys{"milp", "multifactor"};
  for (const ChoiceSetting& c : choice_settings()) keys.insert(std::string(c.key).substr(0, std::string_view(c.key).find('.')));
  for (const auto& s : sim::engine_settings()) keys.insert(s.key);
  for (const auto& s : policy::sampling_settings()) keys.insert(s.key);
  return keys;
}

void ProfileSettings::set(const std::string& group, const std::string& key, double value) {
  if (group == "milp") set_value(policy::milp_settings(), milp_values, group, key, value);
  else if (group == "multifactor") set_value(policy::multifactor_settings(), multifactor_values, group, key, value);
  else if (group == "runtime") set_value(sim::engine_settings(), engine_values, group, key, value);
  else if (group == "sampling") set_value(policy::sampling_settings(), sampling_values, group, key, value);
  else throw InputError(fmt::format("{}: no such group of settings (known: milp, multifactor, runtime, sampling)", group));
}

policy::ProfileOptions ProfileSettings::profile(const std::string& spec) const {
  // "NAME@PLACEMENT" overrides --placement for this policy.
  const auto at = spec.rfind('@');
  const std::string priority = at == std::string::npos ? spec : spec.substr(0, at);
  if (at != std::string::npos && at + 1 == spec.size()) throw InputError("--policy " + spec + ": a placement after @ is missing");
  policy::ProfileOptions p;
  sim::EngineOptions e;
  for (const ChoiceSetting& c : choice_settings())
    std::visit([&](auto field) {
      if constexpr (std::is_same_v<decltype(field), bool ProfileSettings::*>) c.apply_switch(p, e, this->*field);
      else c.apply_text(p, e, this->*field);
    }, c.field);
  // The MILP weights and the multifactor numbers given, over the model's and the policy's defaults.
  apply_settings(policy::milp_settings(), milp_values, p.milp);
  apply_settings(policy::multifactor_settings(), multifactor_values, p.priority_options.multifactor);
  apply_settings(policy::sampling_settings(), sampling_values, p.priority_options);
  p.priority = priority;
  if (at != std::string::npos) p.placement = spec.substr(at + 1);
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
  e.runtime_model_file = runtime_model;
  e.backfill_on_limits = backfill_limits;
  if (backfill_limits && !backfill) throw InputError("--backfill-limits plans backfilling: it needs --backfill");
  apply_settings(sim::engine_settings(), engine_values, e);
  if (!runtime_model.empty() && e.runtime != sim::RuntimeKnowledge::learned)
    throw InputError(fmt::format("runtime model {}: applies only to runtime predicted:learned (runtime is {})", runtime_model, runtime));
  return e;
}

policy::ProfileOptions ProfileSettings::check_semantics(const std::function<bool(const std::string& key)>& given,
                                                       const std::string& prefix) const {
  policy::ProfileOptions chosen;
  chosen.placement = placement;
  chosen.blocking = policy::parse_blocking(blocking);
  chosen.backfill = backfill;
  for (const auto& [key, value] : policy::fixed_settings(policy::find_semantics(semantics)))
    if (const std::string text = policy::setting_text(chosen, key); given(key) && text != value)
      throw InputError(fmt::format("{0}semantics {1} sets {0}{2} {3}; {0}{2} {4} contradicts it", prefix, semantics, key, value, text));
  chosen.semantics = policy::find_semantics(semantics).name;
  policy::apply_semantics(chosen);
  return chosen;
}

void ProfileSettings::describe(Json& config, const policy::ProfileOptions& p) const {
  if (p.semantics != "rltune") config["semantics"] = std::string(p.semantics);
  config["placement"] = p.placement;
  config["blocking"] = policy::to_string(p.blocking);
  config["backfill"] = p.backfill;
  if (backfill_limits) config["backfill_limits"] = true;
  config["runtime"] = runtime;
  if (!runtime_model.empty()) config["runtime_model"] = runtime_model;
  if (const sim::EngineOptions e = engine(); sim::is_predicted(e.runtime))
    write_settings(config, e, sim::engine_settings());
  if (p.placement == "milp") config["milp"] = milp_json(p.milp);
  config["multifactor"] = multifactor_json(multifactor());
  write_sampling(config, p);
}

}  // namespace rltune::experiment
