// Whole-simulation benchmarks on the helios preset with the sample workload: the cost of the engine plus
// a heuristic profile, per full trace (BM_FcfsGreedyHelios*) and per 256-job window (BM_Window256*).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "policy/profile.h"
#include "policy/registry.h"
#include "rl/rl_policy.h"
#include "sim/engine.h"
#include "sim/runtime_fit.h"
#include "sim/runtime_predictor.h"
#include "workload/generator.h"

namespace {

using namespace rltune;

constexpr int kSampleJobs = 20000;
constexpr std::size_t kWindow = 256;

// Built once and shared: loading the preset and generating the trace is not what we measure.
struct Helios {
  cluster::ClusterSpec cluster;
  trace::Trace trace;
};

const Helios& helios() {
  static const Helios h = [] {
    policy::register_builtins();
    Helios x;
    x.cluster = cluster::load_cluster("helios");
    x.trace = workload::generate(workload::load_model("helios"), x.cluster, {.jobs = kSampleJobs, .load = 0.9, .seed = 1});
    return x;
  }();
  return h;
}

// Counts scheduler calls and job starts: the throughput units of the full-trace benchmarks.
class CountingObserver final : public sim::Observer {
 public:
  void on_start(Seconds, JobIndex) override { ++starts; }
  void on_decision(Seconds, double) override { ++decisions; }
  std::size_t starts = 0, decisions = 0;
};

policy::ProfileOptions profile(const std::string& priority, policy::Blocking blocking, bool backfill) {
  policy::ProfileOptions o;
  o.priority = priority;
  o.placement = "greedy";
  o.blocking = blocking;
  o.backfill = backfill;
  return o;
}

// One iteration = one simulation of the whole 20000-job sample.
void run_full_trace(benchmark::State& state, policy::Blocking blocking) {
  const Helios& h = helios();
  auto scheduler = policy::make_profile(profile("fcfs", blocking, /*backfill=*/false));
  std::size_t decisions = 0, starts = 0;
  for (auto _ : state) {
    sim::Engine engine(h.cluster, h.trace.jobs);
    CountingObserver counter;
    engine.add_observer(&counter);
    engine.run(*scheduler);
    decisions += counter.decisions;
    starts += counter.starts;
    benchmark::DoNotOptimize(engine.now());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(decisions));  // items/s = decisions per second
  state.counters["jobs_started"] = benchmark::Counter(static_cast<double>(starts), benchmark::Counter::kIsRate);
}

void BM_FcfsGreedyHelios(benchmark::State& state) { run_full_trace(state, policy::Blocking::global); }
void BM_FcfsGreedyHeliosPoolBlocking(benchmark::State& state) { run_full_trace(state, policy::Blocking::pool); }
BENCHMARK(BM_FcfsGreedyHelios)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FcfsGreedyHeliosPoolBlocking)->Unit(benchmark::kMillisecond);

// The runtime predictor alone: one iteration = every job of the helios-users sample predicted at
// arrival and recorded at its end (in submit order), the engine's work per job under --runtime
// predicted. items/s = jobs per second.
const trace::Trace& users_sample() {
  static const trace::Trace trace = [] {
    const auto cluster = cluster::load_cluster("helios");
    return workload::generate(workload::load_model("helios-users"), cluster, {.jobs = kSampleJobs, .load = 0.95, .seed = 1});
  }();
  return trace;
}

template <typename Predictor>
void predict_every_job(benchmark::State& state, const std::function<Predictor()>& make) {
  const trace::Trace& trace = users_sample();
  std::size_t jobs = 0;
  for (auto _ : state) {
    Predictor predictor = make();
    Seconds sum = 0;
    for (const trace::JobSpec& job : trace.jobs) {
      sum += predictor.predict(job).seconds;
      predictor.record(job, job.duration);
    }
    benchmark::DoNotOptimize(sum);
    jobs += trace.jobs.size();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(jobs));
}

void BM_HistoryPredictor(benchmark::State& state) {
  predict_every_job<sim::HistoryPredictor>(state, [] { return sim::HistoryPredictor(2); });
}
BENCHMARK(BM_HistoryPredictor)->Unit(benchmark::kMillisecond);

// The same with predicted:learned: the history's features, then the fitted trees (fitted once, on the
// sample's first 70%, outside the timing).
void BM_LearnedPredictor(benchmark::State& state) {
  if (!sim::can_fit_runtime_models()) {
    state.SkipWithError("built without XGBoost");
    return;
  }
  static const auto model = sim::with_runtime_model({.runtime = sim::RuntimeKnowledge::learned}, users_sample().jobs, 0.7).runtime_model;
  state.counters["trees"] = static_cast<double>(model->trees());
  predict_every_job<sim::LearnedPredictor>(state, [] { return sim::LearnedPredictor(model); });
}
BENCHMARK(BM_LearnedPredictor)->Unit(benchmark::kMillisecond);

// One iteration = one 256-job window; iterations cycle through the sample's complete windows so the
// reported time is an average over different windows, not one window's best case.
void run_windows(benchmark::State& state, const policy::ProfileOptions& options) {
  const Helios& h = helios();
  const std::span<const trace::JobSpec> jobs = h.trace.jobs;
  const std::size_t windows = jobs.size() / kWindow;
  auto scheduler = policy::make_profile(options);
  std::size_t i = 0;
  for (auto _ : state) {
    sim::Engine engine(h.cluster, jobs.subspan(i * kWindow, kWindow));
    engine.run(*scheduler);
    benchmark::DoNotOptimize(engine.now());
    i = (i + 1) % windows;
  }
}

void BM_Window256(benchmark::State& state) { run_windows(state, profile("fcfs", policy::Blocking::global, false)); }
void BM_Window256Sjf(benchmark::State& state) { run_windows(state, profile("sjf", policy::Blocking::global, false)); }
void BM_Window256F1(benchmark::State& state) { run_windows(state, profile("f1", policy::Blocking::global, false)); }
void BM_Window256Backfill(benchmark::State& state) {
  run_windows(state, profile("fcfs", policy::Blocking::global, /*backfill=*/true));
}
void BM_Window256MilpNodes(benchmark::State& state) {
  auto o = profile("fcfs", policy::Blocking::global, false);
  o.placement = "milp";
  run_windows(state, o);
}
void BM_Window256MilpWays(benchmark::State& state) {
  auto o = profile("fcfs", policy::Blocking::global, false);
  o.placement = "milp";
  o.milp.model = "ways";
  run_windows(state, o);
}
// SJF with each pick drawn (an agent that reconsiders; it reads the estimates, not the features).
void BM_Window256SjfSampled(benchmark::State& state) {
  rl::register_rl_policy();
  run_windows(state, profile("sjf-sampled", policy::Blocking::global, false));
}
// The published RLTune's loop (--semantics reference) with SJF, without and with its backfilling.
void BM_Window256Reference(benchmark::State& state) {
  auto o = profile("sjf", policy::Blocking::global, /*backfill=*/state.range(0) != 0);
  o.semantics = "reference";
  policy::apply_semantics(o);
  run_windows(state, o);
}
BENCHMARK(BM_Window256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Window256Reference)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Window256MilpNodes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Window256MilpWays)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Window256Sjf)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Window256F1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Window256SjfSampled)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Window256Backfill)->Unit(benchmark::kMicrosecond);

// Scale (issue targets): whole simulations where a naive scheduler grows with the square of the queue.
// One iteration each (seconds per run); compare the arguments of one benchmark with each other.
void run_once(benchmark::State& state, const cluster::ClusterSpec& cluster, const std::vector<trace::JobSpec>& jobs,
              const policy::ProfileOptions& options) {
  auto scheduler = policy::make_profile(options);
  for (auto _ : state) {
    sim::Engine engine(cluster, jobs);
    engine.run(*scheduler);
    benchmark::DoNotOptimize(engine.now());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(jobs.size() * state.iterations()));  // jobs per second
}

// A 500-node pool at offered load 4 with 20,000 Philly-like jobs: FCFS (0) against FCFS with EASY
// backfilling (1); the target is backfill within 3x.
void BM_LargePoolLoad4(benchmark::State& state) {
  static const auto cluster =
      cluster::parse_cluster("name: big\npools:\n  - {name: p, gpu_type: V100, nodes: 500, gpus_per_node: 8}\n", "big.yaml");
  static const auto jobs =
      workload::generate(workload::load_model("philly"), cluster, {.jobs = kSampleJobs, .load = 4, .seed = 1}).jobs;
  policy::register_builtins();
  run_once(state, cluster, jobs, profile("fcfs", policy::Blocking::global, state.range(0) == 1));
}
BENCHMARK(BM_LargePoolLoad4)->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kMillisecond);

// Helios-like jobs (args: 20,000 or 50,000) submitted at once: sjf (0) against the time-dependent uni
// (1), wfp (2), multifactor (3), sexp (4) and lexp (5); the target is each within 5x of sjf.
void BM_JobsAtOnce(benchmark::State& state) {
  const auto at_once = [](int jobs) {
    const Helios& h = helios();
    auto all = jobs == kSampleJobs ? h.trace.jobs : workload::generate(workload::load_model("helios"), h.cluster, {.jobs = jobs, .load = 0.9, .seed = 1}).jobs;
    for (auto& j : all) j.submit = 0;
    return all;
  };
  static const std::vector<trace::JobSpec> jobs20k = at_once(kSampleJobs), jobs50k = at_once(50000);
  static const char* const kPriorities[] = {"sjf", "uni", "wfp", "multifactor", "sexp", "lexp"};
  state.SetLabel(kPriorities[state.range(0)]);
  run_once(state, helios().cluster, state.range(1) == kSampleJobs ? jobs20k : jobs50k,
           profile(kPriorities[state.range(0)], policy::Blocking::global, false));
}
BENCHMARK(BM_JobsAtOnce)->ArgsProduct({{0, 1, 2, 3, 4, 5}, {kSampleJobs, 50000}})->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

namespace {

// A Venus-like cluster (two VCs of 20 and 2 nodes x 8 GPUs) with 186,700 Helios-like jobs at offered
// load 1.09, so that one VC's queue is long while the other's head is far behind it in the order:
// args = priority (0 fcfs, 1 sjf), backfill (0/1), blocking (0 global, 1 pool); the target is pool
// blocking within 2x of global blocking for each priority and backfill setting.
void BM_VenusLike(benchmark::State& state) {
  static const auto cluster = cluster::parse_cluster(
      "name: venus-like\npools:\n  - {name: vc0, gpu_type: V100, nodes: 20, gpus_per_node: 8, accepts: {vc: [\"0\"]}}\n"
      "  - {name: vc1, gpu_type: V100, nodes: 2, gpus_per_node: 8, accepts: {vc: [\"1\"]}}\n",
      "venus-like.yaml");
  static const auto jobs = workload::generate(workload::load_model("helios"), cluster, {.jobs = 186700, .load = 1.09, .seed = 3}).jobs;
  policy::register_builtins();
  const char* priority = state.range(0) == 0 ? "fcfs" : "sjf";
  const bool backfill = state.range(1) == 1;
  const auto blocking = state.range(2) == 0 ? policy::Blocking::global : policy::Blocking::pool;
  state.SetLabel(fmt::format("{}{} {}", priority, backfill ? "+backfill" : "", policy::to_string(blocking)));
  run_once(state, cluster, jobs, profile(priority, blocking, backfill));
}
BENCHMARK(BM_VenusLike)->ArgsProduct({{0, 1}, {0, 1}, {0, 1}})->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
