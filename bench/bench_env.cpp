// RL environment throughput: decisions per second of full 256-job episodes on the helios preset with an
// agent that always takes slot 0 (so the cost is the environment's: observation, placement, the
// baseline run at reset), one thread.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>
#include <thread>

#include "policy/registry.h"
#include "rl/env.h"
#include "rl/rollout.h"
#include "workload/generator.h"

namespace {

using namespace rltune;

// The helios preset and a generated Helios-like workload of 20,000 jobs at offered load 0.9, built once.
struct Helios {
  cluster::ClusterSpec cluster = cluster::load_cluster("helios");
  trace::Trace trace;
  Helios() {
    policy::register_builtins();
    trace = workload::generate(workload::load_model("helios"), cluster, {.jobs = 20000, .load = 0.9, .seed = 1});
  }
};
const Helios& helios() {
  static const Helios h;
  return h;
}

// The paper's MLP (or the attention net) with random weights scaled like Glorot's.
rl::PolicyNet random_net(rl::Arch arch) {
  rl::PolicyNet net = rl::PolicyNet::shaped(arch, rl::kFeatures);
  Rng rng(1);
  for (rl::Dense& d : net.layers)
    for (float& w : d.weight) w = static_cast<float>((2 * rng.uniform() - 1) / std::sqrt(d.in));
  return net;
}

void BM_EnvEpisode256(benchmark::State& state) {
  const auto& [cluster, trace] = helios();
  rl::Env env(cluster, trace.jobs, {});
  Rng rng(1);
  std::size_t decisions = 0;
  for (auto _ : state) {
    env.reset(rng, sim::Split::train);
    for (bool done = false; !done; ++decisions) done = env.step(0).done;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(decisions));  // items/s = agent decisions per second
}
BENCHMARK(BM_EnvEpisode256)->Unit(benchmark::kMillisecond);

// The realistic regime: pool blocking, EASY backfilling, predicted runtimes and 1,000 warm-up jobs per
// episode (replayed by fcfs for the agent and for the baseline) on the helios-users workload at load
// 0.95. items/s = agent decisions per second, warm-up included in the time.
void BM_EnvEpisodeRealistic(benchmark::State& state) {
  static const trace::Trace trace = [] {
    return workload::generate(workload::load_model("helios-users"), helios().cluster, {.jobs = 20000, .load = 0.95, .seed = 1});
  }();
  rl::EnvOptions o;
  o.window.warmup = 1000;
  o.profile.blocking = policy::Blocking::pool;
  o.profile.backfill = true;
  o.engine.runtime = sim::RuntimeKnowledge::predicted;
  o.commit = false;
  rl::Env env(helios().cluster, trace.jobs, o);
  Rng rng(1);
  std::size_t decisions = 0;
  for (auto _ : state) {
    env.reset(rng, sim::Split::train);
    for (bool done = false; !done; ++decisions) {
      const rl::Observation& obs = env.observation();
      int first = 0;
      while (first < obs.visible && !obs.mask[static_cast<std::size_t>(first)]) ++first;
      done = env.step(first).done;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(decisions));
}
BENCHMARK(BM_EnvEpisodeRealistic)->Unit(benchmark::kMillisecond);

void BM_Observe(benchmark::State& state) {
  const auto& [cluster, trace] = helios();
  rl::Env env(cluster, trace.jobs, {});
  env.reset_at(1000);
  for (int i = 0; i < 100; ++i) env.step(0);  // a queue that has built up
  const auto order = policy::make_priority("fcfs", {});
  rl::Observation o;
  for (auto _ : state) {
    const sim::View view(env.engine());
    rl::observe(view, order->order(view), o);
    benchmark::DoNotOptimize(o.values.data());
  }
  state.counters["visible"] = o.visible;
}
BENCHMARK(BM_Observe)->Unit(benchmark::kMicrosecond);

// Policy inference on the hot path: the torch-free forward pass over a loaded queue (paper features, MLP
// and attention), Glorot-like random weights.
void BM_PolicyLogits(benchmark::State& state) {
  const auto& [cluster, trace] = helios();
  rl::Env env(cluster, trace.jobs, {});
  env.reset_at(1000);
  for (int i = 0; i < 100; ++i) env.step(0);
  const rl::PolicyNet net = random_net(state.range(0) == 0 ? rl::Arch::mlp : rl::Arch::attention);
  std::array<float, rl::kActions> logits;
  for (auto _ : state) {
    net.logits(env.observation(), logits);
    benchmark::DoNotOptimize(logits.data());
  }
  state.counters["visible"] = env.observation().visible;
}
BENCHMARK(BM_PolicyLogits)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Rollouts as training plays them: sampled actions from the policy, whole 256-job episodes, one
// environment per thread (state.range(0) threads); items/s = decisions per second over all threads.
void BM_Rollouts(benchmark::State& state) {
  const auto& [cluster, trace] = helios();
  const int threads = static_cast<int>(state.range(0));
  std::vector<std::unique_ptr<rl::Env>> envs;
  for (int t = 0; t < threads; ++t) envs.push_back(std::make_unique<rl::Env>(cluster, trace.jobs, rl::EnvOptions{}));
  const rl::PolicyNet net = random_net(rl::Arch::mlp);
  std::size_t decisions = 0;
  for (auto _ : state) {
    std::vector<std::size_t> counts(static_cast<std::size_t>(threads));
    {
      std::vector<std::jthread> pool;
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          for (int k = 0; k < 4; ++k) {
            Rng rng(rl::stream_seed(1, static_cast<std::uint64_t>(t), static_cast<std::uint64_t>(k)));
            counts[static_cast<std::size_t>(t)] += rl::play(*envs[static_cast<std::size_t>(t)], net, rng, sim::Split::train, false, true).decisions();
          }
        });
    }
    for (const auto c : counts) decisions += c;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(decisions));
}
BENCHMARK(BM_Rollouts)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// What stepping environments in lock-step (rltune.VecEnv) can gain from threads: two environments
// stepped in turn on one thread (first legal action, episodes reset as they end), each step timed.
// With one thread per environment a lock-step call lasts as long as the slower of its two steps, so
// speedup_bound = mean(a + b) / mean(max(a, b)) bounds VecEnv(2)'s gain on 2 threads. Counters: the
// step time's mean, p50 and p99 (us), and the bound.
void BM_LockStepBound(benchmark::State& state) {
  const auto& [cluster, trace] = helios();
  rl::EnvOptions options;
  options.observation.features = rl::FeatureSet::extended;
  std::vector<std::unique_ptr<rl::Env>> envs;
  std::vector<Rng> rngs{Rng(1), Rng(2)};
  for (std::size_t i = 0; i < 2; ++i) {
    envs.push_back(std::make_unique<rl::Env>(cluster, trace.jobs, options));
    envs[i]->reset(rngs[i], sim::Split::train);
  }
  std::vector<double> steps;
  double pair_sum = 0, pair_max = 0;
  for (auto _ : state) {
    double t[2];
    for (std::size_t i = 0; i < 2; ++i) {
      const auto start = std::chrono::steady_clock::now();
      const auto& mask = envs[i]->observation().mask;
      int action = 0;
      while (!mask[static_cast<std::size_t>(action)]) ++action;
      if (envs[i]->step(action).done) envs[i]->reset(rngs[i], sim::Split::train);
      t[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
      steps.push_back(t[i]);
    }
    pair_sum += t[0] + t[1];
    pair_max += std::max(t[0], t[1]);
  }
  std::sort(steps.begin(), steps.end());
  state.counters["mean_us"] = pair_sum / static_cast<double>(steps.size());
  state.counters["p50_us"] = steps[steps.size() / 2];
  state.counters["p99_us"] = steps[steps.size() * 99 / 100];
  state.counters["speedup_bound"] = pair_sum / pair_max;
}
BENCHMARK(BM_LockStepBound)->Iterations(20000)->Unit(benchmark::kMicrosecond);

}  // namespace
