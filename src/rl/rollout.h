#pragma once
// What the learner trains on: episodes recorded by the environment, joined into one batch per epoch, and
// the advantage estimates of SPEC 6.4 (computed here, without torch, so they are tested on their own).
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/comm.h"
#include "core/rng.h"
#include "rl/env.h"
#include "rl/policy_net.h"

namespace rltune::rl {

struct Episode {
  int features = kFeatures;
  std::vector<float> observations;  // decisions x kSlots x features
  std::vector<std::uint8_t> masks;  // decisions x kActions
  std::vector<int> actions;         // action (slot or kSkip) per decision
  // A teacher that draws its picks also gives its probabilities (decisions x kActions), which behaviour
  // cloning matches instead of the one pick drawn: the same gradient on average, with less noise.
  std::vector<float> targets;
  double reward = 0;                // terminal reward
  double baseline_score = 0, agent_score = 0;
  std::size_t window_start = 0;
  std::size_t decisions() const { return actions.size(); }
};

// Plays one episode on a window drawn from `split` with `rng`: actions drawn from the policy with its
// logits divided by `temperature`, or the argmax when `greedy`. Records observations only when `record`.
Episode play(Env& env, const PolicyNet& net, Rng& rng, Split split, bool greedy, bool record, double temperature = 1);
// The same, recorded, with the baseline's own picks: the first legal slot of its order (what behaviour
// cloning learns from).
Episode play_baseline(Env& env, Rng& rng, Split split);
// The same with a clairvoyant teacher's picks: of the legal slots, the job with the shortest true
// duration (ties: the earlier slot). Hindsight only a training split has; the model that clones it still
// sees only estimates, so it learns which estimates to doubt. Under oracle runtimes this is SJF's pick.
Episode play_clairvoyant(Env& env, Rng& rng, Split split);

// The same with `sjf-sampled`'s picks at temperature 1: each drawn among the legal slots in proportion to
// exp(sjf_sampled_score(estimate)), so that a policy that clones them starts from that heuristic. The
// episode's targets hold those probabilities.
Episode play_sjf_sampled(Env& env, Rng& rng, Split split);

struct Batch {
  int features = kFeatures;
  std::vector<float> observations;  // size() x kSlots x features
  std::vector<std::uint8_t> masks;  // size() x kActions
  std::vector<int> actions;
  std::vector<float> targets;  // size() x kActions when every episode has them, else empty
  std::vector<std::pair<std::size_t, std::size_t>> episodes;  // [first, last) decisions of each episode
  std::vector<double> rewards;                                // terminal reward of each episode
  std::size_t size() const { return actions.size(); }
  void append(const Episode& e);
  // The mean entropy of the targets per decision (nats): the least cross-entropy a clone can reach.
  double target_entropy() const;
};

// GAE(lambda) for one episode whose only reward is `reward` at its last step (values = V(s_t)):
// delta_t = r_t + gamma V(s_t+1) - V(s_t) with V after the end = 0, adv_t = sum_l (gamma lambda)^l delta_t+l,
// and the value target ret_t = gamma^(T-1-t) reward (discounted reward-to-go, as Spinning Up).
void gae(std::span<const float> values, double reward, double gamma, double lambda, std::span<float> advantages,
         std::span<float> returns);
// (a - mean) / (population std + eps), in place (B28: the epsilon the reference lacks), with mean and
// std over every rank's values. Sums are taken per episode (`episodes`: [first, last) of each, covering
// `values`), then over the episodes in order, so they are the same bits on every rank and for any rank
// count. A collective call.
void normalize(std::span<float> values, std::span<const std::pair<std::size_t, std::size_t>> episodes, double eps,
               const Comm& comm = single_process());

// A seed per (run seed, epoch, trajectory): every trajectory draws from its own stream, so results do
// not depend on which thread plays it.
std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t trajectory);

}  // namespace rltune::rl
