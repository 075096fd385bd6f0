#include "rl/agent_picker.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "rl/policy_net.h"

namespace rltune::rl {

std::string reference_conflict(const AgentOptions& options) {
  if (!options.published) return "";
  const char* what = !options.commit ? "--reconsider: the published environment commits to every pick"
                     : options.skip  ? "--skip: the published environment cannot wait (its skip action is unreachable, B8)"
                                     : nullptr;
  return what ? fmt::format("a learned policy under --semantics reference refuses {}", what) : "";
}

AgentPicker::AgentPicker(std::unique_ptr<policy::PriorityPolicy> baseline, AgentOptions options)
    : baseline_(std::move(baseline)), options_(options) {}

void AgentPicker::begin_run() {
  baseline_->reset();
  committed_ = -1;
  backfill_.forget();
  observed_ = 0;
  ranked_outside_.reset();
  order_current_ = false;
}

namespace {

std::array<std::size_t, 3> state_of(const sim::View& view) {
  return {static_cast<std::size_t>(view.now()), view.queue().size(), view.running().size()};
}

}  // namespace

bool AgentPicker::committed(const sim::View& view) const {
  return committed_ >= 0 && view.job(committed_).queued();
}

void AgentPicker::observe_queue(const sim::View& view) {
  select_visible(view, baseline_->order(view), observation_, options_.observation);
  // Waiting is a choice only while something is still to happen (else it would change nothing).
  observation_.mask[kSkip] = options_.skip && view.event_pending();
  // Every visible job is ranked, before legality masks some of them.
  if (ranker_) {
    if (options_.features) describe_visible(view, observation_, options_.observation, observation_cache_);
    described_ = true;
    ranker_(observation_, logits_);
    order_by_logits(logits_, observation_.visible, ranked_);
  } else {
    // Unranked, the features are needed only when the agent is asked to pick in this pass, which most
    // passes of a pick waiting for GPUs never do. Nothing starts before then (a start begins a new
    // pass), so describing the view later gives the same features.
    described_ = false;
    std::iota(ranked_.begin(), ranked_.begin() + observation_.visible, 0);
  }
  order_current_ = false;
}

std::span<const JobIndex> AgentPicker::order(const sim::View& view) {
  if (observed_ == 0) {  // outside a pass (the advisor's priorities)
    observe_queue(view);
    ranked_outside_ = state_of(view);
  }
  if (order_current_) return order_;
  order_.clear();
  const bool keep = committed(view);
  if (keep) order_.push_back(committed_);
  for (int i = 0; i < observation_.visible; ++i) {
    const JobIndex j = observation_.jobs[static_cast<std::size_t>(ranked_[static_cast<std::size_t>(i)])];
    if (!keep || j != committed_) order_.push_back(j);
  }
  // Beyond the visible slots: the rest of the queue in baseline order (they were not observed).
  unseen_from_ = order_.size();
  int seen = 0;
  for (const JobIndex j : baseline_->order(view))
    if (view.job(j).queued() && ++seen > observation_.visible && (!keep || j != committed_))
      order_.push_back(j);
  order_current_ = true;
  return order_;
}

policy::Outcome AgentPicker::offer(policy::DecisionPass& pass, JobIndex j) {
  std::span<const JobIndex> later;
  if (pass.placement().lookahead() > 0) {
    const std::span<const JobIndex> all = order(pass.view());
    const auto at = std::find(all.begin(), all.end(), j);
    RLTUNE_CHECK(at != all.end(), "an offered job is in the agent's order");
    later = all.subspan(static_cast<std::size_t>(at - all.begin()) + 1);
  }
  const policy::Outcome outcome = pass.offer(j, later);
  if (outcome == policy::Outcome::started) pass.begin_again();  // the agent chooses again from what is left
  return outcome;
}

bool AgentPicker::serve_unseen(policy::DecisionPass& pass) {
  const std::span<const JobIndex> all = order(pass.view());
  for (std::size_t i = unseen_from_; i < all.size() && !pass.closed(); ++i)
    if (!pass.futile(all[i]) && pass.offer(all[i], all.subspan(i + 1)) == policy::Outcome::started) {
      pass.begin_again();
      return true;
    }
  return false;
}

bool AgentPicker::await_pick(policy::DecisionPass& pass) {
  const sim::View view = pass.view();
  for (;;) {
    if (view.queue().empty()) return false;
    if (options_.published && committed(view)) {  // the published step waits for its pick
      if (view.job(committed_).can_run() && !pass.try_start(committed_)) {
        if (pass.backfill()) backfill_.round(pass, committed_, [&] { return baseline_->order(view); }, true);
        return false;
      }
      if (!view.job(committed_).can_run()) {
        if (!view.running().empty()) return false;
        pass.drop(committed_);
      }
      pass.begin_again();  // it started or left: the agent chooses again
      continue;
    }
    if (observed_ != pass.generation()) {
      // A new pass: observe, then the committed job goes first (if it does not fit, it blocks).
      if (ranked_outside_ != state_of(view)) observe_queue(view);
      ranked_outside_.reset();
      observed_ = pass.generation();
      if (committed(view) && offer(pass, committed_) == policy::Outcome::started) continue;
    }
    bool open = false;
    for (int s = 0; s < observation_.visible; ++s) {
      // The published step may pick any visible job (one that can never run, too: it is then dropped).
      const bool ok = options_.published || pass.may_offer(observation_.jobs[static_cast<std::size_t>(s)]);
      observation_.mask[static_cast<std::size_t>(s)] = ok;
      open = open || ok;
    }
    if (open) {
      if (!described_) describe_visible(view, observation_, options_.observation, observation_cache_);
      described_ = true;
      return true;
    }
    // Unless the agent may wait, the jobs it cannot see get their turn.
    if (observation_.mask[kSkip] || !serve_unseen(pass)) return false;
  }
}

bool AgentPicker::pick(policy::DecisionPass& pass, int slot) {
  RLTUNE_CHECK(slot >= 0 && slot < kActions && observation_.mask[static_cast<std::size_t>(slot)] == 1,
               fmt::format("action {} is masked", slot));
  if (slot == kSkip) {
    pass.wake_at(pass.view().now() + kSkipTime);
    return false;
  }
  const JobIndex j = observation_.jobs[static_cast<std::size_t>(slot)];
  if (offer(pass, j) != policy::Outcome::started && options_.commit && !committed(pass.view())) {
    committed_ = j;
    backfill_.forget();
    order_current_ = false;
  }
  return true;
}

}  // namespace rltune::rl
