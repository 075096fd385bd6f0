#pragma once
// The decision pass: the only implementation of "what starts at time t". A picker offers queued jobs to
// the pass one at a time; the pass answers each offer with an outcome and remembers what earlier offers
// closed (blocked pools, EASY reservations). The simulator's profiles, the RL environment, `rl:DIR` in
// simulation and the Slurm advisor all decide through it; who offers the jobs (a priority order, an
// agent) is the extension point (Picker).
//
// An offer of job J:
//  1. if J fits now in one of its pools that no earlier offer blocked, it starts there;
//  2. else, with backfilling, it starts in a blocked pool if it fits now and that pool has no
//     reservation or J's planned end is no later than the reservation (EASY: it cannot delay the
//     reserved job). Plans are the runtime estimates, or the time limits under --backfill-limits
//     (SimJob::plan);
//  3. else J blocks: with global blocking every pool, with pool blocking the pools J may use that were
//     still open. With backfilling, J gets a reservation at the earliest time it can start (the shadow
//     time, from running jobs' planned ends, in its best open pool). Under global blocking that
//     reservation binds every pool, as in the reference; under pool blocking, only that pool.
//  A job whose pools were all blocked already (and that cannot backfill) blocks nothing more.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/names.h"
#include "policy/placement/placement.h"
#include "sim/engine.h"
#include "sim/view.h"

namespace rltune::policy {

enum class Blocking {
  global,  // the first job that cannot start blocks every pool (the reference's head-of-line rule)
  pool,    // it blocks only the pools it may use; other pools keep being served in priority order
};
inline constexpr NameTable<Blocking, 2> kBlockingNames{"blocking mode", {{{Blocking::global, "global"}, {Blocking::pool, "pool"}}}};
inline Blocking parse_blocking(const std::string& name) { return kBlockingNames.parse(name); }  // InputError for unknown names
inline const char* to_string(Blocking value) { return kBlockingNames.name(value); }

// What an offer did.
enum class Outcome {
  started,  // the job started now
  blocked,  // it cannot start now; it closed the pools it had open (and reserved one, with backfilling)
  not_now,  // it cannot start now and closed nothing: an earlier offer had closed all its pools
};

// Earliest time (by plans) at which `job` fits in `pool`, releasing the pool's running jobs in order
// of planned end (EASY's shadow time); kForever if it never fits. A job at or past its planned end is
// expected when view.expected_end() says, unless `as_written`: then at start + plan, as the published
// loop reads it (one event at a time, a job due now may not have ended yet).
Seconds shadow_time(const sim::View& view, JobIndex job, PoolId pool, const PlacementPolicy& placement, bool as_written = false);

class DecisionPass {
 public:
  DecisionPass(Blocking blocking, bool backfill, std::unique_ptr<PlacementPolicy> placement);

  // Starts a pass at engine.now(): every pool open, no reservation. The engine calls for one at every
  // decision point; the pass is the only one that starts jobs in it until the next.
  void begin(sim::Engine& engine);
  // Another pass at the same time, for a picker whose choice depends on what just started.
  void begin_again();
  // What the pickers may read of the engine during the pass.
  sim::View view() const { return sim::View(*engine_); }
  // Offers queued job `job` (rules above). `later` = the jobs the picker would offer after it, for
  // look-ahead placements (jobs no longer queued are skipped).
  Outcome offer(JobIndex job, std::span<const JobIndex> later);
  // Starts queued `job` now if it fits in one of its pools, blocked or not, and closes nothing: for a
  // picker that keeps its own reservation (the published loop's backfilling).
  bool try_start(JobIndex job);
  // Drops queued `job`, one that can never run (the published loop, Engine::drop).
  void drop(JobIndex job) { engine_->drop(job); }
  // Whether an offer of `job` could start it or close a pool: it has an open pool, or, with backfilling,
  // it fits now in a pool it may backfill into. A legal pick for an agent.
  bool may_offer(JobIndex job) const;
  // A picker that chooses to wait: the next decision point comes at `t` (> now) at the latest.
  void wake_at(Seconds t) { engine_->wake_at(t); }
  // Every pool is blocked and nothing may backfill (no backfilling, or no queued job that would end by
  // the latest reservation needs GPUs some pool could still hold): no later offer in this pass can start
  // a job.
  bool closed() const { return blocked_count_ == blocked_.size() && (!backfill_ || !bounds().backfill_possible); }
  // The same for the jobs that may use only `pools`: every one of them is blocked and nothing queued
  // could backfill into them. Costs O(pools + queued GPU counts): ask again only after an offer that
  // started or blocked a job.
  bool closed(std::span<const PoolId> pools) const {
    return all_blocked(pools) && (!backfill_ || !bounds_over(pools).backfill_possible);
  }
  // A cheap test for long walks: true when an offer of `job` certainly starts nothing and closes
  // nothing (it is not queued; or every pool it may use is blocked and, without backfilling or in each
  // of them, it would end after the pool's reservation or needs more GPUs than the pool has free).
  // False means: offer it to know.
  bool futile(JobIndex job) const;
  // Whether every one of `pools` is blocked.
  bool all_blocked(std::span<const PoolId> pools) const {
    return std::all_of(pools.begin(), pools.end(), [&](PoolId p) { return blocked_[p] != 0; });
  }
  // Counts the passes begun, so that a picker can tell a new one from the one it last saw.
  std::uint64_t generation() const { return generation_; }

  Blocking blocking() const { return blocking_; }
  bool backfill() const { return backfill_; }
  const PlacementPolicy& placement() const { return *placement_; }

 private:
  void open_pools(const sim::JobView& job);
  void backfill_pools(const sim::JobView& job);
  bool start_in(JobIndex job, std::span<const JobIndex> later);
  void block(JobIndex job);
  // Over a set of pools: the latest reservation, the most free GPUs of one pool, and whether some
  // queued job may still backfill into one of them (a necessary condition, cheap).
  struct Bounds {
    Seconds latest_reservation = 0;
    int most_free = 0;
    bool backfill_possible = true;
  };
  Bounds bounds_over(std::span<const PoolId> pools) const;
  const Bounds& bounds() const;  // over every pool, kept until a start or a block changes it

  Blocking blocking_;
  bool backfill_;
  std::unique_ptr<PlacementPolicy> placement_;
  sim::Engine* engine_ = nullptr;  // set by begin()
  std::vector<char> blocked_;         // per pool
  std::vector<Seconds> reservation_;  // per pool; kForever = none
  std::size_t blocked_count_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<PoolId> all_pools_;
  mutable bool bounds_valid_ = false;
  mutable Bounds bounds_;
  // Scratch reused across offers.
  std::vector<PoolId> pools_;
  std::vector<UpcomingJob> upcoming_;
  mutable std::vector<PoolId> probe_;  // may_offer's
};

// The published RLTune's backfilling while a head waits (SPEC 3.7), for the pickers that follow its loop:
// when the head first waits, its shadow time is computed once (its pools' running jobs released by
// start + estimate until it fits); then in each round the queued jobs of the head's pools (accepted by a
// pool that accepts the head, as its lists filter by VC or GPU type, whatever their size; for its Helios
// agent, every queued job: the cluster's reference_agent_backfills_every_pool), by submit time, start if
// they fit now and would end strictly before it (wherever they fit: the nodes are not checked). Jobs
// submitted together keep the order of the queue when the head was chosen, the head among them; later
// arrivals go last. Where the cluster says so (reference_backfill_skips_after_start), the candidate
// after each started job is not tried, as the published Helios loops walk a list they remove started
// jobs from.
class PublishedBackfill {
 public:
  // A new head will wait next.
  void forget() { candidates_.clear(); }
  // One round at the pass's time while `head` waits (offered first; it did not start). `order` gives the
  // queue in the order the head was chosen from; it is asked for when the head first waits.
  void round(DecisionPass& pass, JobIndex head, const std::function<std::span<const JobIndex>()>& order, bool for_agent);

 private:
  Seconds shadow_ = kForever;
  std::vector<JobIndex> candidates_;  // may hold jobs that left the queue; empty until the head first waits
  JobIndex last_seen_ = -1;           // arrivals up to it are candidates already
};

// Who offers jobs to the pass at a decision point: a priority order for the heuristics, an agent for
// learned policies.
class Picker {
 public:
  virtual ~Picker() = default;
  // Forgets per-run state; called before each run with the pass it will offer to and the engine.
  virtual void begin_run(const DecisionPass& /*pass*/, const sim::Engine& /*engine*/) {}
  // The queue in the order this picker would offer it now (first = offered first). May hold jobs no
  // longer queued: callers skip them. Valid until the next call.
  virtual std::span<const JobIndex> order(const sim::View& view) = 0;
  // Offers jobs to `pass` until nothing more can start now. A picker that chooses to wait asks the pass
  // for a wake-up (pass.wake_at).
  virtual void decide(DecisionPass& pass) = 0;
};

class PriorityPolicy;
// Offers the queue in the order of a priority made by `make_priority`, each job once, until the pass is
// closed. Under pool blocking, one such priority per independent group of pools, unless by_pool_group
// is false (one walk over the whole order; the same starts, as the tests check).
std::unique_ptr<Picker> make_order_picker(std::function<std::unique_ptr<PriorityPolicy>()> make_priority,
                                          bool by_pool_group = true);
// The published RLTune's baseline loop (its schedule_curr_sequence_reset), for an engine that follows
// it (Engine::follow_published_loop): the best queued job is the head, and it is waited for until it
// fits, whatever arrives meanwhile. With the pass's backfilling on, its own backfilling runs while the
// head waits (PublishedBackfill) instead of the pass's. A head that can never run (the engine following
// the published loop queues such jobs) waits until nothing runs and is dropped.
std::unique_ptr<Picker> make_head_picker(std::function<std::unique_ptr<PriorityPolicy>()> make_priority);

}  // namespace rltune::policy
