#include "trace/job_spec.h"

#include <algorithm>
#include <cmath>

namespace rltune::trace {

void SkipReport::add(const std::string& reason, const std::string& message) {
  ++skipped;
  auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& p) { return p.first == reason; });
  if (it == by_reason.end()) by_reason.emplace_back(reason, 1);
  else ++it->second;
  if (examples.size() < 5) examples.push_back(message);
}

void SkipReport::merge(const SkipReport& other) {
  skipped += other.skipped;
  for (const auto& entry : other.by_reason) {
    auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& p) { return p.first == entry.first; });
    if (it == by_reason.end()) by_reason.push_back(entry);
    else it->second += entry.second;
  }
  for (const auto& e : other.examples)
    if (examples.size() < 5) examples.push_back(e);
}

std::string join_gpu_types(const std::vector<std::string>& types) {
  std::string out;
  for (const auto& t : types) {
    if (!out.empty()) out += '|';
    out += t;
  }
  return out;
}

int whole_count(double demand) {
  return demand > 0 ? static_cast<int>(std::max(1.0, std::ceil(demand - 1e-6))) : 0;
}

void set_gpus(JobSpec& job, double demand) {
  job.gpus = whole_count(demand);
  if (std::abs(demand - std::round(demand)) > 1e-6) job.gpu_demand = demand;
}

void sort_by_submit(std::vector<JobSpec>& jobs) {
  const auto earlier = [](const JobSpec& a, const JobSpec& b) { return a.submit < b.submit; };
  if (std::is_sorted(jobs.begin(), jobs.end(), earlier)) return;  // the usual case, and a stable no-op
  std::stable_sort(jobs.begin(), jobs.end(), earlier);
}

}  // namespace rltune::trace
