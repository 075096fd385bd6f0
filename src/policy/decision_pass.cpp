#include "policy/decision_pass.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "policy/priority/priority.h"

namespace rltune::policy {

Seconds shadow_time(const sim::View& view, JobIndex job, PoolId pool, const PlacementPolicy& placement) {
  // The pool's running jobs are released in order of expected end until the job fits; that end is the
  // answer (releases only add room, so how jobs that end together are ordered cannot change it). The
  // engine keeps them ordered by start + estimate, which is the expected end of every job that ends
  // after now; the few at or before now (overdue, or started now with no estimate) are re-ordered by
  // their expected end and merged in. So a probe costs the releases it makes, not the pool's running jobs.
  const std::span<const sim::RunningEnd> by_end = view.running_by_estimated_end(pool);
  const Seconds now = view.now();
  std::size_t next_on_time = 0;
  std::vector<sim::RunningEnd> due;
  for (; next_on_time < by_end.size() && by_end[next_on_time].end <= now; ++next_on_time) {
    const sim::RunningEnd& r = by_end[next_on_time];
    due.push_back({view.expected_end(r.job), r.job});
  }
  std::sort(due.begin(), due.end());
  cluster::ClusterState future = view.cluster();
  const cluster::Request request = view.job(job).request();
  const PoolId only[] = {pool};
  for (std::size_t next_due = 0; next_due < due.size() || next_on_time < by_end.size();) {
    const bool take_due = next_on_time == by_end.size() || (next_due < due.size() && due[next_due] < by_end[next_on_time]);
    const sim::RunningEnd next = take_due ? due[next_due++] : by_end[next_on_time++];
    future.release(view.job(next.job).placement());
    if (placement.feasibility(future, request, only) == PlaceStatus::placed) return next.end;
  }
  return kForever;
}

DecisionPass::DecisionPass(Blocking blocking, bool backfill, std::unique_ptr<PlacementPolicy> placement)
    : blocking_(blocking), backfill_(backfill), placement_(std::move(placement)) {}

void DecisionPass::begin(sim::Engine& engine) {
  engine_ = &engine;
  if (backfill_) engine.keep_backfill_indexes();
  begin_again();
}

void DecisionPass::begin_again() {
  const std::size_t pools = engine_->cluster_spec().pools.size();
  blocked_.assign(pools, 0);
  reservation_.assign(pools, kForever);
  blocked_count_ = 0;
  bounds_valid_ = false;
  ++generation_;
}

void DecisionPass::open_pools(const sim::JobView& job) {
  pools_.clear();
  for (const PoolId p : job.eligible())
    if (!blocked_[p]) pools_.push_back(p);
}

void DecisionPass::backfill_pools(const sim::JobView& job) {
  const Seconds end = engine_->now() + job.estimate();
  pools_.clear();
  for (const PoolId p : job.eligible())
    if (blocked_[p] && (reservation_[p] == kForever || end <= reservation_[p])) pools_.push_back(p);
}

bool DecisionPass::start_in(JobIndex j, std::span<const JobIndex> later) {
  if (pools_.empty()) return false;
  const sim::View v = view();
  upcoming_.clear();
  for (std::size_t i = 0; i < later.size() && static_cast<int>(upcoming_.size()) < placement_->lookahead(); ++i) {
    const sim::JobView next = v.job(later[i]);
    if (next.queued()) upcoming_.push_back({next.request(), next.eligible()});
  }
  const PlaceResult r = placement_->place(v.cluster(), v.job(j).request(), pools_, upcoming_);
  if (r.status != PlaceStatus::placed) return false;
  const sim::StartOutcome outcome = engine_->start(j, r.placement);
  RLTUNE_CHECK(outcome.started(), "the engine refused a placement: " + outcome.reason);
  bounds_valid_ = false;
  return true;
}

Outcome DecisionPass::offer(JobIndex j, std::span<const JobIndex> later) {
  const sim::JobView job = view().job(j);
  RLTUNE_CHECK(job.queued(), fmt::format("job {} is offered while {}", job.id(), to_string(job.state())));
  open_pools(job);
  if (start_in(j, later)) return Outcome::started;
  if (backfill_) {
    backfill_pools(job);
    if (start_in(j, later)) return Outcome::started;
  }
  const auto& eligible = job.eligible();
  if (std::all_of(eligible.begin(), eligible.end(), [&](PoolId p) { return blocked_[p] != 0; })) return Outcome::not_now;
  block(j);
  return Outcome::blocked;
}

bool DecisionPass::may_offer(JobIndex j) const {
  const sim::JobView job = view().job(j);
  const Seconds end = engine_->now() + job.estimate();
  bool backfill_pool = false;
  for (const PoolId p : job.eligible()) {
    if (!blocked_[p]) return true;
    backfill_pool = backfill_pool || reservation_[p] == kForever || end <= reservation_[p];
  }
  if (!backfill_ || !backfill_pool) return false;
  // Only a job that can start now may backfill: a pick that could not would close nothing.
  probe_.clear();
  for (const PoolId p : job.eligible())
    if (reservation_[p] == kForever || end <= reservation_[p]) probe_.push_back(p);
  return placement_->feasibility(engine_->cluster(), job.request(), probe_) == PlaceStatus::placed;
}

bool DecisionPass::futile(JobIndex j) const {
  const sim::JobBrief& job = engine_->brief(j);
  if (!job.queued) return true;
  if (blocked_count_ < blocked_.size()) return false;
  if (!backfill_) return true;
  update_bounds();
  return engine_->now() + job.estimate > latest_reservation_ || job.gpus > most_free_;
}

bool DecisionPass::backfill_possible() const {
  update_bounds();
  return backfill_possible_;
}

void DecisionPass::update_bounds() const {
  if (bounds_valid_) return;
  bounds_valid_ = true;
  const cluster::ClusterState& cluster = engine_->cluster();
  latest_reservation_ = *std::max_element(reservation_.begin(), reservation_.end());
  most_free_ = 0;
  for (PoolId p = 0; p < static_cast<PoolId>(blocked_.size()); ++p) most_free_ = std::max(most_free_, cluster.pool_free_total(p));
  // Some GPU count of the queue must have a job that would end in time and a pool that could hold that
  // many GPUs now. Placements use at most one node more than the fewest (where CPUs and memory do not
  // bind; where they do, only the pool's free total is tested).
  const auto could_hold = [&](int gpus) {
    for (PoolId p = 0; p < static_cast<PoolId>(blocked_.size()); ++p) {
      const cluster::PoolSpec& pool = cluster.spec().pools[p];
      const int nodes = cluster::tracks_cpus_or_memory(pool) ? pool.nodes : (gpus + pool.gpus_per_node - 1) / pool.gpus_per_node + 1;
      if (cluster.freest_nodes_hold(p, nodes, gpus)) return true;
    }
    return false;
  };
  backfill_possible_ = false;
  for (const auto& [gpus, shortest] : engine_->shortest_queued_estimates()) {
    if (gpus > most_free_) break;
    if (engine_->now() + shortest <= latest_reservation_ && could_hold(gpus)) {
      backfill_possible_ = true;
      break;
    }
  }
}

void DecisionPass::block(JobIndex j) {
  bounds_valid_ = false;
  const sim::View v = view();
  const auto& eligible = v.job(j).eligible();
  if (backfill_) {
    PoolId best = -1;
    Seconds best_time = kForever;
    for (const PoolId p : eligible) {
      if (blocked_[p]) continue;
      const Seconds t = shadow_time(v, j, p, *placement_);
      if (best < 0 || t < best_time) {
        best = p;
        best_time = t;
      }
    }
    // Global blocking: one reservation that every backfilled job must respect, whatever its pool
    // (the reference's EASY). Pool blocking: the reservation binds only the pool it is in.
    if (blocking_ == Blocking::global) reservation_.assign(reservation_.size(), best_time);
    else reservation_[best] = best_time;
  }
  for (PoolId p = 0; p < static_cast<PoolId>(blocked_.size()); ++p) {
    const bool blocks = blocking_ == Blocking::global || std::find(eligible.begin(), eligible.end(), p) != eligible.end();
    if (blocks && !blocked_[p]) {
      blocked_[p] = 1;
      ++blocked_count_;
    }
  }
}

namespace {

// The heuristics' picker: one walk over the priority order per decision point.
class OrderPicker final : public Picker {
 public:
  explicit OrderPicker(std::unique_ptr<PriorityPolicy> priority) : priority_(std::move(priority)) {}

  void begin_run(const DecisionPass& /*pass*/, const sim::Engine& /*engine*/) override { priority_->reset(); }
  std::span<const JobIndex> order(const sim::View& view) override { return priority_->order(view); }

  void decide(DecisionPass& pass) override {
    const sim::View view = pass.view();
    const std::span<const JobIndex> order = priority_->order(view);
    for (std::size_t i = 0; i < order.size() && !pass.closed(); ++i)
      if (!pass.futile(order[i])) pass.offer(order[i], order.subspan(i + 1));
  }

 private:
  std::unique_ptr<PriorityPolicy> priority_;
};

}  // namespace

std::unique_ptr<Picker> make_order_picker(std::unique_ptr<PriorityPolicy> priority) {
  return std::make_unique<OrderPicker>(std::move(priority));
}

}  // namespace rltune::policy
