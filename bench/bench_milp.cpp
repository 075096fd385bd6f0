// MILP placement cost per placement on one pool with a random free-GPU pattern (seeded): the `nodes`
// model on 64 and 2,000 8-GPU nodes and the `ways` model on 64 nodes, for several request sizes, with
// five upcoming jobs as in a simulation. The *Cpu variants model 64 CPUs per node, random CPUs in use,
// and requests of 6 CPUs per GPU (many more distinct node states to group). Reports p50 and p99.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <fmt/format.h>
#include <vector>

#include "cluster/cluster_spec.h"
#include "cluster/cluster_state.h"
#include "core/rng.h"
#include "policy/placement/milp_placement.h"

namespace {

using namespace rltune;

struct Pool {
  cluster::ClusterSpec spec;
  cluster::ClusterState state;
  Pool(int nodes, bool cpus)
      : spec(cluster::parse_cluster(fmt::format("pools: [{{name: p, nodes: {}, gpus_per_node: 8{}}}]", nodes,
                                                cpus ? ", cpus_per_node: 64" : ""),
                                    "bench")),
        state(spec) {
    Rng rng(7);
    for (NodeId n = 0; n < nodes; ++n) {
      const int used = static_cast<int>(rng.uniform_int(0, 8));
      if (used > 0) state.allocate({0, {{n, used}}, cpus ? static_cast<int>(rng.uniform_int(0, 64)) : 0});
    }
  }
};

const Pool& pool(int nodes, bool cpus) {
  static const Pool small(64, false), large(2000, false), small_cpu(64, true), large_cpu(2000, true);
  if (cpus) return nodes == 64 ? small_cpu : large_cpu;
  return nodes == 64 ? small : large;
}

void run(benchmark::State& state, int nodes, const std::string& model, bool cpus = false) {
  const Pool& p = pool(nodes, cpus);
  const int gpus = static_cast<int>(state.range(0));
  const int per_gpu = cpus ? 6 : 0;
  policy::MilpOptions o;
  o.model = model;
  const auto milp = policy::make_milp_placement(o);
  const std::array<PoolId, 1> pools{0};
  const std::array<PoolId, 1> next_pools{0};
  std::vector<policy::UpcomingJob> upcoming;
  for (const int g : {1, 8, 4, 16, 2}) upcoming.push_back({{g, per_gpu * g}, next_pools});
  const cluster::Request request(gpus, per_gpu * gpus);
  std::vector<double> us;
  for (auto _ : state) {
    const auto began = std::chrono::steady_clock::now();
    policy::PlaceResult r = milp->place(p.state, request, pools, upcoming);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - began).count());
    benchmark::DoNotOptimize(r);
  }
  std::sort(us.begin(), us.end());
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  state.counters["fallbacks"] = static_cast<double>(milp->stats()->fallbacks);
}

void BM_MilpNodes64(benchmark::State& state) { run(state, 64, "nodes"); }
void BM_MilpNodes2000(benchmark::State& state) { run(state, 2000, "nodes"); }
void BM_MilpWays64(benchmark::State& state) { run(state, 64, "ways"); }
void BM_MilpNodesCpu64(benchmark::State& state) { run(state, 64, "nodes", true); }
void BM_MilpNodesCpu2000(benchmark::State& state) { run(state, 2000, "nodes", true); }
BENCHMARK(BM_MilpNodes64)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MilpNodes2000)->Arg(1)->Arg(8)->Arg(32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MilpWays64)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MilpNodesCpu64)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MilpNodesCpu2000)->Arg(1)->Arg(8)->Arg(32)->Unit(benchmark::kMicrosecond);

}  // namespace
