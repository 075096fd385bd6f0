#pragma once
// Queue orderings (SPEC section 5, with the fixes of DESIGN.md section 2): every wait is the simulated
// wait (now - submit) and every runtime is the engine's estimate, never the true duration.
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/settings.h"
#include "sim/view.h"

namespace rltune::policy {

// Slurm multifactor (age + job size). Priority = age_weight * min(wait / max_age, 1)
// + size_weight * size factor; size factor = gpus / cluster GPUs (favor_small: 1 - that).
struct MultifactorOptions {
  double age_weight = 1000;      // Slurm PriorityWeightAge
  double size_weight = 1000;     // Slurm PriorityWeightJobSize
  double max_age_s = 7 * 86400;  // Slurm PriorityMaxAge (default 7 days), > 0
  bool favor_small = false;      // Slurm PriorityFavorSmall (default NO)
};

// Its numeric settings (the CLI's --mf-* flags, YAML's multifactor.KEY), in config.json order.
using MultifactorSetting = NumberSetting<MultifactorOptions>;
std::span<const MultifactorSetting> multifactor_settings();
void validate(const MultifactorOptions& options);  // InputError naming the setting out of its bounds

struct PriorityOptions;
// The sampled policies' numeric settings (the CLI's --temperature, YAML's temperature).
using SamplingSetting = NumberSetting<PriorityOptions>;
std::span<const SamplingSetting> sampling_settings();

struct PriorityOptions {
  MultifactorOptions multifactor;
  std::uint64_t seed = 1;  // seeds stochastic policies (rl-sampled, sjf-sampled); each run restarts the stream
  // Sampled policies draw each pick with probability proportional to exp(score / temperature): higher
  // spreads the picks, lower concentrates them on the best score.
  double temperature = 1;
  // Keys break ties by arrival only (sjf: not by GPU count first), as HeliosArtifact's stable sorts do.
  bool ties_by_arrival = false;
  // The published RLTune's baseline loop: one head at a time, waited for until it fits (make_head_picker).
  bool serves_heads = false;
  // The published RLTune's keys (B4, B5): a queued job's wait is read as -1 - s (its scheduled_time is
  // still -1), so no key depends on the time; multifactor is its two-factor form over the trace's
  // recorded wait; f2-f4 take log10 of the submit time unguarded, as written (the published code
  // raises there, on an attribute it lacks, and does not register them).
  bool published_keys = false;
};

class PriorityPolicy {
 public:
  virtual ~PriorityPolicy() = default;
  // Forgets per-run state; called before each run.
  virtual void reset() {}
  // The queue in serving order (first = served first; ties keep arrival order). The list may
  // also hold jobs that have left the queue (started): callers skip every job whose state is not
  // queued. Valid until the next call; policies keep it incrementally, so a decision does not cost a
  // sort of the whole queue.
  std::span<const JobIndex> order(const sim::View& view) { return order(view, view.queue()); }
  // The same for a part of the queue (in arrival order, like view.queue()): the order of those jobs
  // only. Each instance must be given the same part, or parts that only grow, run after run.
  std::span<const JobIndex> order(const sim::View& view, std::span<const JobIndex> queue) {
    return prefix(view, queue, std::numeric_limits<std::size_t>::max());
  }
  // At least the first `count` entries of that order (all of it when it is shorter). Until time moves
  // or jobs arrive, a longer prefix extends the shorter one, so a walk that stops early can ask for
  // more as it goes and never pay for the whole order.
  virtual std::span<const JobIndex> prefix(const sim::View& view, std::span<const JobIndex> queue, std::size_t count) = 0;
};

// What a key function sees of a job.
struct JobFacts {
  double submit;    // s
  double estimate;  // r, the runtime estimate
  double gpus;      // n
  double wait;      // w = now - submit (published keys: -1 - submit)
  double cluster_gpus;
  double recorded_wait;  // the trace's (JobSpec::recorded_wait); NaN when it has none
};

// How a key that changes with time keeps order while jobs wait: the queue is split into classes whose
// jobs keep their order among themselves (by rank, then arrival) at every wait, so a decision merges
// the classes' fixed orders by the current key instead of re-keying the whole queue. Classes are named
// by a key of the job (class_of), or are chains: a job joins a class whose latest job keeps ahead of it
// (keeps_ahead, for a job that arrived no later); ranks then never fall along a chain.
struct Drift {
  std::pair<double, double> (*class_of)(const JobFacts& job, const PriorityOptions& options);  // null: chains
  double (*rank)(const JobFacts& job, const PriorityOptions& options);
  bool (*keeps_ahead)(const JobFacts& earlier, const JobFacts& later);
};

// A priority defined by a sort key (smaller first) that may or may not depend on the current time.
struct PriorityKeyDef {
  const char* name;
  const char* description;
  const Drift* drift;  // null: the key does not depend on the time
  // Two-level key; ties beyond it keep arrival order.
  std::pair<double, double> (*key)(const JobFacts& job, const PriorityOptions& options);

  bool time_dependent() const { return drift != nullptr; }
};

const std::vector<PriorityKeyDef>& priority_key_defs();
std::unique_ptr<PriorityPolicy> make_key_priority(const PriorityKeyDef& def, const PriorityOptions& options);

}  // namespace rltune::policy
