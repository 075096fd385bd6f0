#include "policy/profile.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace rltune::policy {

Blocking parse_blocking(const std::string& name) {
  if (name == "global") return Blocking::global;
  if (name == "pool") return Blocking::pool;
  throw InputError("--blocking: unknown value '" + name + "' (known: global, pool)");
}

const char* to_string(Blocking blocking) { return blocking == Blocking::global ? "global" : "pool"; }

std::string ProfileOptions::name() const {
  std::string n = priority;
  if (placement != "greedy") n += "/" + placement;
  if (backfill) n += "+backfill";
  return n;
}

ProfileScheduler::ProfileScheduler(ProfileOptions options, std::unique_ptr<PriorityPolicy> priority,
                                   std::unique_ptr<PlacementPolicy> placement)
    : options_(std::move(options)), priority_(std::move(priority)), placement_(std::move(placement)) {}

void ProfileScheduler::begin_run(const sim::Engine&) { priority_->reset(); }

bool ProfileScheduler::try_start(sim::Engine& engine, JobIndex job, std::span<const PoolId> pools,
                                 std::span<const JobIndex> later) {
  if (pools.empty()) return false;
  upcoming_.clear();
  for (std::size_t i = 0; i < later.size() && static_cast<int>(upcoming_.size()) < placement_->lookahead(); ++i) {
    const sim::SimJob& next = engine.job(later[i]);
    if (next.state == sim::JobState::queued) upcoming_.push_back({cluster::request_of(*next.spec), next.eligible});
  }
  const PlaceResult r = placement_->place(engine.cluster(), cluster::request_of(*engine.job(job).spec), pools, upcoming_);
  if (r.status != PlaceStatus::placed) return false;
  const std::string problem = engine.start(job, r.placement);
  RLTUNE_CHECK(problem.empty(), "the engine refused a placement: " + problem);
  return true;
}

Seconds shadow_time(const sim::Engine& engine, JobIndex job, PoolId pool, const PlacementPolicy& placement) {
  const Seconds now = engine.now();
  const auto estimated_end = [&](JobIndex r) { return std::max(now, engine.job(r).start + engine.job(r).estimate); };
  std::vector<JobIndex> ending;
  for (const JobIndex r : engine.running())
    if (engine.job(r).placement.pool == pool) ending.push_back(r);
  std::stable_sort(ending.begin(), ending.end(),
                   [&](JobIndex a, JobIndex b) { return estimated_end(a) < estimated_end(b); });
  cluster::ClusterState future = engine.cluster();
  const cluster::Request request = cluster::request_of(*engine.job(job).spec);
  const PoolId only[] = {pool};
  for (const JobIndex r : ending) {
    future.release(engine.job(r).placement);
    if (placement.feasibility(future, request, only) == PlaceStatus::placed) return estimated_end(r);
  }
  return kForever;
}

void PassState::reset(std::size_t pools) {
  blocked_.assign(pools, 0);
  reservation_.assign(pools, kForever);
  blocked_count_ = 0;
}

void PassState::open_pools(const sim::SimJob& job, std::vector<PoolId>& out) const {
  out.clear();
  for (const PoolId p : job.eligible)
    if (!blocked_[p]) out.push_back(p);
}

void PassState::backfill_pools(const sim::SimJob& job, Seconds now, std::vector<PoolId>& out) const {
  out.clear();
  for (const PoolId p : job.eligible)
    if (blocked_[p] && (reservation_[p] == kForever || now + job.estimate <= reservation_[p])) out.push_back(p);
}

bool PassState::may_pick(const sim::Engine& engine, JobIndex j, bool backfill, const PlacementPolicy& placement,
                         std::vector<PoolId>& pools) const {
  const sim::SimJob& job = engine.job(j);
  open_pools(job, pools);
  if (!pools.empty()) return true;
  if (!backfill) return false;
  // Only a job that can start now may backfill: a pick that could not would block nothing.
  backfill_pools(job, engine.now(), pools);
  return !pools.empty() && placement.feasibility(engine.cluster(), cluster::request_of(*job.spec), pools) == PlaceStatus::placed;
}

void PassState::block(const sim::Engine& engine, JobIndex j, const ProfileOptions& options, const PlacementPolicy& placement) {
  const sim::SimJob& job = engine.job(j);
  if (std::none_of(job.eligible.begin(), job.eligible.end(), [&](PoolId p) { return !blocked_[p]; })) return;
  if (options.backfill) {
    PoolId best = -1;
    Seconds best_time = kForever;
    for (const PoolId p : job.eligible) {
      if (blocked_[p]) continue;
      const Seconds t = shadow_time(engine, j, p, placement);
      if (best < 0 || t < best_time) {
        best = p;
        best_time = t;
      }
    }
    // Global blocking: one reservation that every backfilled job must respect, whatever its pool
    // (the reference's EASY). Pool blocking: the reservation binds only the pool it is in.
    if (options.blocking == Blocking::global) reservation_.assign(reservation_.size(), best_time);
    else reservation_[best] = best_time;
  }
  for (PoolId p = 0; p < static_cast<PoolId>(blocked_.size()); ++p) {
    const bool blocks = options.blocking == Blocking::global ||
                        std::find(job.eligible.begin(), job.eligible.end(), p) != job.eligible.end();
    if (blocks && !blocked_[p]) {
      blocked_[p] = 1;
      ++blocked_count_;
    }
  }
}

void ProfileScheduler::decide(sim::Engine& engine) {
  while (walk(engine)) {
  }
}

bool ProfileScheduler::walk(sim::Engine& engine) {
  const std::span<const JobIndex> order = priority_->order(engine);
  const bool again_after_start = priority_->one_at_a_time();
  pass_.reset(engine.cluster_spec().pools.size());
  const std::optional<PriorityPolicy::Wait> wait = priority_->wait();
  const std::size_t serve = wait ? std::min(wait->serve, order.size()) : order.size();
  for (std::size_t i = 0; i < serve; ++i) {
    const JobIndex j = order[i];
    const auto later = order.subspan(i + 1);
    const sim::SimJob& job = engine.job(j);
    if (job.state != sim::JobState::queued) continue;  // started since the order was built
    // 1. Pools no earlier job blocks.
    pass_.open_pools(job, pools_);
    if (try_start(engine, j, pools_, later)) {
      if (again_after_start) return true;
      continue;
    }
    // 2. Backfill into blocked pools without delaying their reservation.
    if (options_.backfill) {
      pass_.backfill_pools(job, engine.now(), pools_);
      if (try_start(engine, j, pools_, later)) {
        if (again_after_start) return true;
        continue;
      }
    }
    // 3. J blocks the pools it had open (and reserves one, with backfilling).
    pass_.block(engine, j, options_, *placement_);
    if (pass_.all_blocked() && !options_.backfill) break;
  }
  // The policy waits rather than serve the rest, but only where it had a choice (as in training).
  if (wait) {
    const std::size_t consider = std::min(wait->consider, order.size());
    for (std::size_t i = serve; i < consider; ++i)
      if (engine.job(order[i]).state == sim::JobState::queued && pass_.may_pick(engine, order[i], options_.backfill, *placement_, pools_)) {
        engine.wake_at(wait->until);
        break;
      }
  }
  return false;
}

}  // namespace rltune::policy
