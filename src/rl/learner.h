#pragma once
// The learner behind an interface, so that rollouts, the training loop and the CLI compile without torch
// (DESIGN.md section 4): rl/torch implements it with LibTorch.
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "core/settings.h"
#include "rl/policy_net.h"
#include "rl/rollout.h"

namespace rltune::rl {

// PPO as SPEC 6.4 (Spinning Up), every constant an option.
struct PpoOptions {
  double clip = 0.2;
  double gamma = 1.0;
  double lambda = 0.97;
  double pi_lr = 3e-4;
  double vf_lr = 1e-3;
  int pi_iters = 80;
  int vf_iters = 80;
  double target_kl = 0.01;  // the policy loop stops once the mean KL exceeds 1.5 x this
  double adv_eps = 1e-8;    // advantage normalisation (B28)
  double ent_coef = 0;      // entropy bonus: the policy loss minus this x the mean entropy (the reference has none)
  double imitation_lr = 0;  // the policy's learning rate while cloning (Learner::imitate); 0: pi_lr
  nlohmann::json to_json() const;
};
// The settings of PpoOptions that train's flags set (adv_eps is fixed): flag, key in config.json's
// options.ppo, meaning, bounds.
std::span<const NumberSetting<PpoOptions>> ppo_settings();

struct UpdateStats {
  double policy_loss = 0, value_loss = 0, kl = 0, entropy = 0, clip_fraction = 0;
  int policy_iters = 0;  // policy steps taken before the KL stop
};

class Learner {
 public:
  virtual ~Learner() = default;
  // One PPO update on a batch of whole episodes. A learner over several MPI ranks is called by every
  // rank, each with its own episodes, in the order of the episodes (rank 0's first); the update is
  // over all of them, and the stats the same on every rank.
  virtual UpdateStats update(const Batch& batch) = 0;
  // Behaviour cloning: pi_iters steps of the policy optimiser (at imitation_lr if set) on the cross-entropy
  // of the batch's actions, or of its targets when it has them (the critic is left alone). Returns the
  // mean cross-entropy before the last step. Ranks: as update().
  virtual double imitate(const Batch& batch) = 0;
  // A copy of the current policy weights for the torch-free forward pass.
  virtual PolicyNet policy() const = 0;
  // Replaces the policy weights (e.g. to export a policy file).
  virtual void set_policy(const PolicyNet& net) = 0;
  // Policy, value and optimiser state, plus `state` (the trainer's own), written atomically to `path`.
  virtual void save(const std::string& path, const nlohmann::json& state) const = 0;
  // Restores what save() wrote and returns its `state`; InputError when the file does not fit this learner.
  virtual nlohmann::json load(const std::string& path) = 0;
  // A TorchScript module: forward(obs [B, 128, F], mask [B, 128]) -> masked logits [B, 128]; with the
  // skip action, mask and logits have 129 columns, the last one for skip.
  virtual void export_torchscript(const std::string& path) const = 0;
};

}  // namespace rltune::rl
