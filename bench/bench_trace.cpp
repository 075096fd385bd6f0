// Trace input and workload generation: reading and validating canonical CSV (1,000,000 rows per
// iteration, from memory so the disk is not measured) and generating jobs from a family model.
#include <benchmark/benchmark.h>

#include <sstream>

#include "cluster/cluster_spec.h"
#include "trace/reader.h"
#include "workload/generator.h"

namespace {

using namespace rltune;

constexpr int kRows = 1'000'000;

const std::string& canonical_text() {
  static const std::string text = [] {
    const auto cluster = cluster::load_cluster("helios");
    const auto t = workload::generate(workload::load_model("helios"), cluster, {.jobs = kRows, .load = 0.9, .seed = 1});
    std::ostringstream out;
    trace::write_canonical(out, t.jobs);
    return out.str();
  }();
  return text;
}

void BM_ReadCanonical(benchmark::State& state) {
  const std::string& text = canonical_text();
  trace::ReadOptions options;
  options.format = "canonical";
  for (auto _ : state) {
    std::istringstream in(text);
    const trace::Trace t = trace::read_trace(in, "bench.csv", options);
    benchmark::DoNotOptimize(t.jobs.data());
  }
  state.SetItemsProcessed(state.iterations() * kRows);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BM_ReadCanonical)->Unit(benchmark::kMillisecond);

void BM_Generate(benchmark::State& state) {
  const auto cluster = cluster::load_cluster(state.range(0) == 0 ? "philly" : "helios");
  const auto model = workload::load_model(state.range(0) == 0 ? "philly" : "helios");
  const int jobs = 1'000'000;
  for (auto _ : state) {
    const trace::Trace t = workload::generate(model, cluster, {.jobs = jobs, .load = 0.9, .seed = 1});
    benchmark::DoNotOptimize(t.jobs.data());
  }
  state.SetItemsProcessed(state.iterations() * jobs);
  state.SetLabel(state.range(0) == 0 ? "philly" : "helios (per-VC pools)");
}
BENCHMARK(BM_Generate)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
