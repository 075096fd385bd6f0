#pragma once
// The discrete-event engine: the only event loop in rltune. It owns the clock, the queue, the running
// jobs and the cluster state; schedulers only read them and ask the engine to start jobs, which it checks.
//
// Semantics (DESIGN.md section 2): at each time t, completions are processed first, then arrivals (in
// trace order), then the scheduler decides. Every arrived job is in the queue. A job that can never run
// is rejected when it arrives, with a reason (or, following the published loop, dropped by the scheduler).
// Time never goes backwards; every job ends exactly once.
#include <cstdint>
#include <memory>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "core/names.h"
#include "core/settings.h"
#include "sim/runtime_model.h"
#include "sim/runtime_predictor.h"
#include "trace/job_spec.h"

namespace rltune::sim {

// Where a scheduler's runtime estimates come from. The simulator always runs jobs for their true duration.
enum class RuntimeKnowledge {
  oracle,     // estimate = true duration (the reference's behaviour)
  requested,  // estimate = the trace's requested time where present, else the true duration
  predicted,  // estimate = a HistoryPredictor's, made when the job arrives from the jobs finished by then
  learned,    // estimate = a RuntimeModel's (fitted trees) over the same history, made when the job arrives
};
// "predicted" names the default predictor; "predicted:NAME" picks one.
inline constexpr NameTable<RuntimeKnowledge, 4> kRuntimeNames{
    "runtime knowledge",
    {{{RuntimeKnowledge::oracle, "oracle"}, {RuntimeKnowledge::requested, "requested"}, {RuntimeKnowledge::predicted, "predicted:history"},
      {RuntimeKnowledge::learned, "predicted:learned"}}}};
// InputError for unknown names, listing the known ones.
RuntimeKnowledge parse_runtime_knowledge(const std::string& name);
inline const char* to_string(RuntimeKnowledge value) { return kRuntimeNames.name(value); }
// Whether estimates come from a predictor over finished jobs' history (either kind).
inline bool is_predicted(RuntimeKnowledge value) { return value == RuntimeKnowledge::predicted || value == RuntimeKnowledge::learned; }

enum class JobState { pending, queued, running, completed, rejected };
inline constexpr NameTable<JobState, 5> kJobStateNames{"job state", {{{JobState::pending, "pending"}, {JobState::queued, "queued"}, {JobState::running, "running"}, {JobState::completed, "completed"}, {JobState::rejected, "rejected"}}}};
inline const char* to_string(JobState value) { return kJobStateNames.name(value); }

struct SimJob {
  const trace::JobSpec* spec = nullptr;
  Seconds estimate = 0;           // runtime estimate seen by schedulers (never the truth unless oracle)
  // The runtime backfilling plans with (reservations, expected ends): the estimate, or under
  // EngineOptions::backfill_on_limits the job's time limit where it has one.
  Seconds plan = 0;
  EstimateSource estimate_source = EstimateSource::none;  // under RuntimeKnowledge::predicted
  // Unless oracle: the user's EstimateDoubt when the job arrived (EstimateDoubt::kUnknown before any).
  float estimate_doubt = 0;
  std::vector<PoolId> eligible;   // pools the job may run in (each large enough for it)
  JobState state = JobState::pending;
  Seconds start = -1, end = -1;   // end = start + true duration once started
  cluster::Placement placement;
  std::string reason;             // rejection reason
};

// What the decision pass reads of a job on every walk over the queue, packed so that a walk over a long
// queue stays in cache (the same values as in SimJob).
struct JobBrief {
  Seconds plan = 0;  // SimJob::plan
  int gpus = 0;
  bool queued = false;
  std::int16_t only_pool = -1;  // the pool, when the job may use exactly one (and pool ids fit); else -1
};

// A running job by its planned end (start + plan), then index: backfill's shadow-time probes
// release a pool's running jobs in this order.
struct RunningEnd {
  Seconds end;
  JobIndex job;
  friend auto operator<=>(const RunningEnd&, const RunningEnd&) = default;
};

// What Engine::start did with a decision.
enum class StartRefusal {
  none,               // started
  no_such_job,        // the index names no job
  not_queued,         // pending, running, completed or rejected
  invalid_placement,  // a pool the job may not use, nodes without the free resources, or the wrong GPU count
};
struct StartOutcome {
  StartRefusal refusal = StartRefusal::none;
  std::string reason;  // for people, when refused
  bool started() const { return refusal == StartRefusal::none; }
};

// Receives what happens, in order. Default implementations ignore the event.
class Observer {
 public:
  virtual ~Observer() = default;
  // Time moves from `from` to `to`; `cluster` is the state that held during [from, to).
  virtual void on_advance(Seconds /*from*/, Seconds /*to*/, const cluster::ClusterState& /*cluster*/) {}
  virtual void on_arrival(Seconds /*t*/, JobIndex /*job*/) {}
  virtual void on_reject(Seconds /*t*/, JobIndex /*job*/) {}
  virtual void on_start(Seconds /*t*/, JobIndex /*job*/) {}
  virtual void on_finish(Seconds /*t*/, JobIndex /*job*/) {}
  // One scheduler call at a decision point and its wall time.
  virtual void on_decision(Seconds /*t*/, double /*wall_us*/) {}
};

class Engine;

// A scheduler profile: called at each decision point; starts zero or more queued jobs via engine.start().
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Called once before the first decision of a run (a scheduler may serve many runs).
  virtual void begin_run(const Engine& /*engine*/) {}
  virtual void decide(Engine& engine) = 0;
  // Whether run() should step as the published RLTune does (Engine::follow_published_loop).
  virtual bool follows_published_loop() const { return false; }
};

// Decides with `warmup` before time `from`, then with `main`. A warm window replays the jobs before it
// with one scheduler, so that every policy compared on the window starts from the same cluster and queue.
class WarmStart final : public Scheduler {
 public:
  WarmStart(Scheduler& warmup, Scheduler& main, Seconds from) : warmup_(warmup), main_(main), from_(from) {}
  void begin_run(const Engine& engine) override {
    warmup_.begin_run(engine);
    main_.begin_run(engine);
  }
  void decide(Engine& engine) override;
  bool follows_published_loop() const override { return main_.follows_published_loop(); }

 private:
  Scheduler& warmup_;
  Scheduler& main_;
  Seconds from_;
};

struct EngineOptions {
  RuntimeKnowledge runtime = RuntimeKnowledge::oracle;
  int predict_last = 2;  // predicted: durations averaged per user key (Tsafrir et al. average the last 2)
  // predicted:learned: the model file to use ("" = fit one on the trace's training split), and the model
  // itself once sim::with_runtime_model has loaded or fitted it (an engine refuses learned without one).
  std::string runtime_model_file{};
  std::shared_ptr<const RuntimeModel> runtime_model{};
  // Backfilling plans with the jobs' time limits (Slurm's backfill does), whatever `runtime` estimates
  // for the priorities; a job without a time limit is planned with its estimate.
  bool backfill_on_limits = false;
  // A live cluster (the Slurm advisor): a job past its time limit is about to be killed, so it is
  // expected to end at once. In a replay it runs on (rltune never kills) and is expected to run as long
  // again as it has (View::expected_end).
  bool killed_at_limit = false;
};
// The numeric engine options, for flags, experiment YAML and config.json.
std::span<const NumberSetting<EngineOptions>> engine_settings();

class Engine {
 public:
  // `jobs` must be sorted by submit time and outlive the engine.
  Engine(const cluster::ClusterSpec& cluster, std::span<const trace::JobSpec> jobs, EngineOptions options = {});

  void add_observer(Observer* observer) { observers_.push_back(observer); }
  void remove_observer(Observer* observer) { std::erase(observers_, observer); }

  // Runs the whole simulation with `scheduler`. Throws InvariantError if the scheduler leaves jobs
  // queued on an idle cluster with nothing left to happen (it would stall forever).
  void run(Scheduler& scheduler);

  // Step interface (run() is built on it): processes events up to the next decision point, i.e. the
  // next time at which the queue is non-empty after completions and arrivals. Returns false when every
  // job has ended.
  bool advance();
  // Makes `t` (> now) a decision point too, unless another event comes first: the next advance() stops
  // at the earlier of the two and forgets the wake either way (a policy that chose to wait).
  void wake_at(Seconds t);
  // Whether anything is still to happen: a running job to end or a job to arrive.
  bool event_pending() const { return !completions_.empty() || next_arrival_ < static_cast<JobIndex>(jobs_.size()); }

  // A live cluster instead of a replay (the Slurm advisor): the clock starts at `now`; every job
  // submitted by then is queued, except the `running` ones, which hold their placements since `start`
  // and end at start + duration (at the earliest now + 1: an overdue job is still running). Call it
  // once, instead of advance(), before anything else; the scheduler may then decide at `now`.
  // InputError when a placement does not fit the cluster or a job is not submitted by `now`.
  struct Running {
    JobIndex job;
    cluster::Placement placement;
    Seconds start;
  };
  void resume(Seconds now, std::span<const Running> running);

  // ---- read-only view for schedulers ----
  Seconds now() const { return now_; }
  std::span<const JobIndex> queue() const { return queue_; }      // arrival order
  std::span<const JobIndex> running() const { return running_; }  // start order
  const SimJob& job(JobIndex j) const { return jobs_[j]; }
  const JobBrief& brief(JobIndex j) const { return briefs_[j]; }

  // Backfilling's indexes cost every arrival and start a little, so the engine keeps them only from the
  // first call of this on (the decision pass calls it when it backfills); the two below need it.
  void keep_backfill_indexes();
  // Steps as the published RLTune does (call it before the first advance; run() does for a scheduler
  // that asks): one event per decision point (the earliest arrival or completion, arrivals first on
  // ties, completions at one time in the order their jobs started); and a job that can never run joins
  // the queue like any other instead of being rejected at arrival, until the scheduler drops it (B9).
  void follow_published_loop();
  // Rejects queued job `j`, one that can never run, now (the published loop's drop); its reason says when.
  void drop(JobIndex j);
  // Pool `pool`'s running jobs by start + plan, then index.
  std::span<const RunningEnd> running_by_planned_end(PoolId pool) const;
  // For each GPU count with a job queued (ascending), the shortest plan among those jobs: what the
  // decision pass needs to tell that no queued job could backfill.
  struct ShortestPlan {
    int gpus;
    Seconds plan;
  };
  std::span<const ShortestPlan> shortest_queued_plans() const;
  std::size_t job_count() const { return jobs_.size(); }
  const cluster::ClusterState& cluster() const { return cluster_; }
  const cluster::ClusterSpec& cluster_spec() const { return cluster_.spec(); }
  const EngineOptions& options() const { return options_; }

  // Starts queued job `j` now with `placement`, or refuses the decision and changes nothing.
  StartOutcome start(JobIndex j, const cluster::Placement& placement);

 private:
  struct PlanHeap {
    int gpus;
    std::size_t queued = 0;  // jobs of this GPU count in the queue
    std::vector<std::pair<Seconds, JobIndex>> heap;
  };
  struct Completion {
    Seconds end;
    std::int64_t order;  // among completions at one time: the job index, or the start count one event at a time
    JobIndex job;
    bool operator>(const Completion& o) const { return end != o.end ? end > o.end : order > o.order; }
  };
  void move_time(Seconds t);
  void finish(JobIndex j);
  void arrive(JobIndex j);
  void predict(SimJob& job);  // sets job.estimate under RuntimeKnowledge::predicted, its doubt and its plan
  void add_running(JobIndex j);
  void index_running(JobIndex j);  // backfill indexes
  void index_queued(JobIndex j);
  PlanHeap& plan_heap(int gpus);

  std::span<const trace::JobSpec> specs_;
  EngineOptions options_;
  cluster::ClusterState cluster_;
  std::vector<SimJob> jobs_;
  std::vector<JobBrief> briefs_;  // by job
  // Per GPU count (ascending), a min-heap of (plan, job) over arrived jobs. Jobs that left the queue
  // stay until they reach the top or outnumber the queued ones, so a start costs nothing here.
  mutable std::vector<PlanHeap> plan_heaps_;
  mutable std::vector<ShortestPlan> shortest_;  // shortest_queued_plans()
  std::vector<Observer*> observers_;
  std::vector<JobIndex> queue_;
  std::vector<JobIndex> running_;
  bool backfill_indexes_ = false;
  bool published_loop_ = false;  // follow_published_loop()
  std::int64_t starts_ = 0;
  std::vector<std::vector<RunningEnd>> running_by_end_;  // per pool, sorted
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  JobIndex next_arrival_ = 0;
  std::size_t ended_ = 0;
  std::optional<HistoryPredictor> predictor_;  // RuntimeKnowledge::predicted
  std::optional<LearnedPredictor> learned_;    // RuntimeKnowledge::learned
  std::optional<EstimateDoubt> doubt_;         // any RuntimeKnowledge but oracle
  Seconds now_ = 0;
  Seconds wake_ = kForever;  // wake_at()
  bool started_ = false;
};

}  // namespace rltune::sim
