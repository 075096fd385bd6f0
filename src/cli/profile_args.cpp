// Options shared by the commands that run scheduler profiles.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "cli/commands.h"
#include "core/error.h"
#include "policy/registry.h"

namespace rltune::cli {

namespace {

// One flag per setting, into values[i] (unset = the default); bounds and whole numbers are checked at
// parse time, in the flag's name.
template <typename Options>
void add_settings(CLI::App& sub, std::span<const NumberSetting<Options>> settings, const char* group,
                  std::vector<std::optional<double>>& values) {
  static const Options defaults{};  // static: GCC 12 warns (wrongly) that a local one may be uninitialised
  values.assign(settings.size(), std::nullopt);
  for (std::size_t i = 0; i < settings.size(); ++i) {
    const NumberSetting<Options>& s = settings[i];
    std::string description = fmt::format("{}: {}", group, s.description);
    if (std::string_view(s.description).find("default") == std::string_view::npos)
      description += fmt::format(" [{}]", s.get(defaults));
    sub.add_option(s.flag, values[i], description)->type_name(s.integer() ? "INT" : "FLOAT")->check(setting_bounds(s));
  }
}

}  // namespace

CLI::Validator setting_bounds(double min, double max, bool integer) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size()) return text + " is not a number";
        if (!(v >= min && v <= max)) return fmt::format("{} is not between {} and {}", text, min, max);
        if (integer && v != std::floor(v)) return text + " is not a whole number";
        return "";
      },
      fmt::format("[{} - {}]", min, max));
}

void ProfileArgs::add_options(CLI::App& sub) {
  for (const experiment::ChoiceSetting& c : experiment::choice_settings()) {
    if (c.is_switch()) {
      sub.add_flag(c.flag, this->*std::get<bool ProfileSettings::*>(c.field), c.description);
      continue;
    }
    // Unknown values are refused at parse time, in the flag's name, with the message the YAML reader gives.
    const auto known = [apply = c.apply_text](std::string& text) -> std::string {
      policy::ProfileOptions p;
      sim::EngineOptions e;
      try {
        apply(p, e, text);
        return "";
      } catch (const InputError& error) {
        return error.what();
      }
    };
    sub.add_option(c.flag, this->*std::get<std::string ProfileSettings::*>(c.field), c.description)
        ->capture_default_str()
        ->type_name(c.value_name)
        ->check(CLI::Validator(known, ""));
  }
  add_settings(sub, policy::milp_settings(), "milp", milp_values);
  add_settings(sub, sim::engine_settings(), "runtime", engine_values);
  add_settings(sub, policy::multifactor_settings(), "multifactor", multifactor_values);
  add_settings(sub, policy::sampling_settings(), "sampling", sampling_values);
}

void ProfileArgs::check(const CLI::App& sub, const std::vector<std::string>& policies) const {
  const policy::ProfileOptions given = check_semantics([&](const std::string& key) { return sub.count("--" + key) > 0; }, "--");
  bool milp_used = given.placement == "milp";
  for (const auto& name : split_list(policies)) milp_used = milp_used || name.ends_with("@milp");
  if (!sim::is_predicted(sim::parse_runtime_knowledge(runtime)))
    for (const auto& s : sim::engine_settings())
      if (sub.count(s.flag) > 0) throw InputError(fmt::format("{} applies only to --runtime predicted (runtime is {})", s.flag, runtime));
  if (sub.count("--runtime-model") > 0 && sim::parse_runtime_knowledge(runtime) != sim::RuntimeKnowledge::learned)
    throw InputError(fmt::format("--runtime-model applies only to --runtime predicted:learned (runtime is {})", runtime));
  bool sampled = false;
  for (const auto& name : split_list(policies)) sampled = sampled || policy::is_sampled(name);
  for (const auto& s : policy::sampling_settings())
    if (sub.count(s.flag) > 0 && !sampled) throw InputError(fmt::format("{} {}", s.flag, policy::only_for_sampled()));
  std::vector<std::string> flags{"--milp-model"};
  for (const policy::MilpSetting& s : policy::milp_settings()) flags.push_back(s.flag);
  for (const std::string& name : flags)
    if (sub.count(name) > 0 && !milp_used)
      throw InputError(fmt::format("{} applies only to --placement milp (placement is {})", name, given.placement));
  // Without policies (train, trace-stats) there is nothing to check against: train's baseline may be multifactor.
  const auto names = split_list(policies);
  if (!names.empty() && std::none_of(names.begin(), names.end(), policy::may_use_multifactor)) {
    std::vector<std::string> mf_flags{"--mf-favor-small"};
    for (const policy::MultifactorSetting& s : policy::multifactor_settings()) mf_flags.push_back(s.flag);
    for (const std::string& name : mf_flags)
      if (sub.count(name) > 0) throw InputError(fmt::format("{} applies only to the multifactor policy (or a model ranking by it)", name));
  }
}

std::vector<std::string> split_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ','))
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

}  // namespace rltune::cli
