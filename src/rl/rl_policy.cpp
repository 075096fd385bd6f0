#include "rl/rl_policy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>

#include "core/error.h"
#include "core/log.h"
#include "policy/registry.h"
#include "rl/agent_picker.h"

namespace rltune::rl {

namespace {

AgentOptions agent_options(const PolicyFile& model, const policy::PriorityOptions& options) {
  return {model.observation, model.net.skip, model.commit, options.serves_heads};
}

// A trained model as the agent of the agent-driven picker: at each pick it takes the legal action with
// the highest logit (the lowest index on ties, as training's argmax). Sampled, the logits get Gumbel
// noise once per pass, so that taking the best legal action each time draws the picks from the
// policy's distribution, one after another without replacement.
class ModelPicker final : public policy::Picker {
 public:
  ModelPicker(PolicyFile model, const policy::PriorityOptions& options, std::optional<std::uint64_t> sample_seed)
      : model_(std::move(model)),
        options_(options),
        agent_(policy::make_priority(model_.baseline, options), agent_options(model_, options)),
        sample_seed_(sample_seed),
        rng_(sample_seed.value_or(0)) {
    agent_.set_ranker([this](const Observation& obs, std::span<float> out) { rank(obs, out); });
  }
  ModelPicker(const ModelPicker&) = delete;  // the ranker holds `this`
  ModelPicker& operator=(const ModelPicker&) = delete;

  void begin_run(const policy::DecisionPass& pass, const sim::Engine& engine) override {
    if (model_.regime)
      warn_if_other_regime(*model_.regime, {pass.blocking(), pass.backfill(), engine.options().runtime, options_.serves_heads});
    agent_.begin_run();
    rng_ = Rng(sample_seed_.value_or(0));
  }
  std::span<const JobIndex> order(const sim::View& view) override { return agent_.order(view); }
  void decide(policy::DecisionPass& pass) override {
    while (agent_.await_pick(pass))
      if (!agent_.pick(pass, best_legal())) return;  // it waits: time moves on
  }

 private:
  void rank(const Observation& obs, std::span<float> out) {
    model_.net.logits(obs, out);
    if (!sample_seed_) return;
    const auto gumbel = [&] { return static_cast<float>(std::log(-std::log(1 - rng_.uniform()))); };
    for (int s = 0; s < obs.visible; ++s) out[static_cast<std::size_t>(s)] -= gumbel();
    if (obs.mask[kSkip]) out[kSkip] -= gumbel();
  }

  int best_legal() const {
    const Observation& obs = agent_.observation();
    const std::span<const float> logits = agent_.logits();
    int best = -1;
    const auto consider = [&](int action) {
      if (obs.mask[static_cast<std::size_t>(action)] &&
          (best < 0 || logits[static_cast<std::size_t>(action)] > logits[static_cast<std::size_t>(best)]))
        best = action;
    };
    for (int s = 0; s < obs.visible; ++s) consider(s);
    consider(kSkip);
    return best;
  }

  // Once per model and regime in a process: an experiment builds a picker for every run.
  void warn_if_other_regime(const Regime& trained, const Regime& run) const {
    const std::vector<std::string> differences = regime_differences(trained, run);
    if (differences.empty()) return;
    const std::string message = fmt::format("model {} runs with {}; what it learned may not carry over", model_.path,
                                            fmt::join(differences, ", "));
    static std::mutex mutex;
    static std::set<std::string> warned;
    const std::lock_guard lock(mutex);
    if (warned.insert(message).second) spdlog::warn("{}", message);
  }

  PolicyFile model_;
  policy::PriorityOptions options_;
  AgentPicker agent_;
  std::optional<std::uint64_t> sample_seed_;
  Rng rng_;
};

}  // namespace

std::unique_ptr<policy::Picker> make_rl_picker(const PolicyFile& model, const policy::PriorityOptions& options,
                                               std::optional<std::uint64_t> sample_seed) {
  // Every route to a model (--policy rl:DIR, evaluate, experiments) comes through here.
  const std::string conflict = reference_conflict(agent_options(model, options));
  if (!conflict.empty()) throw InputError(fmt::format("model {}: {}", model.path, conflict));
  return std::make_unique<ModelPicker>(model, options, sample_seed);
}

std::unique_ptr<policy::ProfileScheduler> make_rl_profile(const PolicyFile& model, const policy::ProfileOptions& options,
                                                          std::optional<std::uint64_t> sample_seed) {
  return std::make_unique<policy::ProfileScheduler>(options, make_rl_picker(model, options.priority_options, sample_seed),
                                                    policy::make_placement(options));
}

std::optional<RlSpec> parse_rl_spec(std::string_view priority) {
  for (const bool sampled : {false, true}) {
    const std::string_view prefix = sampled ? "rl-sampled:" : "rl:";
    if (priority.starts_with(prefix)) return RlSpec{std::string(priority.substr(prefix.size())), sampled};
  }
  return std::nullopt;
}

void register_rl_policy() {
  static bool done = false;
  if (done) return;
  done = true;
  for (const bool sampled : {false, true}) {
    const std::string name = sampled ? "rl-sampled" : "rl";
    policy::register_priority(
        {name,
         sampled ? "a trained model, each pick drawn from its policy (seeded by --seed): rl-sampled:DIR"
                 : "a trained model, its most likely pick: rl:DIR (a training run directory; its best.json) or rl:FILE.json",
         [name, sampled](const std::string& argument, const policy::PriorityOptions& options) {
           if (argument.empty()) throw InputError(fmt::format("--policy {} needs a model: {}:DIR", name, name));
           return make_rl_picker(load_policy(argument), options,
                                 sampled ? std::optional<std::uint64_t>(options.seed) : std::nullopt);
         }});
  }
}

}  // namespace rltune::rl
