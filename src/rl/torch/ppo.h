#pragma once
// PPO's pieces on tensors, for the learner and its tests. Includes torch: only rl/torch and its test use it.
#include <torch/torch.h>

#include "rl/policy_net.h"

namespace rltune::rl::torchnet {

// The policy of SPEC 6.3 (see rl/policy_net.h for the layers): logits [B, 128] for observations
// [B, 128, F] with masks [B, 128] (masked slots get kMaskedLogit); with masks [B, 129], logits [B, 129]
// whose last column is the skip action (a learned scalar with --skip, else always masked). The mask
// only restricts the picks: attention sees every visible job.
struct PolicyImpl : torch::nn::Module {
  PolicyImpl(Arch arch, int features, bool skip = false);
  torch::Tensor forward(const torch::Tensor& obs, const torch::Tensor& mask);
  // The same logits [B, 129] from the visible rows only (mlp): `rows` [M, F] = the observation rows at
  // flat positions `positions` [M] (b * 128 + slot); `mask` [B, 129]. Padding rows cost nothing, so
  // updates are faster.
  torch::Tensor forward_rows(const torch::Tensor& rows, const torch::Tensor& positions, const torch::Tensor& mask);
  Arch arch;
  int features;
  std::vector<torch::nn::Linear> layers;
  torch::Tensor skip;  // [1], defined only with --skip

 private:
  // Slot logits [B, 128] -> [B, 129] with the skip column, masked by `mask` [B, 129].
  torch::Tensor with_skip(const torch::Tensor& slot_logits, const torch::Tensor& mask) const;
};
TORCH_MODULE(Policy);

// The value network of SPEC 6.3: the flattened observation -> 32 -> 16 -> 8 -> 1 (ReLU).
struct ValueImpl : torch::nn::Module {
  explicit ValueImpl(int features);
  torch::Tensor forward(const torch::Tensor& obs);  // [B, 128, F] -> [B]
  std::vector<torch::nn::Linear> layers;
};
TORCH_MODULE(Value);

inline constexpr float kMaskedLogit = -1e9f;

// [B, 128] true where the observation [B, 128, F] shows a job: padding rows alone have the size
// feature (1) at 1, visible jobs below it (rl/observation.h). The attention variant's keys.
inline torch::Tensor visible_slots(const torch::Tensor& obs) { return obs.select(2, 1) < 1.0f; }

// Copies between the torch modules and the torch-free PolicyNet.
PolicyNet to_policy_net(Policy& policy);
void load_policy_net(Policy& policy, const PolicyNet& net);

struct PolicyTerms {
  torch::Tensor loss;           // -mean(min(ratio A, clip(ratio, 1 - c, 1 + c) A))
  torch::Tensor kl;             // mean(logp_old - logp)
  torch::Tensor entropy;        // mean entropy of the masked distributions
  torch::Tensor clip_fraction;  // share of ratios outside [1 - c, 1 + c]
};
// `log_probs` = log_softmax of the masked logits [B, 128]; `actions` [B] (int64).
PolicyTerms policy_terms(const torch::Tensor& log_probs, const torch::Tensor& actions, const torch::Tensor& logp_old,
                         const torch::Tensor& advantages, double clip);

}  // namespace rltune::rl::torchnet
