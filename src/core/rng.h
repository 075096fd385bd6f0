#pragma once
// Seeded random numbers with a portable algorithm: std:: distributions differ between standard
// libraries, so results would not be reproducible across machines. SplitMix64 is small and good enough
// for workload generation and window sampling.
#include <cmath>
#include <cstdint>

namespace rltune {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [lo, hi] (inclusive); requires lo <= hi. Rejection sampling avoids modulo bias.
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi) {
    const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
    if (span == 0) return static_cast<std::int64_t>(next());
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    std::uint64_t x;
    do x = next(); while (x >= limit);
    return lo + static_cast<std::int64_t>(x % span);
  }
  // Exponential with the given mean.
  double exponential(double mean) { return -mean * std::log(1.0 - uniform()); }
  // Standard normal, by Box-Muller.
  double normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // Log-normal: exp(mu + sigma * N(0,1)).
  double lognormal(double mu, double sigma) { return std::exp(mu + sigma * normal()); }

 private:
  std::uint64_t state_;
};

}  // namespace rltune
