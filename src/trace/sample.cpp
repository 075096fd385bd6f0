#include "trace/sample.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "core/rng.h"

namespace rltune::trace {

namespace {

// GPU-request shares loosely shaped like Philly/Helios: mostly single-GPU jobs, a tail of large ones.
struct SizeShare {
  int gpus;
  double share;
};
constexpr SizeShare kSizes[] = {{1, 0.50}, {2, 0.14}, {4, 0.12}, {8, 0.16}, {16, 0.06}, {32, 0.02}};
constexpr double kRuntimeMedianS = 1800, kRuntimeSigma = 1.3;  // log-normal runtimes
constexpr Seconds kMinRuntimeS = 10, kMaxRuntimeS = 86400;
constexpr Seconds kEstimateRoundingS = 600;  // users round time limits up to 10 minutes

template <typename Weights>
std::size_t pick(Rng& rng, const Weights& weights, double total) {
  double x = rng.uniform() * total;
  for (std::size_t i = 0; i < std::size(weights); ++i) {
    x -= weights[i];
    if (x < 0) return i;
  }
  return std::size(weights) - 1;
}

}  // namespace

Trace make_sample(const SampleOptions& o) {
  if (o.jobs < 1 || o.load <= 0 || o.capacity_gpus < 1 || o.max_gpus < 1 || o.vcs.size() != o.vc_weights.size())
    throw InputError("sample workload: jobs, load, capacity and max_gpus must be positive, one weight per VC");
  Rng rng(o.seed);
  std::vector<double> size_weights;
  std::vector<int> size_gpus;
  for (const auto& s : kSizes)
    if (s.gpus <= o.max_gpus) {
      size_gpus.push_back(s.gpus);
      size_weights.push_back(s.share);
    }
  const double size_total = std::accumulate(size_weights.begin(), size_weights.end(), 0.0);
  const double vc_total = std::accumulate(o.vc_weights.begin(), o.vc_weights.end(), 0.0);

  Trace trace;
  trace.source = fmt::format("sample(jobs={},seed={},load={})", o.jobs, o.seed, o.load);
  trace.format = "sample";
  trace.jobs.resize(o.jobs);
  double work = 0;
  for (int i = 0; i < o.jobs; ++i) {
    JobSpec& j = trace.jobs[i];
    j.id = fmt::format("job{:05d}", i);
    j.gpus = size_gpus[pick(rng, size_weights, size_total)];
    const double raw = rng.lognormal(std::log(kRuntimeMedianS), kRuntimeSigma);
    j.duration = std::clamp<Seconds>(std::llround(raw), kMinRuntimeS, kMaxRuntimeS);
    const double overestimate = 1.0 + 2.0 * rng.uniform();
    const auto estimate = static_cast<Seconds>(std::ceil(j.duration * overestimate / kEstimateRoundingS));
    j.requested_time = estimate * kEstimateRoundingS;
    if (!o.vcs.empty()) j.vc = o.vcs[pick(rng, o.vc_weights, vc_total)];
    j.user = fmt::format("u{}", rng.uniform_int(1, 40));
    work += static_cast<double>(j.duration) * j.gpus;
  }
  // Arrival span chosen so that the offered load matches the target.
  const double mean_gap = work / (o.load * o.capacity_gpus) / o.jobs;
  double t = 0;
  for (auto& j : trace.jobs) {
    j.submit = std::llround(t);
    t += rng.exponential(mean_gap);
  }
  return trace;
}

}  // namespace rltune::trace
