#pragma once
// `--policy rl:DIR`: a trained model as the agent of the agent-driven picker (rl/agent_picker.h), so that
// in the simulator it picks one job at a time under exactly the rules of the training environment.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "policy/priority/priority.h"
#include "policy/profile.h"
#include "rl/agent_picker.h"
#include "rl/trainer.h"

namespace rltune::rl {

// With `sample_seed`, the picks are drawn from the policy's distribution (Gumbel top-k: the same as
// sampling one job, then the next from the rest...), restarting the seeded stream at every run;
// otherwise they are deterministic (argmax).
std::unique_ptr<policy::Picker> make_rl_picker(const PolicyFile& model, const policy::PriorityOptions& options,
                                               std::optional<std::uint64_t> sample_seed = std::nullopt);
// An agent given by a function (a Python policy, say) under the rules a trained model runs by: at each
// pick `rank` scores the observation's slots (and kSkip), and the picker takes the best legal action.
// `baseline` orders the observed queue; `agent.published` is set from `options`. InputError when the
// agent cannot run under `options` (--semantics reference without commitment).
struct AgentSpec {
  std::string baseline = "fcfs";
  AgentOptions agent;
};
std::unique_ptr<policy::Picker> make_agent_picker(AgentPicker::Ranker rank, const AgentSpec& spec, const policy::PriorityOptions& options);
// A scheduler profile (options' placement, blocking, backfill) whose priority policy is `model`.
std::unique_ptr<policy::ProfileScheduler> make_rl_profile(const PolicyFile& model, const policy::ProfileOptions& options,
                                                          std::optional<std::uint64_t> sample_seed = std::nullopt);
// "rl:MODEL" takes the argmax; "rl-sampled:MODEL" draws each pick from the policy, seeded by
// PriorityOptions::seed (PPO trains a sampling policy, and sampling can be the better way to run it).
struct RlSpec {
  std::string model;
  bool sampled = false;
};
std::optional<RlSpec> parse_rl_spec(std::string_view priority);  // nullopt for any other policy
// `sjf-sampled`'s score of a job with this runtime estimate (seconds): -log2(estimate) x ln(100), so
// that at temperature 1 a job with half the estimate of another is 100 times as likely to be drawn.
double sjf_sampled_score(double estimate_s);
// Registers "rl" and "rl-sampled" (argument: a training run directory or a policy.json) in the policy registry.
void register_rl_policy();

}  // namespace rltune::rl
