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
    sorted_.clear();
    keys_.clear();
    head_ = 0;
    last_seen_ = -1;
  }

  std::span<const JobIndex> order(const sim::View& view, std::span<const JobIndex> queue) override {
    if (keys_.size() != view.job_count()) {
      reset();
      keys_.resize(view.job_count());
    }
    if (def_.time_dependent) return resorted(view, queue);
    const auto stale = [&](JobIndex j) { return !view.job(j).queued(); };
    // Started jobs stay in the list until cheap to drop: leading ones at once (FCFS-like orders start
    // from the front), the rest once they make up half the list (amortised O(1) per start).
    while (head_ < sorted_.size() && stale(sorted_[head_])) ++head_;
    if (sorted_.size() - head_ > 2 * queue.size() + 16 || head_ > sorted_.size() / 2) {
      sorted_.erase(sorted_.begin(), sorted_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
      std::erase_if(sorted_, stale);
    }
    // New arrivals. A few (the usual case: one per decision) each go in by a binary search and a block
    // move, which costs far less than a merge's comparisons over a long queue; many at once are sorted,
    // then merged.
    if (const auto fresh = arrivals(queue); !fresh.empty()) {
      const auto head = static_cast<std::ptrdiff_t>(head_);
      const auto old_end = static_cast<std::ptrdiff_t>(sorted_.size());
      for (const JobIndex j : fresh) keys_[j] = key_of(view, j);
      if (fresh.size() <= kFewArrivals) {
        for (const JobIndex j : fresh) sorted_.insert(std::upper_bound(sorted_.begin() + head, sorted_.end(), j, less()), j);
      } else {
        sorted_.insert(sorted_.end(), fresh.begin(), fresh.end());
        std::sort(sorted_.begin() + old_end, sorted_.end(), less());
        std::inplace_merge(sorted_.begin() + head, sorted_.begin() + old_end, sorted_.end(), less());
      }
    }
    return std::span<const JobIndex>(sorted_).subspan(head_);
  }

 private:
  // Time-dependent keys change at every decision, but the order rarely does much: keys drift slowly
  // between events, and jobs that arrived together keep their order (wfp, uni). So the previous order,
  // less the jobs that started, plus the new arrivals, is re-keyed and insertion-sorted, which costs
  // O(queue + jobs that moved); past a budget of moves it falls back to a full sort. The result is the
  // unique order by (key, arrival), the same as a full sort's.
  std::span<const JobIndex> resorted(const sim::View& view, std::span<const JobIndex> queue) {
    std::erase_if(sorted_, [&](JobIndex j) { return !view.job(j).queued(); });
    const auto fresh = arrivals(queue);
    sorted_.insert(sorted_.end(), fresh.begin(), fresh.end());
    keyed_.resize(sorted_.size());
    for (std::size_t i = 0; i < sorted_.size(); ++i) keyed_[i] = {key_of(view, sorted_[i]), sorted_[i]};
    std::size_t moves = 0;
    const std::size_t budget = 4 * keyed_.size() + 64;
    for (std::size_t i = 1; i < keyed_.size() && moves <= budget; ++i)
      for (std::size_t k = i; k > 0 && keyed_[k] < keyed_[k - 1] && moves <= budget; --k, ++moves) std::swap(keyed_[k], keyed_[k - 1]);
    if (moves > budget) std::sort(keyed_.begin(), keyed_.end());
    for (std::size_t i = 0; i < keyed_.size(); ++i) sorted_[i] = keyed_[i].second;
    head_ = 0;
    return sorted_;
  }

  std::span<const JobIndex> arrivals(std::span<const JobIndex> queue) { return sim::arrived_since(queue, last_seen_); }

  Key key_of(const sim::View& view, JobIndex j) const {
    const sim::JobView job = view.job(j);
    const JobFacts facts{static_cast<double>(job.submit()), static_cast<double>(job.estimate()),
                         static_cast<double>(job.gpus()), static_cast<double>(view.now() - job.submit()),
                         static_cast<double>(view.cluster_spec().total_gpus())};
    Key key = def_.key(facts, options_);
    if (options_.ties_by_arrival) key.second = 0;  // the job index (arrival) decides ties
    return key;
  }
  // Serving order: smaller key first, then arrival (job index).
  struct Before {
    const std::vector<Key>* keys;
    bool operator()(JobIndex a, JobIndex b) const { return (*keys)[a] != (*keys)[b] ? (*keys)[a] < (*keys)[b] : a < b; }
  };
  Before less() const { return Before{&keys_}; }

  static constexpr std::size_t kFewArrivals = 8;

  const PriorityKeyDef& def_;
  PriorityOptions options_;
  std::vector<Key> keys_;        // by job index
  std::vector<std::pair<Key, JobIndex>> keyed_;  // time-dependent keys: this decision's (key, job)
  std::vector<JobIndex> sorted_;  // serving order from head_; may hold jobs that already started
  std::size_t head_ = 0;          // entries before it have all started
  JobIndex last_seen_ = -1;       // highest job index already in sorted_
};

}  // namespace

const std::vector<PriorityKeyDef>& priority_key_defs() { return kDefs; }

namespace {

const MultifactorSetting kMultifactorSettings[] = {
    {"--mf-age-weight", "age_weight", "Slurm PriorityWeightAge", -1e12, 1e12, &MultifactorOptions::age_weight},
    {"--mf-size-weight", "size_weight", "Slurm PriorityWeightJobSize", -1e12, 1e12, &MultifactorOptions::size_weight},
    {"--mf-max-age", "max_age_s", "Slurm PriorityMaxAge in seconds", 1e-9, 1e12, &MultifactorOptions::max_age_s},
};

}  // namespace

std::span<const MultifactorSetting> multifactor_settings() { return kMultifactorSettings; }

void validate(const MultifactorOptions& options) { check_bounds(options, multifactor_settings(), "multifactor"); }

std::unique_ptr<PriorityPolicy> make_key_priority(const PriorityKeyDef& def, const PriorityOptions& options) {
  validate(options.multifactor);
  return std::make_unique<KeyPriority>(def, options);
}

}  // namespace rltune::policy
