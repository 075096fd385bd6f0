// Placement cost on one large pool (1000 nodes x 8 GPUs) with a random free-GPU pattern: full candidate
// enumeration and scoring (what defrag/balance do) versus the greedy pick, for several request sizes.
#include <benchmark/benchmark.h>

#include <array>

#include "cluster/cluster_spec.h"
#include "cluster/cluster_state.h"
#include "core/rng.h"
#include "policy/placement/enumerate.h"
#include "policy/placement/placement.h"

namespace {

using namespace rltune;

constexpr int kNodes = 1000;
constexpr int kGpusPerNode = 8;

// The spec must outlive the state (ClusterState keeps a pointer to it), so both live here, built once.
struct LargePool {
  cluster::ClusterSpec spec;
  cluster::ClusterState state;

  LargePool()
      : spec(cluster::parse_cluster("name: large\n"
                                    "pools:\n"
                                    "  - {name: p0, gpu_type: A100, nodes: 1000, gpus_per_node: 8}\n",
                                    "bench")),
        state(spec) {
    // Seeded so every run measures the same pattern: each node keeps 0..8 free GPUs, uniformly.
    Rng rng(42);
    for (NodeId node = 0; node < kNodes; ++node) {
      const int used = kGpusPerNode - static_cast<int>(rng.uniform_int(0, kGpusPerNode));
      if (used > 0) state.allocate(cluster::Placement{0, {{node, used}}});
    }
  }
};

const LargePool& large_pool() {
  static const LargePool pool;
  return pool;
}

void BM_EnumerateLargePool(benchmark::State& state) {
  const cluster::ClusterState& cluster = large_pool().state;
  const int gpus = static_cast<int>(state.range(0));
  const policy::PoolSnapshot pool = policy::snapshot(cluster, 0, gpus);
  std::size_t assignments = 0;
  for (auto _ : state) {
    policy::Candidates out;  // fresh each time, as a placement call would have
    policy::collect_candidates(pool, gpus, /*relax=*/true, out);
    assignments = out.assignments;
    benchmark::DoNotOptimize(out);
  }
  state.counters["assignments"] = static_cast<double>(assignments);  // per call, for scale
}

void BM_GreedyLargePool(benchmark::State& state) {
  const cluster::ClusterState& cluster = large_pool().state;
  const int gpus = static_cast<int>(state.range(0));
  const auto greedy = policy::make_greedy_placement();
  const std::array<PoolId, 1> pools{0};
  for (auto _ : state) {
    policy::PlaceResult result = greedy->place(cluster, gpus, pools);
    benchmark::DoNotOptimize(result);
  }
}

BENCHMARK(BM_EnumerateLargePool)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GreedyLargePool)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMicrosecond);

}  // namespace
