#include "rl/agent_picker.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "rl/policy_net.h"

namespace rltune::rl {

AgentPicker::AgentPicker(std::unique_ptr<policy::PriorityPolicy> baseline, AgentOptions options)
    : baseline_(std::move(baseline)), options_(options) {}

void AgentPicker::begin_run() {
  baseline_->reset();
  committed_ = -1;
  observed_ = 0;
  ranked_outside_.reset();
  order_current_ = false;
}

namespace {

std::array<std::size_t, 3> state_of(const sim::Engine& engine) {
  return {static_cast<std::size_t>(engine.now()), engine.queue().size(), engine.running().size()};
}

}  // namespace

bool AgentPicker::committed(const sim::Engine& engine) const {
  return committed_ >= 0 && engine.job(committed_).state == sim::JobState::queued;
}

void AgentPicker::observe_queue(const sim::Engine& engine) {
  observe(engine, baseline_->order(engine), observation_, options_.observation);
  // Waiting is a choice only while something is still to happen (else it would change nothing).
  observation_.mask[kSkip] = options_.skip && engine.event_pending();
  // Every visible job is ranked, before legality masks some of them.
  if (ranker_) {
    ranker_(observation_, logits_);
    order_by_logits(logits_, observation_.visible, ranked_);
  } else {
    std::iota(ranked_.begin(), ranked_.begin() + observation_.visible, 0);
  }
  order_current_ = false;
}

std::span<const JobIndex> AgentPicker::order(const sim::Engine& engine) {
  if (observed_ == 0) {  // outside a pass (the advisor's priorities)
    observe_queue(engine);
    ranked_outside_ = state_of(engine);
  }
  if (order_current_) return order_;
  order_.clear();
  const bool keep = committed(engine);
  if (keep) order_.push_back(committed_);
  for (int i = 0; i < observation_.visible; ++i) {
    const JobIndex j = observation_.jobs[static_cast<std::size_t>(ranked_[static_cast<std::size_t>(i)])];
    if (!keep || j != committed_) order_.push_back(j);
  }
  // Beyond the visible slots: the rest of the queue in baseline order (they were not observed).
  unseen_from_ = order_.size();
  int seen = 0;
  for (const JobIndex j : baseline_->order(engine))
    if (engine.job(j).state == sim::JobState::queued && ++seen > observation_.visible && (!keep || j != committed_))
      order_.push_back(j);
  order_current_ = true;
  return order_;
}

policy::Outcome AgentPicker::offer(sim::Engine& engine, policy::DecisionPass& pass, JobIndex j) {
  std::span<const JobIndex> later;
  if (pass.placement().lookahead() > 0) {
    const std::span<const JobIndex> all = order(engine);
    const auto at = std::find(all.begin(), all.end(), j);
    RLTUNE_CHECK(at != all.end(), "an offered job is in the agent's order");
    later = all.subspan(static_cast<std::size_t>(at - all.begin()) + 1);
  }
  const policy::Outcome outcome = pass.offer(engine, j, later);
  if (outcome == policy::Outcome::started) pass.begin(engine);  // the agent chooses again from what is left
  return outcome;
}

bool AgentPicker::serve_unseen(sim::Engine& engine, policy::DecisionPass& pass) {
  const std::span<const JobIndex> all = order(engine);
  for (std::size_t i = unseen_from_; i < all.size() && !pass.closed(); ++i)
    if (pass.offer(engine, all[i], all.subspan(i + 1)) == policy::Outcome::started) {
      pass.begin(engine);
      return true;
    }
  return false;
}

bool AgentPicker::await_pick(sim::Engine& engine, policy::DecisionPass& pass) {
  for (;;) {
    if (engine.queue().empty()) return false;
    if (observed_ != pass.generation()) {
      // A new pass: observe, then the committed job goes first (if it does not fit, it blocks).
      if (ranked_outside_ != state_of(engine)) observe_queue(engine);
      ranked_outside_.reset();
      observed_ = pass.generation();
      if (committed(engine) && offer(engine, pass, committed_) == policy::Outcome::started) continue;
    }
    bool open = false;
    for (int s = 0; s < observation_.visible; ++s) {
      const bool ok = pass.may_offer(engine, observation_.jobs[static_cast<std::size_t>(s)]);
      observation_.mask[static_cast<std::size_t>(s)] = ok;
      open = open || ok;
    }
    if (open) return true;
    // Unless the agent may wait, the jobs it cannot see get their turn.
    if (observation_.mask[kSkip] || !serve_unseen(engine, pass)) return false;
  }
}

bool AgentPicker::pick(sim::Engine& engine, policy::DecisionPass& pass, int slot) {
  RLTUNE_CHECK(slot >= 0 && slot < kActions && observation_.mask[static_cast<std::size_t>(slot)] == 1,
               fmt::format("action {} is masked", slot));
  if (slot == kSkip) {
    engine.wake_at(engine.now() + kSkipTime);
    return false;
  }
  const JobIndex j = observation_.jobs[static_cast<std::size_t>(slot)];
  if (offer(engine, pass, j) != policy::Outcome::started && options_.commit && !committed(engine)) {
    committed_ = j;
    order_current_ = false;
  }
  return true;
}

}  // namespace rltune::rl
