#include "policy/priority/priority.h"

#include <algorithm>
#include <cmath>

namespace rltune::policy {

namespace {

using Key = std::pair<double, double>;

// The reference guards log10 of non-positive values by 0.1; runtime divisions are guarded by 1 s (B5).
double safe_log10(double x) { return std::log10(x > 0 ? x : 0.1); }
double at_least_1s(double r) { return std::max(r, 1.0); }

Key multifactor(const JobFacts& j, const PriorityOptions& o) {
  const auto& m = o.multifactor;
  const double age = std::min(j.wait / m.max_age_s, 1.0);
  const double share = j.gpus / j.cluster_gpus;
  const double size = m.favor_small ? 1.0 - share : share;
  return {-(m.age_weight * age + m.size_weight * size), 0};
}

const std::vector<PriorityKeyDef> kDefs = {
    {"fcfs", "first come, first served (submit time)", false, [](const JobFacts& j, const PriorityOptions&) { return Key{j.submit, 0}; }},
    {"lcfs", "last come, first served", false, [](const JobFacts& j, const PriorityOptions&) { return Key{-j.submit, 0}; }},
    {"smallest", "fewest GPUs first, then submit time", false, [](const JobFacts& j, const PriorityOptions&) { return Key{j.gpus, j.submit}; }},
    {"largest", "most GPUs first", false, [](const JobFacts& j, const PriorityOptions&) { return Key{-j.gpus, 0}; }},
    {"sjf", "shortest estimated runtime first, then fewest GPUs", false, [](const JobFacts& j, const PriorityOptions&) { return Key{j.estimate, j.gpus}; }},
    {"lpf", "longest estimated runtime first", false, [](const JobFacts& j, const PriorityOptions&) { return Key{-j.estimate, 0}; }},
    {"saf", "smallest area (runtime x GPUs) first", false, [](const JobFacts& j, const PriorityOptions&) { return Key{j.estimate * j.gpus, 0}; }},
    {"laf", "largest area (runtime x GPUs) first", false, [](const JobFacts& j, const PriorityOptions&) { return Key{-j.estimate * j.gpus, 0}; }},
    {"sexp", "smallest expansion (wait + runtime) / GPUs first", true, [](const JobFacts& j, const PriorityOptions&) { return Key{(j.wait + j.estimate) / j.gpus, 0}; }},
    {"lexp", "largest expansion (wait + runtime) / GPUs first", true, [](const JobFacts& j, const PriorityOptions&) { return Key{-(j.wait + j.estimate) / j.gpus, 0}; }},
    {"srf", "smallest runtime / GPUs ratio first", false, [](const JobFacts& j, const PriorityOptions&) { return Key{j.estimate / j.gpus, 0}; }},
    {"lrf", "largest runtime / GPUs ratio first", false, [](const JobFacts& j, const PriorityOptions&) { return Key{-j.estimate / j.gpus, 0}; }},
    {"multifactor", "Slurm multifactor: age and job-size factors with configurable weights", true, multifactor},
    {"f1", "F1 (Carastan-Santos & de Camargo): log10(r) x n + 870 x log10(s)", false,
     [](const JobFacts& j, const PriorityOptions&) { return Key{safe_log10(j.estimate) * j.gpus + 870 * safe_log10(j.submit), 0}; }},
    {"f2", "F2: sqrt(r) x n + 25600 x log10(s)", false,
     [](const JobFacts& j, const PriorityOptions&) { return Key{std::sqrt(j.estimate) * j.gpus + 25600 * safe_log10(j.submit), 0}; }},
    {"f3", "F3: r x n + 6860000 x log10(s)", false,
     [](const JobFacts& j, const PriorityOptions&) { return Key{j.estimate * j.gpus + 6860000 * safe_log10(j.submit), 0}; }},
    {"f4", "F4: r x sqrt(n) + 530000 x log10(s)", false,
     [](const JobFacts& j, const PriorityOptions&) { return Key{j.estimate * std::sqrt(j.gpus) + 530000 * safe_log10(j.submit), 0}; }},
    {"wfp", "WFP3: highest (wait / runtime)^3 x GPUs first", true,
     [](const JobFacts& j, const PriorityOptions&) { return Key{-std::pow(j.wait / at_least_1s(j.estimate), 3) * j.gpus, 0}; }},
    {"uni", "UNICEP: highest wait / (log2(GPUs) x runtime) first", true,
     [](const JobFacts& j, const PriorityOptions&) {
       return Key{-(j.wait + 1e-15) / (std::log2(j.gpus + 1e-15) * at_least_1s(j.estimate)), 0};
     }},
};

class KeyPriority final : public PriorityPolicy {
 public:
  KeyPriority(const PriorityKeyDef& def, const PriorityOptions& options) : def_(def), options_(options) {}

  void reset() override {
    keys_.clear();
    known_.clear();
  }

  void order(const sim::Engine& engine, std::vector<JobIndex>& queue) override {
    if (keys_.size() != engine.job_count()) {
      keys_.assign(engine.job_count(), Key{});
      known_.assign(engine.job_count(), false);
    }
    const double cluster_gpus = engine.cluster_spec().total_gpus();
    for (const JobIndex j : queue) {
      if (!def_.time_dependent && known_[j]) continue;
      const sim::SimJob& job = engine.job(j);
      const JobFacts facts{static_cast<double>(job.spec->submit), static_cast<double>(job.estimate),
                           static_cast<double>(job.spec->gpus), static_cast<double>(engine.now() - job.spec->submit),
                           cluster_gpus};
      keys_[j] = def_.key(facts, options_);
      known_[j] = true;
    }
    const auto less = [this](JobIndex a, JobIndex b) { return keys_[a] != keys_[b] ? keys_[a] < keys_[b] : a < b; };
    if (!std::is_sorted(queue.begin(), queue.end(), less)) std::sort(queue.begin(), queue.end(), less);
  }

 private:
  const PriorityKeyDef& def_;
  PriorityOptions options_;
  std::vector<Key> keys_;
  std::vector<bool> known_;
};

}  // namespace

const std::vector<PriorityKeyDef>& priority_key_defs() { return kDefs; }

std::unique_ptr<PriorityPolicy> make_key_priority(const PriorityKeyDef& def, const PriorityOptions& options) {
  return std::make_unique<KeyPriority>(def, options);
}

}  // namespace rltune::policy
