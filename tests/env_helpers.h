#pragma once
// Driving the RL environment in tests: whole episodes with a given way of picking.
#include <gtest/gtest.h>

#include "rl/env.h"

namespace rltune::testing {

// Runs one episode on the window at `start` choosing slots with `pick`; returns the terminal reward.
template <typename Pick>
double episode(rl::Env& env, std::size_t start, Pick pick) {
  env.reset_at(start);
  for (int steps = 0; steps < 100000; ++steps) {
    const rl::Env::Step s = env.step(pick(env));
    if (s.done) return s.reward;
  }
  ADD_FAILURE() << "the episode did not end";
  return 0;
}

// The first slot the mask allows: the baseline's own pick.
inline int first_legal(const rl::Env& e) {
  const rl::Observation& obs = e.observation();
  for (int k = 0; k < obs.visible; ++k)
    if (obs.mask[static_cast<std::size_t>(k)]) return k;
  return -1;
}

}  // namespace rltune::testing
