#include "sim/runtime_predictor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace rltune::sim {

HistoryPredictor::HistoryPredictor(int last) : last_(static_cast<std::size_t>(std::max(1, last))) {}

// user, GPU count and VC, separated by a byte no name contains.
std::string HistoryPredictor::user_key(const trace::JobSpec& job) {
  std::string key = job.user;
  key += '\x1f';
  key += std::to_string(job.gpus);
  key += '\x1f';
  key += job.vc;
  return key;
}

HistoryPredictor::Estimate HistoryPredictor::predict(const trace::JobSpec& job) const {
  const auto capped = [&](double mean, EstimateSource source) {
    auto seconds = std::max<Seconds>(1, std::llround(mean));
    if (job.requested_time > 0) seconds = std::min(seconds, job.requested_time);
    return Estimate{seconds, source};
  };
  const auto recent_mean = [](const Recent& r) {
    return static_cast<double>(std::accumulate(r.durations.begin(), r.durations.end(), Seconds{0})) /
           static_cast<double>(r.durations.size());
  };
  if (!job.user.empty()) {
    if (const auto it = by_user_gpus_vc_.find(user_key(job)); it != by_user_gpus_vc_.end())
      return capped(recent_mean(it->second), EstimateSource::user_gpus_vc);
    if (const auto it = by_user_.find(job.user); it != by_user_.end()) return capped(recent_mean(it->second), EstimateSource::user);
  }
  if (job.requested_time > 0) return {job.requested_time, EstimateSource::requested};
  if (const auto it = by_vc_.find(job.vc); !job.vc.empty() && it != by_vc_.end())
    return capped(it->second.sum / static_cast<double>(it->second.count), EstimateSource::vc);
  if (all_.count > 0) return capped(all_.sum / static_cast<double>(all_.count), EstimateSource::all);
  return {kNoHistoryEstimate, EstimateSource::none};
}

HistoryPredictor::Known HistoryPredictor::known(const trace::JobSpec& job) const {
  constexpr float none = std::numeric_limits<float>::quiet_NaN();
  Known k{none, none, none, none, none, none};
  const auto fill = [this](const auto& map, const std::string& key, float& mean, float& last) {
    const auto it = map.find(key);
    if (it == map.end()) return;
    const Recent& r = it->second;
    mean = static_cast<float>(static_cast<double>(std::accumulate(r.durations.begin(), r.durations.end(), Seconds{0})) /
                              static_cast<double>(r.durations.size()));
    last = static_cast<float>(r.durations[(r.next + last_ - 1) % last_]);
  };
  if (!job.user.empty()) {
    fill(by_user_gpus_vc_, user_key(job), k.user_gpus_vc_mean, k.user_gpus_vc_last);
    fill(by_user_, job.user, k.user_mean, k.user_last);
  }
  if (const auto it = by_vc_.find(job.vc); !job.vc.empty() && it != by_vc_.end())
    k.vc_mean = static_cast<float>(it->second.sum / static_cast<double>(it->second.count));
  if (all_.count > 0) k.all_mean = static_cast<float>(all_.sum / static_cast<double>(all_.count));
  return k;
}

void HistoryPredictor::record(const trace::JobSpec& job, Seconds duration) {
  const auto add = [&](Recent& r) {
    if (r.durations.size() < last_) r.durations.push_back(duration);
    else r.durations[r.next] = duration;
    r.next = (r.next + 1) % last_;
  };
  if (!job.user.empty()) {
    add(by_user_gpus_vc_[user_key(job)]);
    add(by_user_[job.user]);
  }
  const auto d = static_cast<double>(duration);
  if (!job.vc.empty()) {
    Mean& m = by_vc_[job.vc];
    m.sum += d;
    ++m.count;
  }
  all_.sum += d;
  ++all_.count;
}

float EstimateDoubt::of(const trace::JobSpec& job) const {
  const auto it = by_user_.find(job.user);
  if (it == by_user_.end()) return kUnknown;
  const Recent& r = it->second;
  const std::size_t n = std::min(r.count, kDoubtJobs);
  return std::accumulate(r.errors.begin(), r.errors.begin() + static_cast<std::ptrdiff_t>(n), 0.0f) / static_cast<float>(n);
}

void EstimateDoubt::record(const trace::JobSpec& job, Seconds estimate, Seconds duration) {
  Recent& r = by_user_[job.user];
  const double ratio = static_cast<double>(std::max<Seconds>(estimate, 1)) / static_cast<double>(std::max<Seconds>(duration, 1));
  r.errors[r.count % kDoubtJobs] = static_cast<float>(std::abs(std::log(ratio)));
  ++r.count;
}

}  // namespace rltune::sim
