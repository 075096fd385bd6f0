#pragma once
// What a scheduler may know, as a read-only view of the engine: the time, the queue, the running jobs
// with their estimated ends, the cluster state, and each job's request and runtime estimate. Priorities,
// pickers, features and the decision pass see the engine only through it. A job's true duration and true
// end are not in it: only the engine and the metrics know them.
#include <span>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "cluster/cluster_state.h"
#include "sim/engine.h"

namespace rltune::sim {

// One job as a scheduler sees it.
class JobView {
 public:
  explicit JobView(const SimJob& job) : job_(&job) {}

  const std::string& id() const { return job_->spec->id; }
  Seconds submit() const { return job_->spec->submit; }
  int gpus() const { return job_->spec->gpus; }
  Seconds recorded_wait() const { return job_->spec->recorded_wait; }  // what the trace says; see JobSpec
  long source_line() const { return job_->spec->source_line; }
  cluster::Request request() const { return cluster::request_of(*job_->spec); }
  const std::vector<PoolId>& eligible() const { return job_->eligible; }
  Seconds estimate() const { return job_->estimate; }
  // The runtime backfilling plans with: the estimate, or the time limit (EngineOptions::backfill_on_limits).
  Seconds plan() const { return job_->plan; }
  EstimateSource estimate_source() const { return job_->estimate_source; }  // under predicted runtimes
  // How far off this user's estimates have been (EstimateDoubt); 0 under oracle runtimes.
  float estimate_doubt() const { return job_->estimate_doubt; }
  JobState state() const { return job_->state; }
  bool queued() const { return job_->state == JobState::queued; }
  // False for a job that can never run here: one the published loop queues until it drops it (B9).
  bool can_run() const { return job_->reason.empty(); }
  // Running jobs: when they started and where.
  Seconds start() const { return job_->start; }
  const cluster::Placement& placement() const { return job_->placement; }

 private:
  const SimJob* job_;
};

class View {
 public:
  explicit View(const Engine& engine) : engine_(&engine) {}

  Seconds now() const { return engine_->now(); }
  std::span<const JobIndex> queue() const { return engine_->queue(); }      // arrival order
  std::span<const JobIndex> running() const { return engine_->running(); }  // start order
  // Pool `pool`'s running jobs by start + estimate, then index. Those at or before now may be overdue:
  // their expected_end() is later and moves with the clock.
  std::span<const RunningEnd> running_by_planned_end(PoolId pool) const { return engine_->running_by_planned_end(pool); }
  JobView job(JobIndex j) const { return JobView(engine_->job(j)); }
  // Whether pool `pool`'s accepts rules admit job `j`, whatever its size (a job that can never run has
  // no eligible pool, yet belongs to the pools that accept it).
  bool accepts(PoolId pool, JobIndex j) const { return cluster::accepts(cluster_spec().pools[pool], *engine_->job(j).spec); }
  std::size_t job_count() const { return engine_->job_count(); }
  const cluster::ClusterState& cluster() const { return engine_->cluster(); }
  const cluster::ClusterSpec& cluster_spec() const { return engine_->cluster_spec(); }
  // Whether anything is still to happen: a running job to end or a job to arrive.
  bool event_pending() const { return engine_->event_pending(); }
  // When running job `j` should end, as a scheduler can expect it now: start + plan (its estimate, or its
  // time limit under --backfill-limits) while that is ahead. A job still running at or after that outlived its plan (completions at `now` come
  // before decisions; a job started now may end now). It is not killed; it is then expected at its
  // time limit while that is ahead (Tsafrir, Etsion and Feitelson's prediction correction), else after
  // running as long again as it has so far. Backfilling re-plans with that new estimate. (Expected at
  // once past its limit, as if killed there, a job that runs on would hold every reservation at `now`
  // and stop backfilling for as long as it overruns.) On a live cluster that kills it there
  // (EngineOptions::killed_at_limit), it is expected at once.
  Seconds expected_end(JobIndex j) const {
    const SimJob& job = engine_->job(j);
    const Seconds now = engine_->now(), end = job.start + job.plan, limit = job.spec->requested_time;
    if (end > now || job.start == now) return std::max(end, now);
    if (limit > 0 && (job.start + limit > now || engine_->options().killed_at_limit)) return std::max(job.start + limit, now);
    return now + (now - job.start);
  }

 private:
  const Engine* engine_;
};

// The jobs of `queue` (in arrival order) with an index above `last_seen`, which becomes the highest index
// seen: the jobs queued since the last call, found at the queue's tail since jobs arrive in index order.
inline std::span<const JobIndex> arrived_since(std::span<const JobIndex> queue, JobIndex& last_seen) {
  std::size_t first = queue.size();
  while (first > 0 && queue[first - 1] > last_seen) --first;
  if (!queue.empty() && queue.back() > last_seen) last_seen = queue.back();
  return queue.subspan(first);
}

}  // namespace rltune::sim
