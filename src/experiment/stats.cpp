#include "experiment/stats.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "metrics/metrics.h"

namespace rltune::experiment {

namespace {

// The improvement for sums (the means' ratio does not depend on the count); nullopt when undefined.
std::optional<double> improvement(double baseline_sum, double policy_sum, bool lower_is_better) {
  if (baseline_sum == 0) return policy_sum == 0 ? std::optional<double>(0.0) : std::nullopt;
  const double change = lower_is_better ? baseline_sum - policy_sum : policy_sum - baseline_sum;
  return 100 * change / baseline_sum;
}

}  // namespace

Improvement paired_improvement(std::span<const double> baseline, std::span<const double> policy, bool lower_is_better,
                               int resamples, std::uint64_t seed) {
  RLTUNE_CHECK(baseline.size() == policy.size(), "paired values have the same length");
  Improvement out;
  out.windows = baseline.size();
  if (baseline.empty()) return out;
  double bs = 0, ps = 0;
  for (std::size_t i = 0; i < baseline.size(); ++i) bs += baseline[i], ps += policy[i];
  const auto point = improvement(bs, ps, lower_is_better);
  if (!point) return out;
  out.defined = true;
  out.pct = *point;
  Rng rng(seed);
  std::vector<double> estimates;
  estimates.reserve(static_cast<std::size_t>(resamples));
  const auto n = static_cast<std::int64_t>(baseline.size());
  for (int r = 0; r < resamples; ++r) {
    double b = 0, p = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(rng.uniform_int(0, n - 1));
      b += baseline[k], p += policy[k];
    }
    if (const auto e = improvement(b, p, lower_is_better)) estimates.push_back(*e);
  }
  std::sort(estimates.begin(), estimates.end());
  out.ci_low = metrics::sorted_quantile(estimates, 0.025);
  out.ci_high = metrics::sorted_quantile(estimates, 0.975);
  return out;
}

}  // namespace rltune::experiment
