#include "rl/rl_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.h"
#include "policy/registry.h"

namespace rltune::rl {

namespace {

class RlPolicy final : public policy::PriorityPolicy {
 public:
  RlPolicy(PolicyFile model, const policy::PriorityOptions& options, std::optional<std::uint64_t> sample_seed)
      : model_(std::move(model)), baseline_(policy::make_priority(model_.baseline, options)), sample_seed_(sample_seed),
        rng_(sample_seed.value_or(0)) {}

  void reset() override {
    committed_ = -1;
    wait_.reset();
    baseline_->reset();
    rng_ = Rng(sample_seed_.value_or(0));
  }
  bool one_at_a_time() const override { return true; }
  std::optional<Wait> wait() const override { return wait_; }

  std::span<const JobIndex> order(const sim::Engine& engine) override {
    const std::span<const JobIndex> base = baseline_->order(engine);
    observe(engine, base, observation_, model_.observation);
    observation_.mask[kSkip] = model_.net.skip && engine.event_pending();  // as in training
    model_.net.logits(observation_, logits_);
    const int n = observation_.visible;
    if (sample_seed_) {
      for (int s = 0; s < n; ++s) logits_[static_cast<std::size_t>(s)] -= static_cast<float>(std::log(-std::log(1 - rng_.uniform())));
      if (observation_.mask[kSkip]) logits_[kSkip] -= static_cast<float>(std::log(-std::log(1 - rng_.uniform())));
    }
    std::array<int, kSlots> slots;
    order_by_logits(logits_, n, slots);
    // A chosen job that has not started yet stays first (the pick is a commitment, as in training); the
    // other visible jobs follow by logit (they matter when pools or backfilling let them start).
    order_.clear();
    const bool keep = model_.commit && committed_ >= 0 && engine.job(committed_).state == sim::JobState::queued;
    if (keep) order_.push_back(committed_);
    // Skip ranks after every job whose logit is at least its own (training's argmax breaks ties toward
    // the lower action index): the scheduler serves those, then waits.
    std::size_t serve = 0;
    for (int i = 0; i < n; ++i) {
      const int slot = slots[static_cast<std::size_t>(i)];
      const JobIndex j = observation_.jobs[static_cast<std::size_t>(slot)];
      if (keep && j == committed_) continue;
      order_.push_back(j);
      if (logits_[static_cast<std::size_t>(slot)] >= logits_[kSkip]) serve = order_.size();
    }
    if (keep) serve = std::max<std::size_t>(serve, 1);
    wait_.reset();
    if (observation_.mask[kSkip]) wait_ = Wait{serve, order_.size(), engine.now() + kSkipTime};
    // The first job served is the commitment; a skip before it commits to nothing.
    if (model_.commit && !order_.empty() && (keep || !wait_ || serve > 0)) committed_ = order_.front();
    // Beyond the visible slots: the rest of the queue in baseline order (they were not observed).
    int seen = 0;
    for (const JobIndex j : base) {
      if (engine.job(j).state != sim::JobState::queued) continue;
      if (++seen > n && j != committed_) order_.push_back(j);
    }
    return order_;
  }

 private:
  PolicyFile model_;
  std::unique_ptr<policy::PriorityPolicy> baseline_;
  std::optional<std::uint64_t> sample_seed_;
  Rng rng_;
  Observation observation_;
  std::array<float, kActions> logits_{};
  std::optional<Wait> wait_;
  std::vector<JobIndex> order_;
  JobIndex committed_ = -1;
};

}  // namespace

std::unique_ptr<policy::PriorityPolicy> make_rl_policy(const PolicyFile& model, const policy::PriorityOptions& options,
                                                       std::optional<std::uint64_t> sample_seed) {
  return std::make_unique<RlPolicy>(model, options, sample_seed);
}

std::unique_ptr<policy::ProfileScheduler> make_rl_profile(const PolicyFile& model, const policy::ProfileOptions& options,
                                                          std::optional<std::uint64_t> sample_seed) {
  return std::make_unique<policy::ProfileScheduler>(options, make_rl_policy(model, options.priority_options, sample_seed),
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
           return make_rl_policy(load_policy(argument), options,
                                 sampled ? std::optional<std::uint64_t>(options.seed) : std::nullopt);
         }});
  }
}

}  // namespace rltune::rl
