#pragma once
// `--policy rl:DIR`: a trained model as an ordinary priority policy. At each decision it observes the
// queue as in training (the first 128 jobs of the model's baseline order) and serves the visible jobs by
// descending logit, the rest in baseline order. The first job is a commitment: it stays first until it
// starts. The policy asks to be consulted again after every start, so in the simulator it picks one job
// at a time exactly as in the training environment.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "policy/priority/priority.h"
#include "policy/profile.h"
#include "rl/trainer.h"

namespace rltune::rl {

// With `sample_seed`, the order is drawn from the policy's distribution (Gumbel top-k: the same as
// sampling one job, then the next from the rest...), restarting the seeded stream at every run;
// otherwise it is deterministic (argmax first).
std::unique_ptr<policy::PriorityPolicy> make_rl_policy(const PolicyFile& model, const policy::PriorityOptions& options,
                                                       std::optional<std::uint64_t> sample_seed = std::nullopt);
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
// Registers "rl" and "rl-sampled" (argument: a training run directory or a policy.json) in the policy registry.
void register_rl_policy();

}  // namespace rltune::rl
