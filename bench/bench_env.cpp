// RL environment throughput: decisions per second of full 256-job episodes on the helios preset with an
// agent that always takes slot 0 (so the cost is the environment's: observation, placement, the
// baseline run at reset), one thread.
#include <benchmark/benchmark.h>

#include "policy/registry.h"
#include "rl/env.h"
#include "workload/generator.h"

namespace {

using namespace rltune;

void BM_EnvEpisode256(benchmark::State& state) {
  policy::register_builtins();
  const auto cluster = cluster::load_cluster("helios");
  const auto trace = workload::generate(workload::load_model("helios"), cluster, {.jobs = 20000, .load = 0.9, .seed = 1});
  rl::Env env(cluster, trace.jobs, {});
  Rng rng(1);
  std::size_t decisions = 0;
  for (auto _ : state) {
    env.reset(rng, rl::Split::train);
    for (bool done = false; !done; ++decisions) done = env.step(0).done;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(decisions));  // items/s = agent decisions per second
}
BENCHMARK(BM_EnvEpisode256)->Unit(benchmark::kMillisecond);

void BM_Observe(benchmark::State& state) {
  policy::register_builtins();
  const auto cluster = cluster::load_cluster("helios");
  const auto trace = workload::generate(workload::load_model("helios"), cluster, {.jobs = 20000, .load = 0.9, .seed = 1});
  rl::Env env(cluster, trace.jobs, {});
  env.reset_at(1000);
  for (int i = 0; i < 100; ++i) env.step(0);  // a queue that has built up
  const auto order = policy::make_priority("fcfs", {});
  rl::Observation o;
  for (auto _ : state) {
    rl::observe(env.engine(), order->order(env.engine()), o);
    benchmark::DoNotOptimize(o.values.data());
  }
  state.counters["visible"] = o.visible;
}
BENCHMARK(BM_Observe)->Unit(benchmark::kMicrosecond);

}  // namespace
