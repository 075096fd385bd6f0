#include "policy/priority/priority.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/error.h"

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

// How each time-dependent key keeps order (see Drift); w = now - s grows alike for every job.
// sexp (w + r)/n and lexp: for one GPU count the key moves with now + r - s, so that count's jobs keep
// their order by r - s (in doubles, w + r is exact and dividing by n keeps order, for times below 2^52 s).
Key by_gpus(const JobFacts& j, const PriorityOptions&) { return {j.gpus, 0}; }
constexpr Drift kSexpDrift{by_gpus, [](const JobFacts& j, const PriorityOptions&) { return j.estimate - j.submit; }, nullptr};
constexpr Drift kLexpDrift{by_gpus, [](const JobFacts& j, const PriorityOptions&) { return j.submit - j.estimate; }, nullptr};
// multifactor: for one GPU count the size factor is shared and the key falls as the wait grows (the
// capped age too), so those jobs keep arrival order. A negative age weight reverses that below the cap
// only; then just the jobs of one second, whose keys are equal, keep theirs.
constexpr Drift kMultifactorDrift{
    [](const JobFacts& j, const PriorityOptions& o) { return Key{j.gpus, o.multifactor.age_weight < 0 ? j.submit : 0}; },
    [](const JobFacts&, const PriorityOptions&) { return 0.0; }, nullptr};
// Chains (see KeyPriority::add_to_classes): `earlier` joined first, so it waited at least as long; in
// the same second it may be the later arrival, so keeping ahead must hold without the arrival tie-break.
// wfp -(w / r)^3 n: no longer a runtime and no fewer GPUs keep a job ahead (each rounded step of the key
// keeps order, and two such jobs' keys differ by at least 3/r relative, far above rounding, or are
// equal). Rank: minus the rate n / r^3, which never falls along a chain.
constexpr Drift kWfpDrift{nullptr, [](const JobFacts& j, const PriorityOptions&) { return -j.gpus / std::pow(at_least_1s(j.estimate), 3); },
                          [](const JobFacts& earlier, const JobFacts& later) {
                            return at_least_1s(earlier.estimate) <= at_least_1s(later.estimate) && earlier.gpus >= later.gpus;
                          }};
// uni -(w + 1e-15) / d with d = log2(n) r > 0 (queued jobs have a GPU): no larger d keeps a job ahead.
// In one second, a d smaller by a rounding error may give the same key (a tie: arrival decides), so
// there d must be equal or clearly smaller. Rank: d.
double uni_divisor(const JobFacts& j) { return std::log2(j.gpus + 1e-15) * at_least_1s(j.estimate); }
constexpr Drift kUniDrift{nullptr, [](const JobFacts& j, const PriorityOptions&) { return uni_divisor(j); },
                          [](const JobFacts& earlier, const JobFacts& later) {
                            const double e = uni_divisor(earlier), l = uni_divisor(later);
                            return earlier.submit < later.submit ? e <= l : e == l || e < l * (1 - 1e-9);
                          }};

// The published RLTune's keys where they differ from rltune's formulas (PriorityOptions::published_keys).
struct PublishedKey {
  std::string_view name;
  Key (*key)(const JobFacts& job, const PriorityOptions& options);
};
// Its multifactor: age from the wait the trace recorded over 12 h, size favouring small jobs over a fixed
// 160 GPUs; the weights are Slurm's (--mf-age-weight, --mf-size-weight).
constexpr double kPublishedMaxWait = 12 * 3600, kPublishedSizeNorm = 160;
const PublishedKey kPublishedKeys[] = {
    {"multifactor",
     [](const JobFacts& j, const PriorityOptions& o) {
       if (std::isnan(j.recorded_wait))
         throw InputError("the published multifactor ranks jobs by the wait their trace recorded (SWF column 3, read by "
                          "the rltune and swf formats), and this job has none");
       return Key{-(o.multifactor.age_weight * j.recorded_wait / kPublishedMaxWait +
                    o.multifactor.size_weight * (1 - j.gpus / kPublishedSizeNorm)), 0};
     }},
    {"f2", [](const JobFacts& j, const PriorityOptions&) { return Key{std::sqrt(j.estimate) * j.gpus + 25600 * std::log10(j.submit), 0}; }},
    {"f3", [](const JobFacts& j, const PriorityOptions&) { return Key{j.estimate * j.gpus + 6860000 * std::log10(j.submit), 0}; }},
    {"f4", [](const JobFacts& j, const PriorityOptions&) { return Key{j.estimate * std::sqrt(j.gpus) + 530000 * std::log10(j.submit), 0}; }},
};

const std::vector<PriorityKeyDef> kDefs = {
    {"fcfs", "first come, first served (submit time)", nullptr, [](const JobFacts& j, const PriorityOptions&) { return Key{j.submit, 0}; }},
    {"lcfs", "last come, first served", nullptr, [](const JobFacts& j, const PriorityOptions&) { return Key{-j.submit, 0}; }},
    {"smallest", "fewest GPUs first, then submit time", nullptr, [](const JobFacts& j, const PriorityOptions&) { return Key{j.gpus, j.submit}; }},
    {"largest", "most GPUs first", nullptr, [](const JobFacts& j, const PriorityOptions&) { return Key{-j.gpus, 0}; }},
    {"sjf", "shortest estimated runtime first, then fewest GPUs", nullptr, [](const JobFacts& j, const PriorityOptions&) { return Key{j.estimate, j.gpus}; }},
    {"lpf", "longest estimated runtime first", nullptr, [](const JobFacts& j, const PriorityOptions&) { return Key{-j.estimate, 0}; }},
    {"saf", "smallest area (runtime x GPUs) first", nullptr, [](const JobFacts& j, const PriorityOptions&) { return Key{j.estimate * j.gpus, 0}; }},
    {"laf", "largest area (runtime x GPUs) first", nullptr, [](const JobFacts& j, const PriorityOptions&) { return Key{-j.estimate * j.gpus, 0}; }},
    {"sexp", "smallest expansion (wait + runtime) / GPUs first", &kSexpDrift, [](const JobFacts& j, const PriorityOptions&) { return Key{(j.wait + j.estimate) / j.gpus, 0}; }},
    {"lexp", "largest expansion (wait + runtime) / GPUs first", &kLexpDrift, [](const JobFacts& j, const PriorityOptions&) { return Key{-(j.wait + j.estimate) / j.gpus, 0}; }},
    {"srf", "smallest runtime / GPUs ratio first", nullptr, [](const JobFacts& j, const PriorityOptions&) { return Key{j.estimate / j.gpus, 0}; }},
    {"lrf", "largest runtime / GPUs ratio first", nullptr, [](const JobFacts& j, const PriorityOptions&) { return Key{-j.estimate / j.gpus, 0}; }},
    {"multifactor", "Slurm multifactor: age and job-size factors with configurable weights", &kMultifactorDrift, multifactor},
    {"f1", "F1 (Carastan-Santos & de Camargo): log10(r) x n + 870 x log10(s)", nullptr,
     [](const JobFacts& j, const PriorityOptions&) { return Key{safe_log10(j.estimate) * j.gpus + 870 * safe_log10(j.submit), 0}; }},
    {"f2", "F2: sqrt(r) x n + 25600 x log10(s)", nullptr,
     [](const JobFacts& j, const PriorityOptions&) { return Key{std::sqrt(j.estimate) * j.gpus + 25600 * safe_log10(j.submit), 0}; }},
    {"f3", "F3: r x n + 6860000 x log10(s)", nullptr,
     [](const JobFacts& j, const PriorityOptions&) { return Key{j.estimate * j.gpus + 6860000 * safe_log10(j.submit), 0}; }},
    {"f4", "F4: r x sqrt(n) + 530000 x log10(s)", nullptr,
     [](const JobFacts& j, const PriorityOptions&) { return Key{j.estimate * std::sqrt(j.gpus) + 530000 * safe_log10(j.submit), 0}; }},
    {"wfp", "WFP3: highest (wait / runtime)^3 x GPUs first", &kWfpDrift,
     [](const JobFacts& j, const PriorityOptions&) { return Key{-std::pow(j.wait / at_least_1s(j.estimate), 3) * j.gpus, 0}; }},
    {"uni", "UNICEP: highest wait / (log2(GPUs) x runtime) first", &kUniDrift,
     [](const JobFacts& j, const PriorityOptions&) {
       return Key{-(j.wait + 1e-15) / uni_divisor(j), 0};
     }},
};

class KeyPriority final : public PriorityPolicy {
 public:
  KeyPriority(const PriorityKeyDef& def, const PriorityOptions& options)
      : def_(def), options_(options), drift_(options.published_keys ? nullptr : def.drift), key_(def.key) {
    if (options.published_keys)
      for (const PublishedKey& p : kPublishedKeys)
        if (p.name == def.name) key_ = p.key;
  }

  void reset() override {
    sorted_.clear();
    keys_.clear();
    head_ = 0;
    ordered_at_ = -1;
    last_seen_ = -1;
    classes_.clear();
    heads_.clear();
    merged_at_ = -1;
    entries_ = 0;
    chains_ = 0;
    unchained_.clear();
  }

  std::span<const JobIndex> prefix(const sim::View& view, std::span<const JobIndex> queue, std::size_t count) override {
    if (keys_.size() != view.job_count()) {
      reset();
      keys_.resize(view.job_count());
    }
    if (drift_) return merged(view, queue, count);
    // Keys that do not depend on time: the whole order, kept incrementally. Within a decision it stays
    // as it is (a prefix asked for later must extend the one given before).
    const auto fresh = arrivals(queue);
    if (fresh.empty() && view.now() == ordered_at_) return std::span<const JobIndex>(sorted_).subspan(head_);
    ordered_at_ = view.now();
    const auto stale = [&](JobIndex j) { return !view.job(j).queued(); };
    // Started jobs stay in the list until cheap to drop: leading ones at once (FCFS-like orders start
    // from the front), the rest once they make up half the list (amortised O(1) per start).
    while (head_ < sorted_.size() && stale(sorted_[head_])) ++head_;
    if (sorted_.size() - head_ > 2 * queue.size() + 16 || head_ > sorted_.size() / 2) {
      sorted_.erase(sorted_.begin(), sorted_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
      std::erase_if(sorted_, stale);
    }
    // New arrivals join in order (ordered by their keys, which never change).
    for (const JobIndex j : fresh) keys_[j] = key_of(view, j);
    join(sorted_, head_, fresh);
    return std::span<const JobIndex>(sorted_).subspan(head_);
  }

 private:
  // A class of a time-dependent key (see Drift): its jobs by (rank, arrival), some maybe started.
  struct Class {
    std::vector<JobIndex> jobs;
    std::size_t head = 0;               // entries before it have all started
    std::size_t unsorted_from = kNone;  // arrivals appended from here, not yet in order
    JobIndex latest = -1;               // the job that joined last (chains)
    std::size_t next = 0;               // this decision's merge: the next job to feed
  };
  struct Head {
    Key key;
    JobIndex job;
    Class* from;
  };

  // Time-dependent keys: the order is produced lazily, by merging the classes' heads by their current
  // key, so a decision pays for the jobs it looks at (and one key per class), not for the whole queue.
  // The result is the order of a full sort by (key, arrival).
  std::span<const JobIndex> merged(const sim::View& view, std::span<const JobIndex> queue, std::size_t count) {
    const auto fresh = arrivals(queue);
    if (!fresh.empty() || view.now() != merged_at_) {
      add_to_classes(view, queue.size(), fresh);
      restart_merge(view);
    }
    while (merged_.size() < count && !heads_.empty()) {
      std::pop_heap(heads_.begin(), heads_.end(), after);
      const Head h = heads_.back();
      heads_.pop_back();
      merged_.push_back(h.job);
      if (add_head(view, *h.from)) std::push_heap(heads_.begin(), heads_.end(), after);
    }
    return merged_;
  }

  // New arrivals join classes. Chains take a job only once it has waited (at zero wait, wfp ties every
  // job, so arrival decides), and the jobs of one second in rank order, so that chains stay few.
  void add_to_classes(const sim::View& view, std::size_t queued, std::span<const JobIndex> fresh) {
    if (entries_ > 2 * queued + 16) {  // started jobs make up most entries: drop them
      entries_ = 0;
      for (auto& [id, c] : classes_) {
        std::erase_if(c.jobs, [&](JobIndex j) { return !view.job(j).queued(); });
        c.head = 0;
        entries_ += c.jobs.size();
      }
    }
    for (const JobIndex j : fresh) keys_[j] = {drift_->rank(facts_of(view, j), options_), 0};
    touched_.clear();
    if (drift_->class_of) {
      for (const JobIndex j : fresh) add_to(classes_[drift_->class_of(facts_of(view, j), options_)], j);
    } else {
      unchained_.insert(unchained_.end(), fresh.begin(), fresh.end());
      std::size_t waited = 0;
      while (waited < unchained_.size() && view.job(unchained_[waited]).submit() < view.now()) ++waited;
      std::sort(unchained_.begin(), unchained_.begin() + static_cast<std::ptrdiff_t>(waited), [&](JobIndex a, JobIndex b) {
        return std::tuple(view.job(a).submit(), keys_[a], a) < std::tuple(view.job(b).submit(), keys_[b], b);
      });
      for (std::size_t i = 0; i < waited; ++i)
        if (view.job(unchained_[i]).queued()) add_to(chain_for(view, facts_of(view, unchained_[i])), unchained_[i]);
      unchained_.erase(unchained_.begin(), unchained_.begin() + static_cast<std::ptrdiff_t>(waited));
    }
    for (Class* c : touched_) {
      added_.assign(c->jobs.begin() + static_cast<std::ptrdiff_t>(c->unsorted_from), c->jobs.end());
      c->jobs.resize(c->unsorted_from);
      c->unsorted_from = kNone;
      join(c->jobs, c->head, added_);
    }
  }
  void add_to(Class& c, JobIndex j) {
    c.latest = j;
    if (c.unsorted_from == kNone) {
      c.unsorted_from = c.jobs.size();
      touched_.push_back(&c);
    }
    c.jobs.push_back(j);
    ++entries_;
  }

  // The chain a job joins: of those whose latest job keeps ahead of it, the one with the highest rank
  // there (the closest, as in patience sorting, so that chains stay few); else a new one.
  Class& chain_for(const sim::View& view, const JobFacts& job) {
    Class* best = nullptr;
    for (auto& [id, c] : classes_)
      if (drift_->keeps_ahead(facts_of(view, c.latest), job) && (!best || keys_[c.latest] > keys_[best->latest])) best = &c;
    return best ? *best : classes_[Key{static_cast<double>(chains_++), 0}];
  }

  void restart_merge(const sim::View& view) {
    merged_at_ = view.now();
    merged_.clear();
    heads_.clear();
    for (auto at = classes_.begin(); at != classes_.end();) {
      Class& c = at->second;
      const std::size_t head = c.head;
      while (c.head < c.jobs.size() && !view.job(c.jobs[c.head]).queued()) ++c.head;
      entries_ -= c.head - head;
      if (c.head == c.jobs.size()) {  // every job of the class has started
        at = classes_.erase(at);
        continue;
      }
      ++at;
      if (c.head > c.jobs.size() / 2) {
        c.jobs.erase(c.jobs.begin(), c.jobs.begin() + static_cast<std::ptrdiff_t>(c.head));
        c.head = 0;
      }
      c.next = c.head;
      add_head(view, c);
    }
    // Jobs not yet in a chain arrived now: ordered by their keys.
    keyed_.clear();
    for (const JobIndex j : unchained_)
      if (view.job(j).queued()) keyed_.push_back({key_of(view, j), j});
    std::sort(keyed_.begin(), keyed_.end());
    arrived_now_.jobs.clear();
    for (const auto& [key, j] : keyed_) arrived_now_.jobs.push_back(j);
    arrived_now_.next = 0;
    add_head(view, arrived_now_);
    std::make_heap(heads_.begin(), heads_.end(), after);
  }

  // The class's next job still queued, if any, goes to the back of heads_ (the caller keeps the heap).
  bool add_head(const sim::View& view, Class& c) {
    while (c.next < c.jobs.size() && !view.job(c.jobs[c.next]).queued()) ++c.next;
    if (c.next == c.jobs.size()) return false;
    const JobIndex j = c.jobs[c.next++];
    heads_.push_back({key_of(view, j), j, &c});
    return true;
  }
  static bool after(const Head& a, const Head& b) { return a.key != b.key ? a.key > b.key : a.job > b.job; }

  // Adds `fresh` (keys_ set) to `order`, kept by (keys_, arrival) from `head`. A few
  // (the usual case: one per decision) each go in by a binary search and a block move, which costs far
  // less than a merge's comparisons over a long list; many at once are sorted, then merged.
  void join(std::vector<JobIndex>& order, std::size_t head, std::span<const JobIndex> fresh) const {
    if (fresh.size() <= kFewArrivals) {
      for (const JobIndex j : fresh) order.insert(std::upper_bound(order.begin() + static_cast<std::ptrdiff_t>(head), order.end(), j, less()), j);
      return;
    }
    const auto old_end = static_cast<std::ptrdiff_t>(order.size());
    order.insert(order.end(), fresh.begin(), fresh.end());
    std::sort(order.begin() + old_end, order.end(), less());
    std::inplace_merge(order.begin() + static_cast<std::ptrdiff_t>(head), order.begin() + old_end, order.end(), less());
  }

  std::span<const JobIndex> arrivals(std::span<const JobIndex> queue) { return sim::arrived_since(queue, last_seen_); }

  JobFacts facts_of(const sim::View& view, JobIndex j) const {
    const sim::JobView job = view.job(j);
    const auto submit = static_cast<double>(job.submit());
    const Seconds recorded = job.recorded_wait();
    return {submit, static_cast<double>(job.estimate()), static_cast<double>(job.gpus()),
            options_.published_keys ? -1 - submit : static_cast<double>(view.now() - job.submit()),
            static_cast<double>(view.cluster_spec().total_gpus()),
            recorded == trace::JobSpec::kUnrecorded ? std::nan("") : static_cast<double>(recorded)};
  }
  Key key_of(const sim::View& view, JobIndex j) const {
    Key key;
    try {
      key = key_(facts_of(view, j), options_);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: job {} (trace line {}): {}", def_.name, view.job(j).id(), view.job(j).source_line(), e.what()));
    }
    if (options_.ties_by_arrival) key.second = 0;  // the job index (arrival) decides ties
    // 0 / 0 (a job without GPUs under the published keys, which raise there) would break the order: last.
    for (double* part : {&key.first, &key.second})
      if (std::isnan(*part)) *part = std::numeric_limits<double>::infinity();
    return key;
  }
  // Order by keys_ (static keys, or time-dependent ranks), then arrival (job index).
  struct Before {
    const std::vector<Key>* keys;
    bool operator()(JobIndex a, JobIndex b) const { return (*keys)[a] != (*keys)[b] ? (*keys)[a] < (*keys)[b] : a < b; }
  };
  Before less() const { return Before{&keys_}; }

  static constexpr std::size_t kFewArrivals = 8;
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

  const PriorityKeyDef& def_;
  PriorityOptions options_;
  const Drift* drift_;  // def_'s, unless published keys (none depends on the time)
  Key (*key_)(const JobFacts& job, const PriorityOptions& options);
  std::vector<Key> keys_;  // by job index: the key (time-dependent keys: {rank, 0})
  // Keys that do not depend on time.
  std::vector<JobIndex> sorted_;  // serving order from head_; may hold jobs that already started
  std::size_t head_ = 0;          // entries before it have all started
  Seconds ordered_at_ = -1;       // the time of the last call
  JobIndex last_seen_ = -1;       // highest job index already ordered
  // Keys that do.
  std::map<Key, Class> classes_;  // those with a job queued (at the last restart)
  std::size_t entries_ = 0;       // their jobs from head (some may have started)
  std::size_t chains_ = 0;        // chains made (their names)
  std::vector<JobIndex> unchained_;  // chains: arrivals not yet in one (none has waited at the last restart)
  Class arrived_now_;                // those by their current keys, for the merge
  std::vector<std::pair<Key, JobIndex>> keyed_;
  std::vector<Class*> touched_;    // classes that took arrivals
  std::vector<JobIndex> added_;    // one class's arrivals
  Seconds merged_at_ = -1;        // the time merged_ and heads_ are for
  std::vector<JobIndex> merged_;  // the order so far at merged_at_; may hold jobs that started since
  std::vector<Head> heads_;       // min-heap by (key, job): each class's next job
};

}  // namespace

const std::vector<PriorityKeyDef>& priority_key_defs() { return kDefs; }

namespace {

const MultifactorSetting kMultifactorSettings[] = {
    {"--mf-age-weight", "age_weight", "Slurm PriorityWeightAge", -1e12, 1e12, &MultifactorOptions::age_weight},
    {"--mf-size-weight", "size_weight", "Slurm PriorityWeightJobSize", -1e12, 1e12, &MultifactorOptions::size_weight},
    {"--mf-max-age", "max_age_s", "Slurm PriorityMaxAge in seconds", 1e-9, 1e12, &MultifactorOptions::max_age_s},
};

const SamplingSetting kSamplingSettings[] = {
    {"--temperature", "temperature",
     "Sampled policies (rl-sampled, sjf-sampled): picks drawn in proportion to exp(score / temperature); higher spreads them",
     0.01, 100, &PriorityOptions::temperature},
};

}  // namespace

std::span<const MultifactorSetting> multifactor_settings() { return kMultifactorSettings; }
std::span<const SamplingSetting> sampling_settings() { return kSamplingSettings; }

void validate(const MultifactorOptions& options) { check_bounds(options, multifactor_settings(), "multifactor"); }

std::unique_ptr<PriorityPolicy> make_key_priority(const PriorityKeyDef& def, const PriorityOptions& options) {
  validate(options.multifactor);
  return std::make_unique<KeyPriority>(def, options);
}

}  // namespace rltune::policy
