#pragma once
// Runtime predictions from history, as a real scheduler can make them (Tsafrir, Etsion and Feitelson,
// "Backfilling using system-generated predictions rather than user runtime estimates", IEEE TPDS 2007):
// a job's estimate is the mean duration of the last k finished jobs of the same user with the same GPU
// count and VC, falling back to the user's last k, then to the user's requested time, then to the mean
// of every finished job of the VC, then of the cluster. A requested time caps the estimate, as a time
// limit caps a real job. The predictor is causal by construction: it only knows the jobs it was told
// had finished.
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/names.h"
#include "trace/job_spec.h"

namespace rltune::sim {

// Where one estimate came from, most specific first.
enum class EstimateSource { user_gpus_vc, user, requested, vc, all, none };
inline constexpr NameTable<EstimateSource, 6> kEstimateSourceNames{
    "estimate source",
    {{{EstimateSource::user_gpus_vc, "user+gpus+vc"}, {EstimateSource::user, "user"}, {EstimateSource::requested, "requested"},
      {EstimateSource::vc, "vc"}, {EstimateSource::all, "all"}, {EstimateSource::none, "none"}}}};

// The estimate of a job when nothing at all is known yet (no history, no requested time).
inline constexpr Seconds kNoHistoryEstimate = 3600;

class HistoryPredictor {
 public:
  // `last` finished jobs of a user key are averaged (at least 1).
  explicit HistoryPredictor(int last);

  struct Estimate {
    Seconds seconds;
    EstimateSource source;
  };
  // The estimate for `job` from the jobs recorded so far (at least 1 s).
  Estimate predict(const trace::JobSpec& job) const;
  // `job` has finished after running for `duration` seconds.
  void record(const trace::JobSpec& job, Seconds duration);

  // What the history holds for `job`'s keys, NaN where nothing: the mean and the last of the user's
  // recent jobs of that GPU count and VC, and of all the user's; the VC's mean; the cluster's mean.
  struct Known {
    float user_gpus_vc_mean, user_gpus_vc_last, user_mean, user_last, vc_mean, all_mean;
  };
  Known known(const trace::JobSpec& job) const;

 private:
  // The last k durations of one user key, in a ring.
  struct Recent {
    std::vector<Seconds> durations;
    std::size_t next = 0;
  };
  // Every duration of a population (a VC, or the cluster), as a running mean.
  struct Mean {
    double sum = 0;
    long long count = 0;
  };
  static std::string user_key(const trace::JobSpec& job);

  std::size_t last_;
  std::unordered_map<std::string, Recent> by_user_gpus_vc_, by_user_;
  std::unordered_map<std::string, Mean> by_vc_;
  Mean all_;
};

// How far off the estimates of a user's jobs have been: the mean |ln(estimate / true duration)| of the
// user's last kDoubtJobs finished jobs (all jobs share one record when the trace names no users). What a
// scheduler can learn about how far to trust an estimate; causal like the predictor.
class EstimateDoubt {
 public:
  static constexpr std::size_t kDoubtJobs = 8;
  static constexpr float kUnknown = -1;  // the user has no finished job yet

  float of(const trace::JobSpec& job) const;
  void record(const trace::JobSpec& job, Seconds estimate, Seconds duration);

 private:
  struct Recent {
    std::array<float, kDoubtJobs> errors{};
    std::size_t count = 0;  // recorded so far; the ring's next slot is count % kDoubtJobs
  };
  std::unordered_map<std::string, Recent> by_user_;
};

}  // namespace rltune::sim
