#pragma once
// The LibTorch learner. This header is torch-free; only ppo_learner.cpp includes <torch/torch.h>.
#include <cstdint>
#include <memory>

#include "core/comm.h"
#include "rl/learner.h"

namespace rltune::rl {

// Fresh networks (Glorot-uniform weights, zero biases, as the reference's TF1 layers) drawn from `seed`.
// `threads`: the update's threads. `skip`: the policy has the skip action (--skip). With `comm` of
// several ranks, each rank's batch holds its own episodes and the update combines every rank's
// gradients: every rank ends with the same weights, the same as in one process with all the episodes.
std::unique_ptr<Learner> make_ppo_learner(Arch arch, int features, bool skip, const PpoOptions& options, std::uint64_t seed,
                                          int threads, const Comm& comm = single_process());

}  // namespace rltune::rl
