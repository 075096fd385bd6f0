// MILP placement cost per placement on one pool with a random free-GPU pattern (seeded): the `nodes`
// model on 64 and 2,000 8-GPU nodes and the `ways` model on 64 nodes, for several request sizes, with
// five upcoming jobs as in a simulation. Reports p50 and p99 over the iterations.
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
  explicit Pool(int nodes)
      : spec(cluster::parse_cluster(fmt::format("pools: [{{name: p, nodes: {}, gpus_per_node: 8}}]", nodes), "bench")),
        state(spec) {
    Rng rng(7);
    for (NodeId n = 0; n < nodes; ++n) {
      const int used = static_cast<int>(rng.uniform_int(0, 8));
      if (used > 0) state.allocate({0, {{n, used}}});
    }
  }
};

const Pool& pool(int nodes) {
  static const Pool small(64), large(2000);
  return nodes == 64 ? small : large;
}

void run(benchmark::State& state, int nodes, const std::string& model) {
  const Pool& p = pool(nodes);
  const int gpus = static_cast<int>(state.range(0));
  policy::MilpOptions o;
  o.model = model;
  const auto milp = policy::make_milp_placement(o);
  const std::array<PoolId, 1> pools{0};
  const std::array<PoolId, 1> next_pools{0};
  const std::array<policy::UpcomingJob, 5> upcoming{{{1, next_pools}, {8, next_pools}, {4, next_pools},
                                                     {16, next_pools}, {2, next_pools}}};
  std::vector<double> us;
  for (auto _ : state) {
    const auto began = std::chrono::steady_clock::now();
    policy::PlaceResult r = milp->place(p.state, gpus, pools, upcoming);
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
BENCHMARK(BM_MilpNodes64)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MilpNodes2000)->Arg(1)->Arg(8)->Arg(32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MilpWays64)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMicrosecond);

}  // namespace
