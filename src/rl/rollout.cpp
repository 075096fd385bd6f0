#include "rl/rollout.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "rl/rl_policy.h"

namespace rltune::rl {

namespace {

// One episode on a window drawn from `split`; `pick(obs, log_prob)` chooses each action.
template <typename Pick>
Episode play_with(Env& env, Rng& rng, Split split, bool record, const Pick& pick) {
  Episode e;
  const Observation* obs = &env.reset(rng, split);
  e.features = obs->features;
  e.window_start = env.window_start();
  const std::size_t width = static_cast<std::size_t>(kSlots) * static_cast<std::size_t>(obs->features);
  for (;;) {
    double log_prob = 0;
    const int action = pick(*obs, log_prob);
    if (record) {
      e.observations.insert(e.observations.end(), obs->values.begin(), obs->values.begin() + static_cast<std::ptrdiff_t>(width));
      e.masks.insert(e.masks.end(), obs->mask.begin(), obs->mask.end());
    }
    e.actions.push_back(action);
    const Env::Step step = env.step(action);
    if (step.done) {
      e.reward = step.reward;
      break;
    }
    obs = &env.observation();
  }
  e.baseline_score = env.baseline_score();
  e.agent_score = env.agent_score();
  return e;
}

}  // namespace

Episode play(Env& env, const PolicyNet& net, Rng& rng, Split split, bool greedy, bool record, double temperature) {
  env.set_ranker([&net](const Observation& o, std::span<float> out) { net.logits(o, out); });
  std::array<float, kActions> logits;
  Episode e = play_with(env, rng, split, record, [&](const Observation& obs, double& log_prob) {
    net.logits(obs, logits);
    if (greedy) return PolicyNet::argmax(logits, obs);
    if (temperature != 1) {
      // Less the largest first, so that a tiny temperature leaves the argmax at 0 and the others at
      // -infinity, never infinity (whose differences are NaN). -infinity (masked) stays.
      float top = -std::numeric_limits<float>::infinity();
      for (const float l : logits) top = std::max(top, l);
      for (float& l : logits)
        if (std::isfinite(l)) l = static_cast<float>((static_cast<double>(l) - top) / temperature);
    }
    return PolicyNet::sample(logits, obs, rng, log_prob);
  });
  env.set_ranker({});  // it refers to `net`
  return e;
}

Episode play_baseline(Env& env, Rng& rng, Split split) {
  return play_with(env, rng, split, true, [](const Observation& obs, double&) {
    int slot = 0;
    while (slot < obs.visible && !obs.mask[static_cast<std::size_t>(slot)]) ++slot;
    return slot;
  });
}

Episode play_clairvoyant(Env& env, Rng& rng, Split split) {
  return play_with(env, rng, split, true, [&env](const Observation& obs, double&) {
    int best = -1;
    Seconds shortest = 0;
    for (int slot = 0; slot < obs.visible; ++slot) {
      if (!obs.mask[static_cast<std::size_t>(slot)]) continue;
      const Seconds duration = env.engine().job(obs.jobs[static_cast<std::size_t>(slot)]).spec->duration;
      if (best < 0 || duration < shortest) best = slot, shortest = duration;
    }
    if (best < 0) {  // no job slot is legal: the first legal action (kSkip)
      best = 0;
      while (best < kActions - 1 && !obs.mask[static_cast<std::size_t>(best)]) ++best;
    }
    return best;
  });
}

Episode play_sjf_sampled(Env& env, Rng& rng, Split split) {
  std::array<float, kActions> scores;
  std::vector<float> targets;
  Episode e = play_with(env, rng, split, true, [&](const Observation& obs, double& log_prob) {
    scores.fill(-std::numeric_limits<float>::infinity());  // masked actions, as PolicyNet::logits writes them
    bool any = false;
    for (int slot = 0; slot < obs.visible; ++slot) {
      if (!obs.mask[static_cast<std::size_t>(slot)]) continue;
      const double estimate = static_cast<double>(env.engine().job(obs.jobs[static_cast<std::size_t>(slot)]).estimate);
      scores[static_cast<std::size_t>(slot)] = static_cast<float>(sjf_sampled_score(estimate));
      any = true;
    }
    if (!any) scores[kSkip] = 0;  // no job slot is legal: skip (the only legal action then)
    const int action = PolicyNet::sample(scores, obs, rng, log_prob);
    const float top = *std::max_element(scores.begin(), scores.end());
    double total = 0;
    for (const float score : scores) total += std::exp(static_cast<double>(score - top));
    for (const float score : scores) targets.push_back(static_cast<float>(std::exp(static_cast<double>(score - top)) / total));
    return action;
  });
  e.targets = std::move(targets);
  return e;
}

void Batch::append(const Episode& e) {
  RLTUNE_CHECK(e.features == features, "every episode of a batch has the batch's features");
  RLTUNE_CHECK(e.observations.size() == e.decisions() * kSlots * static_cast<std::size_t>(features),
               "the episode recorded its observations");
  const std::size_t first = size();
  observations.insert(observations.end(), e.observations.begin(), e.observations.end());
  masks.insert(masks.end(), e.masks.begin(), e.masks.end());
  RLTUNE_CHECK(e.targets.empty() || e.targets.size() == e.decisions() * kActions, "a target per action of each decision");
  RLTUNE_CHECK(targets.size() == (e.targets.empty() ? 0 : first * kActions), "every episode of a batch has targets, or none");
  actions.insert(actions.end(), e.actions.begin(), e.actions.end());
  targets.insert(targets.end(), e.targets.begin(), e.targets.end());
  episodes.emplace_back(first, size());
  rewards.push_back(e.reward);
}

double Batch::target_entropy() const {
  double entropy = 0;
  for (const float p : targets)
    if (p > 0) entropy -= p * std::log(static_cast<double>(p));
  return size() == 0 ? 0 : entropy / static_cast<double>(size());
}

void gae(std::span<const float> values, double reward, double gamma, double lambda, std::span<float> advantages,
         std::span<float> returns) {
  const std::size_t n = values.size();
  RLTUNE_CHECK(advantages.size() == n && returns.size() == n, "one advantage and one return per step");
  double running = 0, to_go = reward;
  for (std::size_t t = n; t-- > 0;) {
    const double r = t + 1 == n ? reward : 0.0;
    const double next_value = t + 1 == n ? 0.0 : values[t + 1];
    const double delta = r + gamma * next_value - values[t];
    running = delta + gamma * lambda * running;
    advantages[t] = static_cast<float>(running);
    if (t + 1 < n) to_go *= gamma;
    returns[t] = static_cast<float>(to_go);
  }
}

void normalize(std::span<float> values, std::span<const std::pair<std::size_t, std::size_t>> episodes, double eps,
               const Comm& comm) {
  const auto over_episodes = [&](const auto& term) {
    std::vector<double> mine;
    for (const auto& [first, last] : episodes) {
      double s = 0;
      for (std::size_t i = first; i < last; ++i) s += term(values[i]);
      mine.push_back(s);
    }
    double total = 0;
    for (const double s : gather_doubles(comm, mine)) total += s;
    return total;
  };
  const double n = over_episodes([](float) { return 1.0; });
  if (n == 0) return;
  const double mean = over_episodes([](float v) { return static_cast<double>(v); }) / n;
  const double sd = std::sqrt(over_episodes([&](float v) { return (v - mean) * (v - mean); }) / n);
  for (float& v : values) v = static_cast<float>((v - mean) / (sd + eps));
}

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t trajectory) {
  Rng mix(seed ^ 0x6a09e667f3bcc909ULL);
  std::uint64_t s = mix.next();
  s = Rng(s ^ epoch).next();
  return Rng(s ^ (trajectory * 0x9E3779B97F4A7C15ULL)).next();
}

}  // namespace rltune::rl
