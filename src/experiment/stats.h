#pragma once
// Paired comparison of two policies over the same windows: the improvement of a policy over a baseline
// in percent and its 95% confidence interval by the percentile bootstrap over windows.
#include <cstdint>
#include <optional>
#include <span>

namespace rltune::experiment {

struct Improvement {
  double pct = 0;             // point estimate
  double ci_low = 0, ci_high = 0;
  std::size_t windows = 0;    // pairs used
  bool defined = false;       // false when the baseline's mean is 0 while the policy's is not
};

// Improvement of `policy` over `baseline` on one metric, from paired per-window values (same length):
// 100 x (mean(baseline) - mean(policy)) / mean(baseline) when lower is better, and
// 100 x (mean(policy) - mean(baseline)) / mean(baseline) when higher is better (positive = policy better).
// Both means 0 gives 0. The interval resamples windows with replacement `resamples` times (pairs stay
// together) with a seeded stream, and takes the 2.5th and 97.5th percentiles of the resampled estimates
// (linear interpolation); resamples where the baseline's mean is 0 are left out.
Improvement paired_improvement(std::span<const double> baseline, std::span<const double> policy, bool lower_is_better,
                               int resamples, std::uint64_t seed);

}  // namespace rltune::experiment
