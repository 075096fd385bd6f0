#pragma once
// A scheduler profile = one priority policy + one placement policy + blocking mode + optional EASY
// backfilling. The only heuristic scheduler in rltune; learned policies plug in as priority policies.
#include <memory>
#include <string>
#include <vector>

#include "policy/placement/milp_placement.h"
#include "policy/placement/placement.h"
#include "policy/priority/priority.h"
#include "sim/engine.h"

namespace rltune::policy {

enum class Blocking {
  global,  // the first job that cannot start blocks every pool (the reference's head-of-line rule)
  pool,    // it blocks only the pools it may use; other pools keep being served in priority order
};
Blocking parse_blocking(const std::string& name);  // InputError for unknown names
const char* to_string(Blocking blocking);

struct ProfileOptions {
  std::string priority = "fcfs";
  std::string placement = "greedy";
  Blocking blocking = Blocking::global;
  bool backfill = false;
  PriorityOptions priority_options;
  MilpOptions milp;  // used by --placement milp
  // "fcfs", "sjf+backfill" ...: name used in outputs.
  std::string name() const;
};

// Earliest time (by estimates) at which `job` fits in `pool`, releasing the pool's running jobs in order
// of estimated end (EASY's shadow time); kForever if it never fits.
Seconds shadow_time(const sim::Engine& engine, JobIndex job, PoolId pool, const PlacementPolicy& placement);

// What one pass over the queue has closed: the pools blocked by jobs that could not start and, with
// backfilling, their reservations (steps 2 and 3 below). The RL environment keeps one too, so that
// training follows the same rules as the simulator.
class PassState {
 public:
  void reset(std::size_t pools);
  // Pools of `job` that no earlier job blocks.
  void open_pools(const sim::SimJob& job, std::vector<PoolId>& out) const;
  // Blocked pools of `job` it may backfill into now: no reservation there, or its estimated end is no
  // later than the reservation.
  void backfill_pools(const sim::SimJob& job, Seconds now, std::vector<PoolId>& out) const;
  // `job` could not start in its open pools: it blocks them (global: every pool) and, with backfilling,
  // reserves the open pool where it can start first. Nothing happens if it had no open pool.
  void block(const sim::Engine& engine, JobIndex job, const ProfileOptions& options, const PlacementPolicy& placement);
  // Whether `job` may be picked now: it has an open pool (where it starts or blocks), or, with
  // backfilling, it fits now in a pool it may backfill into. `pools` is scratch.
  bool may_pick(const sim::Engine& engine, JobIndex job, bool backfill, const PlacementPolicy& placement,
                std::vector<PoolId>& pools) const;
  bool all_blocked() const { return blocked_count_ == blocked_.size(); }
  bool any_blocked() const { return blocked_count_ > 0; }

 private:
  std::vector<char> blocked_;
  std::vector<Seconds> reservation_;  // per pool; kForever = none
  std::size_t blocked_count_ = 0;
};

// Decision rule at each decision point, over the queue in priority order. For each job J:
//  1. if J fits now in one of its pools that no earlier job blocks, start it there;
//  2. else, with backfilling, start it in a blocked pool if it fits now and that pool has no reservation
//     or J's estimated end is no later than the reservation (EASY: it cannot delay the reserved job);
//  3. else J blocks: with global blocking every pool (only the first such job), with pool blocking the
//     pools J may use that were still open. With backfilling, J gets a reservation at the earliest time
//     it can start (the shadow time, from running jobs' estimated ends, in its best pool). Under global
//     blocking that reservation binds every pool, as in the reference; under pool blocking, only that pool.
class ProfileScheduler final : public sim::Scheduler {
 public:
  ProfileScheduler(ProfileOptions options, std::unique_ptr<PriorityPolicy> priority,
                   std::unique_ptr<PlacementPolicy> placement);

  void begin_run(const sim::Engine& engine) override;
  void decide(sim::Engine& engine) override;
  const ProfileOptions& options() const { return options_; }
  const PlacementPolicy& placement() const { return *placement_; }
  PriorityPolicy& priority() { return *priority_; }

 private:
  // Places `job` in one of `pools` and starts it; false when it does not fit there now.
  // `later` = the priority order after `job`, for look-ahead placements.
  bool try_start(sim::Engine& engine, JobIndex job, std::span<const PoolId> pools, std::span<const JobIndex> later);
  // One pass over the priority order; true when a job started and the policy wants a new order first.
  bool walk(sim::Engine& engine);

  ProfileOptions options_;
  std::unique_ptr<PriorityPolicy> priority_;
  std::unique_ptr<PlacementPolicy> placement_;
  // Scratch reused across decisions.
  PassState pass_;
  std::vector<PoolId> pools_;
  std::vector<UpcomingJob> upcoming_;
};

}  // namespace rltune::policy
