#pragma once
// The LibTorch learner. This header is torch-free; only ppo_learner.cpp includes <torch/torch.h>.
#include <cstdint>
#include <memory>

#include "rl/learner.h"

namespace rltune::rl {

// Fresh networks (Glorot-uniform weights, zero biases, as the reference's TF1 layers) drawn from `seed`.
// `threads` bounds torch's intra-op threads during updates. `skip`: the policy has the skip action (--skip).
std::unique_ptr<Learner> make_ppo_learner(Arch arch, int features, bool skip, const PpoOptions& options, std::uint64_t seed,
                                          int threads);

}  // namespace rltune::rl
