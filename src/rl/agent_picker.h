#pragma once
// The agent-driven picker: how a learned policy offers jobs to the decision pass. The training
// environment (the learner picks, through Env::step) and learned policies in the simulator (`rl:DIR`,
// `rl-sampled:DIR`: the model picks) share it, so a model meets in simulation exactly the rules it
// was trained under.
//
// In each pass it observes the queue (the first kSlots jobs of the baseline's order), offers the
// committed job first, then asks the agent for a pick among the visible jobs the pass may take (the
// mask); when it may take none of them, the jobs beyond the slots are offered in baseline order, as a
// heuristic would serve them. A start begins a new pass, so the agent chooses again from what is left.
// - commit (the reference, SPEC 3.4): a pick that cannot start yet is a commitment, offered first in
//   every later pass until it starts. Without it (--reconsider) the pick only blocks for this pass; an
//   agent that follows its baseline's order then reproduces the baseline exactly.
// - published (--semantics reference): the commitment as the published step keeps it, with its own
//   backfilling while the pick waits (policy::PublishedBackfill); a committed job that can never run is
//   waited for until nothing runs, then dropped.
// - skip (--skip): while something is still to happen, the agent may wait (kSkip): nothing more starts
//   until the next event or kSkipTime later. The jobs beyond the slots are not served while it may.
// Look-ahead placements (milp) see the jobs after the one placed in the order the agent would offer
// them: the committed job, the visible jobs by the ranker's logits (slot order without a ranker), then
// the rest of the queue in baseline order.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "policy/decision_pass.h"
#include "policy/priority/priority.h"
#include "rl/observation.h"

namespace rltune::rl {

struct AgentOptions {
  ObservationOptions observation;
  bool skip = false;
  bool commit = true;
  // The published environment's step (SPEC 3.4; --semantics reference, PriorityOptions::serves_heads):
  // a pick is waited for until it fits, and one that can never run until nothing runs, then dropped.
  bool published = false;
  // The ranker reads the slots' features; false: only which jobs they hold and the mask (sjf-sampled),
  // so the features are never computed.
  bool features = true;
};
// Why a learned policy cannot run with `options` under --semantics reference, or "" when it can: the
// published environment commits to every pick and cannot wait.
std::string reference_conflict(const AgentOptions& options);

class AgentPicker {
 public:
  // `baseline`: the order whose first kSlots jobs the agent sees.
  AgentPicker(std::unique_ptr<policy::PriorityPolicy> baseline, AgentOptions options);

  // Forgets the commitment and the baseline's state; called before each run.
  void begin_run();
  // Writes one logit per slot of an observation (and kSkip's, when the observation allows it). Called
  // once per pass, before any offer; none = the visible jobs rank in slot order.
  using Ranker = std::function<void(const Observation&, std::span<float>)>;
  void set_ranker(Ranker ranker) { ranker_ = std::move(ranker); }

  // Serves `pass` until the agent must pick: true with observation()'s mask holding the legal picks;
  // false when nothing more can start before time moves on.
  bool await_pick(policy::DecisionPass& pass);
  // Applies a legal pick of observation(): a slot, whose job is offered to the pass, or kSkip, which asks
  // for a wake-up at now + kSkipTime. False after kSkip: the caller moves time on.
  bool pick(policy::DecisionPass& pass, int slot);

  const Observation& observation() const { return observation_; }
  // The ranker's logits for this pass.
  std::span<const float> logits() const { return logits_; }
  // The queue in the order the agent would offer it now, observed and ranked anew (the Slurm advisor's
  // priorities).
  std::span<const JobIndex> order(const sim::View& view);

 private:
  // observation_ and the ranking for the queue now.
  void observe_queue(const sim::View& view);
  // Offers `j` with the jobs after it in the agent's order; a start begins a new pass.
  policy::Outcome offer(policy::DecisionPass& pass, JobIndex j);
  // No visible job may be taken: the jobs beyond the slots, in baseline order, until one starts (true)
  // or the pass is closed.
  bool serve_unseen(policy::DecisionPass& pass);
  bool committed(const sim::View& view) const;

  std::unique_ptr<policy::PriorityPolicy> baseline_;
  AgentOptions options_;
  Ranker ranker_;
  Observation observation_;
  ObservationCache observation_cache_;
  std::array<float, kActions> logits_{};
  std::array<int, kSlots> ranked_{};  // the visible slots, best logit first
  std::uint64_t observed_ = 0;        // the pass generation observation_ was taken in; 0 = none
  bool described_ = true;             // observation_ holds the features of its slots, not only their jobs
  // Set by order() outside a pass: the time and job counts it observed. The first pass in that
  // same state reuses its observation and ranking, so that the job offered first is the one order()
  // put first (a sampled model draws its noise once).
  std::optional<std::array<std::size_t, 3>> ranked_outside_;
  JobIndex committed_ = -1;           // the job the agent chose that has not started yet
  policy::PublishedBackfill backfill_;  // while it waits, under the published step with backfilling
  std::vector<JobIndex> order_;       // order(), built on demand (look-ahead, the jobs beyond the slots)
  std::size_t unseen_from_ = 0;       // where order_'s jobs beyond the visible slots begin
  bool order_current_ = false;
};

}  // namespace rltune::rl
