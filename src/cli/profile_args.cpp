// Options shared by the commands that run scheduler profiles.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "cli/commands.h"
#include "core/error.h"
#include "experiment/config.h"
#include "policy/registry.h"

namespace rltune::cli {

std::string milp_flag(const policy::MilpSetting& setting) {
  std::string flag = std::string("--milp-") + setting.key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

void ProfileArgs::add_options(CLI::App& sub) {
  sub.add_option("--placement", placement, "Placement policy: greedy, defrag, balance or milp")->capture_default_str();
  sub.add_option("--milp-model", milp_model, "milp: nodes (nodes grouped by free GPUs) or ways (the paper's)")
      ->capture_default_str();
  const policy::MilpOptions defaults;
  milp_values.assign(policy::milp_settings().size(), std::nullopt);
  for (std::size_t i = 0; i < milp_values.size(); ++i) {
    const policy::MilpSetting& s = policy::milp_settings()[i];
    std::string description = fmt::format("milp: {}", s.description);
    if (s.integer() || s.key == std::string_view("time_limit_ms")) description += fmt::format(" [{}]", s.get(defaults));
    // The setting's own bounds, in the words validate() uses, with the flag as written.
    const CLI::Validator bounds(
        [s](std::string& text) -> std::string {
          double v = 0;
          const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
          if (ec != std::errc() || end != text.data() + text.size()) return text + " is not a number";
          if (!(v >= s.min && v <= s.max)) return fmt::format("{} is not between {} and {}", text, s.min, s.max);
          if (s.integer() && v != std::floor(v)) return text + " is not a whole number";
          return "";
        },
        fmt::format("[{} - {}]", s.min, s.max));
    sub.add_option(milp_flag(s), milp_values[i], description)->type_name(s.integer() ? "INT" : "FLOAT")->check(bounds);
  }
  sub.add_option("--blocking", blocking, "global: a blocked job stops every start; pool: only in its pools")
      ->capture_default_str()
      ->check(CLI::IsMember(policy::kBlockingNames.names()));
  sub.add_flag("--backfill", backfill, "EASY backfilling behind blocked jobs (by runtime estimates)");
  sub.add_option("--runtime", runtime, "Runtime estimates: oracle (true duration) or requested")
      ->capture_default_str()
      ->check(CLI::IsMember(sim::kRuntimeNames.names()));
  sub.add_option("--mf-age-weight", multifactor.age_weight, "multifactor: Slurm PriorityWeightAge")->capture_default_str();
  sub.add_option("--mf-size-weight", multifactor.size_weight, "multifactor: Slurm PriorityWeightJobSize")
      ->capture_default_str();
  sub.add_option("--mf-max-age", multifactor.max_age_s, "multifactor: Slurm PriorityMaxAge in seconds")->capture_default_str();
  sub.add_flag("--mf-favor-small", multifactor.favor_small, "multifactor: Slurm PriorityFavorSmall=YES");
}

void ProfileArgs::check(const CLI::App& sub, const std::vector<std::string>& policies) const {
  bool milp_used = placement == "milp";
  for (const auto& name : split_list(policies)) milp_used = milp_used || name.ends_with("@milp");
  std::vector<std::string> flags{"--milp-model"};
  for (const policy::MilpSetting& s : policy::milp_settings()) flags.push_back(milp_flag(s));
  for (const std::string& name : flags)
    if (sub.count(name) > 0 && !milp_used)
      throw InputError(fmt::format("{} applies only to --placement milp (placement is {})", name, placement));
}

policy::ProfileOptions ProfileArgs::profile(const std::string& spec) const {
  // "NAME@PLACEMENT" overrides --placement for this policy.
  const auto at = spec.rfind('@');
  const std::string priority = at == std::string::npos ? spec : spec.substr(0, at);
  if (at != std::string::npos && at + 1 == spec.size()) throw InputError("--policy " + spec + ": a placement after @ is missing");
  const auto& mf = multifactor;
  if (!std::isfinite(mf.age_weight) || !std::isfinite(mf.size_weight) || !std::isfinite(mf.max_age_s) || mf.max_age_s <= 0)
    throw InputError("--mf-age-weight, --mf-size-weight and --mf-max-age must be finite, and --mf-max-age > 0");
  // MILP options: the model's defaults, then the values given on the command line.
  policy::MilpOptions m = policy::MilpOptions::for_model(milp_model);
  for (std::size_t i = 0; i < milp_values.size(); ++i)
    if (milp_values[i]) policy::milp_settings()[i].set(m, *milp_values[i]);
  policy::ProfileOptions p;
  p.priority = priority;
  p.placement = at == std::string::npos ? placement : spec.substr(at + 1);
  p.blocking = policy::parse_blocking(blocking);
  p.backfill = backfill;
  p.priority_options.multifactor = multifactor;
  p.milp = m;
  policy::make_profile(p);  // fail on unknown names before any work
  return p;
}

sim::EngineOptions ProfileArgs::engine() const {
  sim::EngineOptions e;
  e.runtime = sim::parse_runtime_knowledge(runtime);
  return e;
}

void ProfileArgs::describe(report::Json& config, const policy::ProfileOptions& p) const {
  config["placement"] = p.placement;
  config["blocking"] = blocking;
  config["backfill"] = backfill;
  config["runtime"] = runtime;
  if (p.placement == "milp") config["milp"] = experiment::milp_json(p.milp);
  config["multifactor"] = experiment::multifactor_json(multifactor);
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
