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

// An agent given by its scores as the agent of the agent-driven picker: at each pick it takes the legal
// action with the highest score (the lowest index on ties, as training's argmax).
class RankedPicker final : public policy::Picker {
 public:
  using BeginRun = std::function<void(const policy::DecisionPass&, const sim::Engine&)>;
  RankedPicker(std::unique_ptr<policy::PriorityPolicy> baseline, AgentOptions options, AgentPicker::Ranker rank, BeginRun begin)
      : agent_(std::move(baseline), options), begin_(std::move(begin)) {
    agent_.set_ranker(std::move(rank));
  }

  void begin_run(const policy::DecisionPass& pass, const sim::Engine& engine) override {
    if (begin_) begin_(pass, engine);
    agent_.begin_run();
  }
  std::span<const JobIndex> order(const sim::View& view) override { return agent_.order(view); }
  void decide(policy::DecisionPass& pass) override {
    while (agent_.await_pick(pass))
      if (!agent_.pick(pass, best_legal())) return;  // it waits: time moves on
  }

 private:
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

  AgentPicker agent_;
  BeginRun begin_;
};

// Turns scores into a draw: divided by the temperature, with Gumbel noise once per pass, so that taking
// the best legal action each time draws the picks in proportion to exp(score / temperature), one after
// another without replacement.
void draw(const Observation& obs, std::span<float> scores, double temperature, Rng& rng) {
  const auto noisy = [&](float& score) {
    if (temperature != 1) score = static_cast<float>(score / temperature);
    score -= static_cast<float>(std::log(-std::log(1 - rng.uniform())));
  };
  for (int s = 0; s < obs.visible; ++s) noisy(scores[static_cast<std::size_t>(s)]);
  if (obs.mask[kSkip]) noisy(scores[kSkip]);
}

// A trained model's scores: its logits, drawn from when sampled.
class ModelRanker {
 public:
  ModelRanker(PolicyFile model, const policy::PriorityOptions& options, std::optional<std::uint64_t> sample_seed)
      : model_(std::move(model)), options_(options), sample_seed_(sample_seed), rng_(sample_seed.value_or(0)) {}

  void begin_run(const policy::DecisionPass& pass, const sim::Engine& engine) {
    if (model_.regime)
      warn_if_other_regime(*model_.regime, {pass.blocking(), pass.backfill(), engine.options().runtime, options_.serves_heads,
                                            engine.options().backfill_on_limits, engine.cluster_spec().source});
    rng_ = Rng(sample_seed_.value_or(0));
  }
  void rank(const Observation& obs, std::span<float> out) {
    model_.net.logits(obs, out);
    if (sample_seed_) draw(obs, out, options_.temperature, rng_);
  }

 private:
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
  std::optional<std::uint64_t> sample_seed_;
  Rng rng_;
};

// `sjf-sampled`: SJF with each pick drawn, by sjf_sampled_score (temperature 1 did best on
// helios-users' validation windows; models/README.md). It is an agent that reconsiders, as the
// realistic models do: a pick that cannot start is not kept for later.
class SampledSjfRanker {
 public:
  explicit SampledSjfRanker(const policy::PriorityOptions& options) : options_(options), rng_(options.seed) {}
  void begin_run(const sim::Engine& engine) {
    engine_ = &engine;
    rng_ = Rng(options_.seed);
  }
  void rank(const Observation& obs, std::span<float> out) {
    for (int s = 0; s < obs.visible; ++s)
      out[static_cast<std::size_t>(s)] =
          static_cast<float>(sjf_sampled_score(static_cast<double>(engine_->job(obs.jobs[static_cast<std::size_t>(s)]).estimate)));
    draw(obs, out, options_.temperature, rng_);
  }

 private:
  policy::PriorityOptions options_;
  const sim::Engine* engine_ = nullptr;
  Rng rng_;
};

std::unique_ptr<policy::Picker> make_ranked_picker(const std::string& baseline, AgentOptions agent, const policy::PriorityOptions& options,
                                                   AgentPicker::Ranker rank, RankedPicker::BeginRun begin) {
  // Every route to a learned agent (--policy rl:DIR, evaluate, experiments, Python) comes through here.
  agent.published = options.serves_heads;
  check_bounds(options, policy::sampling_settings(), "sampling");
  const std::string conflict = reference_conflict(agent);
  if (!conflict.empty()) throw InputError(conflict);
  return std::make_unique<RankedPicker>(policy::make_priority(baseline, options), agent, std::move(rank), std::move(begin));
}

}  // namespace

std::unique_ptr<policy::Picker> make_rl_picker(const PolicyFile& model, const policy::PriorityOptions& options,
                                               std::optional<std::uint64_t> sample_seed) {
  const std::string conflict = reference_conflict(agent_options(model, options));
  if (!conflict.empty()) throw InputError(fmt::format("model {}: {}", model.path, conflict));
  const auto ranker = std::make_shared<ModelRanker>(model, options, sample_seed);
  try {
    return make_ranked_picker(
        model.baseline, agent_options(model, options), options,
        [ranker](const Observation& obs, std::span<float> out) { ranker->rank(obs, out); },
        [ranker](const policy::DecisionPass& pass, const sim::Engine& engine) { ranker->begin_run(pass, engine); });
  } catch (const InputError& e) {  // the baseline the file names: say which file
    throw InputError(fmt::format("model {}: baseline '{}': {}", model.path, model.baseline, e.what()));
  }
}

std::unique_ptr<policy::Picker> make_agent_picker(AgentPicker::Ranker rank, const AgentSpec& spec, const policy::PriorityOptions& options) {
  return make_ranked_picker(spec.baseline, spec.agent, options, std::move(rank), {});
}

std::unique_ptr<policy::ProfileScheduler> make_rl_profile(const PolicyFile& model, const policy::ProfileOptions& options,
                                                          std::optional<std::uint64_t> sample_seed) {
  return std::make_unique<policy::ProfileScheduler>(options, make_rl_picker(model, options.priority_options, sample_seed),
                                                    policy::make_placement(options));
}

double sjf_sampled_score(double estimate_s) {
  static const double kPerHalving = std::log(100.0);
  return -std::log2(std::max(estimate_s, 1.0)) * kPerHalving;
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
  policy::register_priority(
      {"sjf-sampled", "shortest estimated runtime first, each pick drawn (seeded by --seed; --temperature)",
       [](const std::string& argument, const policy::PriorityOptions& options) {
         if (!argument.empty()) throw InputError(fmt::format("--policy sjf-sampled takes no argument (got '{}')", argument));
         if (options.serves_heads)  // reference_conflict would speak of a learned policy and --reconsider, neither given
           throw InputError("--policy sjf-sampled: not under --semantics reference, whose environment commits to every pick (sjf-sampled "
                            "draws again at each decision)");
         const auto ranker = std::make_shared<SampledSjfRanker>(options);
         AgentOptions agent;
         agent.commit = false;
         agent.features = false;  // it ranks by the jobs' estimates alone
         return make_ranked_picker(
             "sjf", agent, options, [ranker](const Observation& obs, std::span<float> out) { ranker->rank(obs, out); },
             [ranker](const policy::DecisionPass&, const sim::Engine& engine) { ranker->begin_run(engine); });
       },
       /*sampled=*/true});
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
         },
         sampled});
  }
}

}  // namespace rltune::rl
