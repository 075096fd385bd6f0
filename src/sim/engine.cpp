#include "sim/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>

#include "core/error.h"

namespace rltune::sim {

RuntimeKnowledge parse_runtime_knowledge(const std::string& name) {
  return kRuntimeNames.parse(name == "predicted" ? "predicted:history" : name);
}

std::span<const NumberSetting<EngineOptions>> engine_settings() {
  static const NumberSetting<EngineOptions> settings[] = {
      {"--predict-last", "predict_last", "predicted runtimes: finished jobs of the same user averaged", 1, 1000,
       &EngineOptions::predict_last},
  };
  return settings;
}

Engine::Engine(const cluster::ClusterSpec& cluster, std::span<const trace::JobSpec> jobs, EngineOptions options)
    : specs_(jobs), options_(options), cluster_(cluster), jobs_(jobs.size()), briefs_(jobs.size()) {
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& spec = jobs[i];
    if (i > 0 && spec.submit < jobs[i - 1].submit)
      throw InvariantError("engine: jobs must be sorted by submit time");
    SimJob& job = jobs_[i];
    job.spec = &spec;
    job.estimate = spec.duration;
    if (options_.runtime == RuntimeKnowledge::requested && spec.requested_time > 0) job.estimate = spec.requested_time;
    job.reason = cluster::admission_problem(cluster, spec, job.eligible);
  }
  if (options_.runtime == RuntimeKnowledge::predicted) {
    check_bounds(options_, engine_settings(), "engine");
    predictor_.emplace(options_.predict_last);
  }
  if (options_.runtime == RuntimeKnowledge::learned) learned_.emplace(options_.runtime_model);
  if (is_predicted(options_.runtime))
    for (SimJob& job : jobs_) job.estimate = 0;  // unknown until the job arrives
  if (options_.runtime != RuntimeKnowledge::oracle) doubt_.emplace();
  queue_.reserve(jobs.size());
}

void Engine::move_time(Seconds t) {
  RLTUNE_CHECK(t >= now_, fmt::format("time would go back from {} to {}", now_, t));
  if (t != now_)
    for (auto* o : observers_) o->on_advance(now_, t, cluster_);
  now_ = t;
}

void Engine::finish(JobIndex j) {
  SimJob& job = jobs_[j];
  RLTUNE_CHECK(job.state == JobState::running, fmt::format("job {} finishes while {}", job.spec->id, to_string(job.state)));
  cluster_.release(job.placement);
  running_.erase(std::find(running_.begin(), running_.end(), j));
  if (backfill_indexes_) {
    auto& ends = running_by_end_[job.placement.pool];
    ends.erase(std::lower_bound(ends.begin(), ends.end(), RunningEnd{job.start + job.plan, j}));
  }
  job.state = JobState::completed;
  ++ended_;
  if (predictor_) predictor_->record(*job.spec, job.end - job.start);
  if (learned_) learned_->record(*job.spec, job.end - job.start);
  if (doubt_) doubt_->record(*job.spec, job.estimate, job.end - job.start);
  for (auto* o : observers_) o->on_finish(now_, j);
}

void Engine::follow_published_loop() {
  RLTUNE_CHECK(!started_, "follow_published_loop() comes before the engine has run");
  published_loop_ = true;
}

void Engine::drop(JobIndex j) {
  SimJob& job = jobs_[j];
  RLTUNE_CHECK(published_loop_ && job.state == JobState::queued && !job.reason.empty(),
               fmt::format("job {} is dropped, but only a queued job that can never run may be", job.spec->id));
  job.state = JobState::rejected;
  job.reason += fmt::format(" (dropped at t={}: it led the queue and nothing was running, as in the published loop)", now_);
  queue_.erase(std::find(queue_.begin(), queue_.end(), j));
  briefs_[j].queued = false;
  if (backfill_indexes_) --plan_heap(job.spec->gpus).queued;
  ++ended_;
  for (auto* o : observers_) o->on_reject(now_, j);
}

void Engine::arrive(JobIndex j) {
  SimJob& job = jobs_[j];
  for (auto* o : observers_) o->on_arrival(now_, j);
  if (!job.reason.empty() && !published_loop_) {
    job.state = JobState::rejected;
    ++ended_;
    for (auto* o : observers_) o->on_reject(now_, j);
    return;
  }
  job.state = JobState::queued;
  queue_.push_back(j);
  predict(job);
  const bool one_pool = job.eligible.size() == 1 && job.eligible.front() <= std::numeric_limits<std::int16_t>::max();
  briefs_[j] = {job.plan, job.spec->gpus, true, static_cast<std::int16_t>(one_pool ? job.eligible.front() : -1)};
  if (backfill_indexes_) index_queued(j);
}

void Engine::keep_backfill_indexes() {
  if (backfill_indexes_) return;
  backfill_indexes_ = true;
  running_by_end_.assign(cluster_.spec().pools.size(), {});
  for (const JobIndex j : running_) index_running(j);
  for (const JobIndex j : queue_) index_queued(j);
}

void Engine::index_queued(JobIndex j) {
  PlanHeap& shape = plan_heap(briefs_[j].gpus);
  ++shape.queued;
  if (shape.heap.size() > 2 * shape.queued + 16) {
    std::erase_if(shape.heap, [&](const auto& e) { return !briefs_[e.second].queued; });
    std::make_heap(shape.heap.begin(), shape.heap.end(), std::greater<>());
  }
  shape.heap.emplace_back(briefs_[j].plan, j);
  std::push_heap(shape.heap.begin(), shape.heap.end(), std::greater<>());
}

void Engine::index_running(JobIndex j) {
  const SimJob& job = jobs_[j];
  auto& ends = running_by_end_[job.placement.pool];
  const RunningEnd entry{job.start + job.plan, j};
  ends.insert(std::upper_bound(ends.begin(), ends.end(), entry), entry);
}

std::span<const RunningEnd> Engine::running_by_planned_end(PoolId pool) const {
  RLTUNE_CHECK(backfill_indexes_, "running_by_planned_end() needs keep_backfill_indexes()");
  return running_by_end_[pool];
}

void Engine::predict(SimJob& job) {
  if (doubt_) job.estimate_doubt = doubt_->of(*job.spec);
  if (predictor_ || learned_) {
    const HistoryPredictor::Estimate e = predictor_ ? predictor_->predict(*job.spec) : learned_->predict(*job.spec);
    job.estimate = e.seconds;
    job.estimate_source = e.source;
  }
  job.plan = options_.backfill_on_limits && job.spec->requested_time > 0 ? job.spec->requested_time : job.estimate;
}

std::span<const Engine::ShortestPlan> Engine::shortest_queued_plans() const {
  RLTUNE_CHECK(backfill_indexes_, "shortest_queued_plans() needs keep_backfill_indexes()");
  shortest_.clear();
  for (PlanHeap& shape : plan_heaps_) {
    auto& heap = shape.heap;
    while (!heap.empty() && !briefs_[heap.front().second].queued) {
      std::pop_heap(heap.begin(), heap.end(), std::greater<>());
      heap.pop_back();
    }
    if (!heap.empty()) shortest_.push_back({shape.gpus, heap.front().first});
  }
  return shortest_;
}

Engine::PlanHeap& Engine::plan_heap(int gpus) {
  auto at = std::lower_bound(plan_heaps_.begin(), plan_heaps_.end(), gpus, [](const PlanHeap& h, int g) { return h.gpus < g; });
  if (at == plan_heaps_.end() || at->gpus != gpus) at = plan_heaps_.insert(at, {gpus, 0, {}});
  return *at;
}

void Engine::add_running(JobIndex j) {
  running_.push_back(j);
  if (backfill_indexes_) index_running(j);
}

void Engine::wake_at(Seconds t) {
  RLTUNE_CHECK(t > now_, fmt::format("a wake at {} is not after now ({})", t, now_));
  wake_ = t;
}

bool Engine::advance() {
  const auto n = static_cast<JobIndex>(jobs_.size());
  if (!started_) {
    started_ = true;
    if (n > 0) now_ = specs_[0].submit;
  }
  while (true) {
    const Seconds next_completion = completions_.empty() ? kForever : completions_.top().end;
    const Seconds next_arrival = next_arrival_ < n ? specs_[next_arrival_].submit : kForever;
    const Seconds t = std::min({next_completion, next_arrival, wake_});
    wake_ = kForever;
    if (t == kForever) {
      RLTUNE_CHECK(queue_.empty(), fmt::format("{} jobs are queued on an idle cluster with nothing left to happen at t={}",
                                               queue_.size(), now_));
      RLTUNE_CHECK(ended_ == jobs_.size() && running_.empty(), "every job ends exactly once");
      RLTUNE_CHECK(cluster_.free_total() == cluster_.spec().total_gpus(), "all GPUs are free at the end");
      return false;
    }
    move_time(t);
    if (published_loop_) {
      if (next_arrival == t) {
        arrive(next_arrival_++);
      } else if (next_completion == t) {
        const JobIndex j = completions_.top().job;
        completions_.pop();
        finish(j);
      }
      if (!queue_.empty()) return true;
      continue;
    }
    while (!completions_.empty() && completions_.top().end == t) {
      const JobIndex j = completions_.top().job;
      completions_.pop();
      finish(j);
    }
    while (next_arrival_ < n && specs_[next_arrival_].submit == t) arrive(next_arrival_++);
    if (!queue_.empty()) return true;
  }
}

namespace {

// The placement as the engine records it: the job's own CPUs and memory go with its GPUs.
cluster::Placement with_request(const cluster::Placement& placement, const trace::JobSpec& spec) {
  cluster::Placement p = placement;
  const cluster::Request r = cluster::request_of(spec);
  p.cpus = r.cpus;
  p.memory_mib = r.memory_mib;
  return p;
}

}  // namespace

StartOutcome Engine::start(JobIndex j, const cluster::Placement& placement) {
  if (j < 0 || j >= static_cast<JobIndex>(jobs_.size()))
    return {StartRefusal::no_such_job, fmt::format("job index {} does not exist", j)};
  SimJob& job = jobs_[j];
  if (job.state != JobState::queued)
    return {StartRefusal::not_queued, fmt::format("job {} is {}, not queued", job.spec->id, to_string(job.state))};
  std::string problem = cluster_.validate(placement, cluster::request_of(*job.spec), job.eligible);
  if (!problem.empty()) return {StartRefusal::invalid_placement, fmt::format("job {}: {}", job.spec->id, problem)};
  job.placement = with_request(placement, *job.spec);
  cluster_.allocate(job.placement);
  job.state = JobState::running;
  job.start = now_;
  job.end = now_ + job.spec->duration;
  queue_.erase(std::find(queue_.begin(), queue_.end(), j));
  briefs_[j].queued = false;
  if (backfill_indexes_) --plan_heap(job.spec->gpus).queued;
  add_running(j);
  completions_.push({job.end, published_loop_ ? starts_++ : j, j});
  for (auto* o : observers_) o->on_start(now_, j);
  return {};
}

void Engine::resume(Seconds now, std::span<const Running> running) {
  RLTUNE_CHECK(!started_, "resume() comes before the engine has run");
  started_ = true;
  now_ = now;
  for (const Running& r : running) {
    RLTUNE_CHECK(r.job >= 0 && r.job < static_cast<JobIndex>(jobs_.size()), "resume: job index out of range");
    SimJob& job = jobs_[r.job];
    if (job.spec->submit > now || r.start > now)
      throw InputError(fmt::format("job {}: running but submitted or started after now ({})", job.spec->id, now));
    if (job.state != JobState::pending) throw InputError(fmt::format("job {}: listed as running twice", job.spec->id));
    const std::vector<PoolId> pools{r.placement.pool};
    const std::string problem = cluster_.validate(r.placement, cluster::request_of(*job.spec), pools);
    if (!problem.empty()) throw InputError(fmt::format("running job {}: {}", job.spec->id, problem));
    job.placement = with_request(r.placement, *job.spec);
    cluster_.allocate(job.placement);
    predict(job);
    job.state = JobState::running;
    job.start = r.start;
    job.end = std::max(now + 1, r.start + job.spec->duration);
    add_running(r.job);
    completions_.push({job.end, r.job, r.job});
  }
  const auto n = static_cast<JobIndex>(jobs_.size());
  while (next_arrival_ < n && specs_[next_arrival_].submit <= now) {
    if (jobs_[next_arrival_].state != JobState::running) arrive(next_arrival_);
    ++next_arrival_;
  }
}

void WarmStart::decide(Engine& engine) { (engine.now() < from_ ? warmup_ : main_).decide(engine); }

void Engine::run(Scheduler& scheduler) {
  using Clock = std::chrono::steady_clock;
  if (scheduler.follows_published_loop()) follow_published_loop();
  scheduler.begin_run(*this);
  while (advance()) {
    const auto begin = Clock::now();
    scheduler.decide(*this);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - begin).count();
    for (auto* o : observers_) o->on_decision(now_, us);
  }
}

}  // namespace rltune::sim
