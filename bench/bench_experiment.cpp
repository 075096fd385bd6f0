// The issue-6 comparison at full size: 3 presets x 6 heuristics x 50 windows of 256 jobs (900 runs)
// through `rltune experiment`'s runner on 2 threads, and the report (gnuplot) of its output.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "experiment/config.h"
#include "experiment/runner.h"
#include "policy/registry.h"
#include "report/experiment_report.h"

namespace rltune {
namespace {

const char* kMatrix = R"(name: bench-900
windows: {count: 50, length: 256, split: all}
policies: [fcfs, sjf, f1, wfp, uni, multifactor]
workloads:
  - {cluster: helios, trace: {generate: {like: helios, jobs: 20000, load: 0.9}}}
  - {cluster: philly, trace: {generate: {like: philly, jobs: 20000, load: 8}}}
  - {cluster: alibaba, trace: {generate: {like: alibaba, jobs: 20000, load: 4}}}
)";

std::string scratch(const char* tag) {
  return (std::filesystem::temp_directory_path() / ("rltune-bench-" + std::to_string(getpid()) + "-" + tag)).string();
}

// Includes generating the three 20,000-job workloads and writing every output file.
void BM_Experiment900(benchmark::State& state) {
  policy::register_builtins();
  const experiment::Config config = experiment::parse_config(kMatrix, "bench.yaml");
  const std::string out = scratch("exp");
  for (auto _ : state) {
    std::filesystem::remove_all(out);
    const auto o = experiment::run_experiment(config, out, {.jobs = 2, .progress = false});
    benchmark::DoNotOptimize(o.runs);
  }
  std::filesystem::remove_all(out);
}
BENCHMARK(BM_Experiment900)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Report900(benchmark::State& state) {
  policy::register_builtins();
  const std::string out = scratch("report");
  std::filesystem::remove_all(out);
  experiment::run_experiment(experiment::parse_config(kMatrix, "bench.yaml"), out, {.jobs = 2, .progress = false});
  if (std::system("gnuplot --version >/dev/null 2>&1") != 0) {
    state.SkipWithError("gnuplot is not installed");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(report::make_report(out).figures.size());
  std::filesystem::remove_all(out);
}
BENCHMARK(BM_Report900)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace rltune
