// Options shared by the commands that run scheduler profiles.
#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "cli/commands.h"
#include "core/error.h"
#include "experiment/config.h"
#include "policy/registry.h"

namespace rltune::cli {

void ProfileArgs::add_options(CLI::App& sub) {
  sub.add_option("--placement", placement, "Placement policy: greedy, defrag, balance or milp")->capture_default_str();
  auto& w = milp_weights;
  sub.add_option("--milp-model", milp_model, "milp: nodes (nodes grouped by free GPUs) or ways (the paper's)")
      ->capture_default_str();
  sub.add_option("--milp-alpha", w[0], "milp: weight of partially used nodes (default: nodes 0, ways 1)");
  sub.add_option("--milp-beta", w[1], "milp: weight of load imbalance: variance of node utilisation (nodes; default 0) or free-GPU range (ways; 0.3)");
  sub.add_option("--milp-gamma", w[2], "milp: reward per upcoming job that still fits (default 0.5)");
  sub.add_option("--milp-delta", w[3], "milp: weight per node used (default: nodes 0.05, ways 0)");
  sub.add_option("--milp-waste", w[4], "milp: weight per GPU left free on the nodes used (default: nodes 0.1, ways 0)");
  sub.add_option("--milp-lookahead", milp.lookahead, "milp: upcoming jobs considered (K)")->capture_default_str();
  sub.add_option("--milp-extra-nodes", milp.extra_nodes, "milp nodes model: nodes allowed beyond ceil(R/G)")
      ->capture_default_str();
  sub.add_option("--milp-node-limit", milp.node_limit,
                 "milp: branch-and-bound nodes per solve (then best solution or defrag; deterministic)")
      ->capture_default_str();
  sub.add_option("--milp-time-limit-ms", milp.time_limit_ms, "milp: time limit per solve (then best solution or defrag)")
      ->capture_default_str();
  sub.add_option("--blocking", blocking, "global: a blocked job stops every start; pool: only in its pools")
      ->capture_default_str();
  sub.add_flag("--backfill", backfill, "EASY backfilling behind blocked jobs (by runtime estimates)");
  sub.add_option("--runtime", runtime, "Runtime estimates: oracle (true duration) or requested")->capture_default_str();
  sub.add_option("--mf-age-weight", multifactor.age_weight, "multifactor: Slurm PriorityWeightAge")->capture_default_str();
  sub.add_option("--mf-size-weight", multifactor.size_weight, "multifactor: Slurm PriorityWeightJobSize")
      ->capture_default_str();
  sub.add_option("--mf-max-age", multifactor.max_age_s, "multifactor: Slurm PriorityMaxAge in seconds")->capture_default_str();
  sub.add_flag("--mf-favor-small", multifactor.favor_small, "multifactor: Slurm PriorityFavorSmall=YES");
}

void ProfileArgs::check(const CLI::App& sub, const std::vector<std::string>& policies) const {
  bool milp_used = placement == "milp";
  for (const auto& name : split_list(policies)) milp_used = milp_used || name.ends_with("@milp");
  for (const char* name : {"--milp-model", "--milp-alpha", "--milp-beta", "--milp-gamma", "--milp-delta", "--milp-waste",
                           "--milp-lookahead", "--milp-extra-nodes", "--milp-node-limit", "--milp-time-limit-ms"})
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
  // MILP options: the model's defaults, then the weights given on the command line.
  policy::MilpOptions m = policy::MilpOptions::for_model(milp_model);
  m.lookahead = milp.lookahead;
  m.extra_nodes = milp.extra_nodes;
  m.time_limit_ms = milp.time_limit_ms;
  m.node_limit = milp.node_limit;
  double* weights[] = {&m.alpha, &m.beta, &m.gamma, &m.delta, &m.waste};
  for (std::size_t i = 0; i < milp_weights.size(); ++i)
    if (milp_weights[i]) *weights[i] = *milp_weights[i];
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
