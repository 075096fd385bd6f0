#include "policy/decision_pass.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "policy/priority/priority.h"

namespace rltune::policy {

Seconds shadow_time(const sim::View& view, JobIndex job, PoolId pool, const PlacementPolicy& placement, bool as_written) {
  // The pool's running jobs are released in order of expected end until the job fits; that end is the
  // answer (releases only add room, so how jobs that end together are ordered cannot change it). The
  // engine keeps them ordered by start + plan, which is the expected end of every job that ends
  // after now; the few at or before now (overdue, or started now with no estimate) are re-ordered by
  // their expected end and merged in. So a probe costs the releases it makes, not the pool's running jobs.
  const std::span<const sim::RunningEnd> by_end = view.running_by_planned_end(pool);
  const Seconds now = view.now();
  std::size_t next_on_time = 0;
  std::vector<sim::RunningEnd> due;
  for (; !as_written && next_on_time < by_end.size() && by_end[next_on_time].end <= now; ++next_on_time) {
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
  if (all_pools_.size() != pools) {
    all_pools_.resize(pools);
    for (std::size_t p = 0; p < pools; ++p) all_pools_[p] = static_cast<PoolId>(p);
  }
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
  const Seconds end = engine_->now() + job.plan();
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
  if (all_blocked(job.eligible())) return Outcome::not_now;
  block(j);
  return Outcome::blocked;
}

bool DecisionPass::try_start(JobIndex j) {
  const sim::JobView job = view().job(j);
  RLTUNE_CHECK(job.queued(), fmt::format("job {} is tried while {}", job.id(), to_string(job.state())));
  pools_.assign(job.eligible().begin(), job.eligible().end());
  return start_in(j, {});
}

bool DecisionPass::may_offer(JobIndex j) const {
  const sim::JobView job = view().job(j);
  const Seconds end = engine_->now() + job.plan();
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
  if (blocked_count_ == 0) return false;
  const bool all = blocked_count_ == blocked_.size();
  if (all && !backfill_) return true;
  const Seconds end = engine_->now() + job.plan;
  if (all && (end > bounds().latest_reservation || job.gpus > bounds().most_free)) return true;  // cheap, often enough
  // Futile when every pool it may use is blocked and, with backfilling, none would take it now: a
  // pool whose reservation it would delay, or without its GPUs free.
  const cluster::ClusterState& cluster = engine_->cluster();
  const auto may_backfill = [&](PoolId p) { return end <= reservation_[p] && job.gpus <= cluster.pool_free_total(p); };
  if (job.only_pool >= 0) return blocked_[job.only_pool] && (!backfill_ || !may_backfill(job.only_pool));
  const auto& eligible = view().job(j).eligible();  // jobs of several pools: a longer read
  if (!all_blocked(eligible)) return false;
  return !backfill_ || std::none_of(eligible.begin(), eligible.end(), may_backfill);
}

const DecisionPass::Bounds& DecisionPass::bounds() const {
  if (!bounds_valid_) bounds_ = bounds_over(all_pools_);
  bounds_valid_ = true;
  return bounds_;
}

DecisionPass::Bounds DecisionPass::bounds_over(std::span<const PoolId> pools) const {
  const cluster::ClusterState& cluster = engine_->cluster();
  Bounds b;
  b.latest_reservation = std::numeric_limits<Seconds>::lowest();
  for (const PoolId p : pools) {
    b.latest_reservation = std::max(b.latest_reservation, reservation_[p]);
    b.most_free = std::max(b.most_free, cluster.pool_free_total(p));
  }
  // Some GPU count of the queue must have a job that would end in time and a pool that could hold that
  // many GPUs now: by the placement's own rule where only GPUs count (a looser test lets a pass walk the
  // whole queue for a backfill that cannot happen); where CPUs or memory may bind, by the pool's free total.
  const auto could_hold = [&](int gpus) {
    for (const PoolId p : pools) {
      const cluster::PoolSpec& pool = cluster.spec().pools[p];
      const PoolId only[] = {p};
      if (cluster::tracks_cpus_or_memory(pool) ? cluster.freest_nodes_hold(p, pool.nodes, gpus)
                                               : placement_->feasibility(cluster, cluster::Request(gpus), only) == PlaceStatus::placed)
        return true;
    }
    return false;
  };
  b.backfill_possible = false;
  for (const auto& [gpus, shortest] : engine_->shortest_queued_plans()) {
    if (gpus > b.most_free) break;
    if (engine_->now() + shortest <= b.latest_reservation && could_hold(gpus)) {
      b.backfill_possible = true;
      break;
    }
  }
  return b;
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

void PublishedBackfill::round(DecisionPass& pass, JobIndex head, const std::function<std::span<const JobIndex>()>& order,
                              bool for_agent) {
  const sim::View view = pass.view();
  const cluster::ClusterSpec& cluster = view.cluster_spec();
  const bool every_pool = for_agent && cluster.reference_agent_backfills_every_pool;
  const auto may_backfill = [&](JobIndex j) {
    if (every_pool) return true;
    for (PoolId p = 0; p < static_cast<PoolId>(cluster.pools.size()); ++p)
      if (view.accepts(p, head) && view.accepts(p, j)) return true;
    return false;
  };
  if (candidates_.empty()) {  // the head waits for the first time
    shadow_ = kForever;
    for (const PoolId p : view.job(head).eligible()) shadow_ = std::min(shadow_, shadow_time(view, head, p, pass.placement(), true));
    for (const JobIndex j : order())
      if (view.job(j).queued() && may_backfill(j)) candidates_.push_back(j);
    std::stable_sort(candidates_.begin(), candidates_.end(), [&](JobIndex a, JobIndex b) { return view.job(a).submit() < view.job(b).submit(); });
    last_seen_ = -1;
    sim::arrived_since(view.queue(), last_seen_);  // those are in already
  } else {
    for (const JobIndex j : sim::arrived_since(view.queue(), last_seen_))  // later arrivals go last, as appended
      if (may_backfill(j)) candidates_.push_back(j);
  }
  bool skip = false;
  for (const JobIndex j : candidates_) {
    if (!view.job(j).queued()) continue;
    if (skip) {  // the published Helios loops never try the job after one they started
      skip = false;
      continue;
    }
    if (view.now() + view.job(j).plan() < shadow_ && pass.try_start(j)) skip = cluster.reference_backfill_skips_after_start;
  }
}

namespace {

// The heuristics' picker: one walk over the priority order per decision point.
//
// Under pool blocking, pools that no job may share form independent groups: a start or a block in one
// group never changes what another may do, so the jobs of each group are walked on their own, in
// their priority order, and a group's walk stops once the group is closed. A long queue held up in
// one group then costs the others nothing, and the jobs started are the same as in one walk over the
// whole order. Look-ahead placements see the jobs behind in the whole order, so with them, as under
// global blocking, there is one walk.
class OrderPicker final : public Picker {
 public:
  OrderPicker(std::function<std::unique_ptr<PriorityPolicy>()> make_priority, bool by_pool_group)
      : make_priority_(std::move(make_priority)), priority_(make_priority_()), by_pool_group_(by_pool_group) {}

  void begin_run(const DecisionPass& pass, const sim::Engine& engine) override {
    priority_->reset();
    groups_.clear();
    last_seen_ = -1;
    if (by_pool_group_ && pass.blocking() == Blocking::pool && pass.placement().lookahead() == 0) split_into_groups(engine);
  }
  std::span<const JobIndex> order(const sim::View& view) override { return priority_->order(view); }

  void decide(DecisionPass& pass) override {
    const sim::View view = pass.view();
    if (groups_.empty()) {
      walk(pass, *priority_, view.queue(), nullptr);
      return;
    }
    take_arrivals(view);
    for (Group& g : groups_) {
      if (pass.closed()) break;
      walk(pass, *g.priority, g.queue, &g);
      if (g.started > g.queue.size() / 2) {
        std::erase_if(g.queue, [&](JobIndex j) { return !view.job(j).queued(); });
        g.started = 0;
      }
    }
  }

 private:
  struct Group {
    std::vector<PoolId> pools;
    std::unique_ptr<PriorityPolicy> priority;  // orders this group's queue only
    std::vector<JobIndex> queue;               // arrival order; may hold jobs that started
    std::size_t started = 0;                   // of those, started since the queue was last compacted
  };

  // Walks the order of `queue` until the pass (or the group) is closed. A walk usually stops early, so
  // it asks for the order a prefix at a time (doubling); look-ahead placements read the whole order.
  void walk(DecisionPass& pass, PriorityPolicy& priority, std::span<const JobIndex> queue, Group* group) {
    const sim::View view = pass.view();
    std::size_t asked = pass.placement().lookahead() > 0 ? std::numeric_limits<std::size_t>::max() : kFirstAsk;
    std::span<const JobIndex> order = priority.prefix(view, queue, asked);
    bool group_closed = group && pass.closed(group->pools);
    for (std::size_t i = 0; !group_closed && !pass.closed(); ++i) {
      if (i == order.size() && order.size() >= asked) order = priority.prefix(view, queue, asked = 2 * order.size());
      if (i == order.size()) break;
      if (pass.futile(order[i])) continue;
      const Outcome outcome = pass.offer(order[i], order.subspan(i + 1));
      if (!group || outcome == Outcome::not_now) continue;
      if (outcome == Outcome::started) ++group->started;
      group_closed = pass.closed(group->pools);
    }
  }

  // Pools joined by some job eligible for both (union-find); a group per set, by lowest pool id.
  void split_into_groups(const sim::Engine& engine) {
    const std::size_t pools = engine.cluster_spec().pools.size();
    std::vector<PoolId> parent(pools);
    for (std::size_t p = 0; p < pools; ++p) parent[p] = static_cast<PoolId>(p);
    const auto root = [&](PoolId p) {
      while (parent[p] != p) p = parent[p] = parent[parent[p]];
      return p;
    };
    const sim::View view(engine);
    for (JobIndex j = 0; j < static_cast<JobIndex>(view.job_count()); ++j) {
      const auto& eligible = view.job(j).eligible();
      for (const PoolId p : eligible) parent[root(p)] = root(eligible.front());
    }
    std::vector<int> group_of_root(pools, -1);
    group_of_pool_.assign(pools, -1);
    for (std::size_t p = 0; p < pools; ++p) {
      int& g = group_of_root[root(static_cast<PoolId>(p))];
      if (g < 0) {
        g = static_cast<int>(groups_.size());
        groups_.push_back({{}, make_priority_(), {}, 0});
      }
      groups_[g].pools.push_back(static_cast<PoolId>(p));
      group_of_pool_[p] = g;
    }
    if (groups_.size() < 2) groups_.clear();
  }

  // New arrivals join their group's queue.
  void take_arrivals(const sim::View& view) {
    for (const JobIndex j : sim::arrived_since(view.queue(), last_seen_))
      groups_[group_of_pool_[view.job(j).eligible().front()]].queue.push_back(j);
  }

  static constexpr std::size_t kFirstAsk = 16;

  std::function<std::unique_ptr<PriorityPolicy>()> make_priority_;
  std::unique_ptr<PriorityPolicy> priority_;  // the whole queue's order
  bool by_pool_group_;
  std::vector<Group> groups_;                 // empty: one walk over the whole order
  std::vector<int> group_of_pool_;
  JobIndex last_seen_ = -1;  // highest job index already in a group's queue
};

class HeadPicker final : public Picker {
 public:
  explicit HeadPicker(std::unique_ptr<PriorityPolicy> priority) : priority_(std::move(priority)) {}

  void begin_run(const DecisionPass&, const sim::Engine&) override {
    priority_->reset();
    head_ = -1;
    backfill_.forget();
  }
  std::span<const JobIndex> order(const sim::View& view) override { return priority_->order(view); }

  // The engine steps one event at a time (it follows the published loop), so the queue holds what the
  // published one would have admitted: one arrival when it ran dry, every arrival while a head waits.
  void decide(DecisionPass& pass) override {
    const sim::View view = pass.view();
    for (;;) {
      if (head_ < 0 || !view.job(head_).queued()) {
        head_ = best(view);
        backfill_.forget();
        if (head_ < 0) return;
      }
      if (pass.try_start(head_)) continue;  // nothing else is offered while it waits: no pool to close
      if (view.job(head_).can_run()) {
        if (pass.backfill()) backfill_.round(pass, head_, [&] { return priority_->order(view); }, false);
        return;
      }
      // A head that can never run is waited for until nothing runs, then dropped (B9); the published
      // loop with backfilling would stop on an assertion there instead.
      if (!view.running().empty()) return;
      pass.drop(head_);
    }
  }

 private:
  JobIndex best(const sim::View& view) {
    for (const JobIndex j : priority_->order(view))
      if (view.job(j).queued()) return j;
    return -1;
  }

  std::unique_ptr<PriorityPolicy> priority_;
  JobIndex head_ = -1;  // the job waited for
  PublishedBackfill backfill_;
};

}  // namespace

std::unique_ptr<Picker> make_head_picker(std::function<std::unique_ptr<PriorityPolicy>()> make_priority) {
  return std::make_unique<HeadPicker>(make_priority());
}

std::unique_ptr<Picker> make_order_picker(std::function<std::unique_ptr<PriorityPolicy>()> make_priority, bool by_pool_group) {
  return std::make_unique<OrderPicker>(std::move(make_priority), by_pool_group);
}

}  // namespace rltune::policy
