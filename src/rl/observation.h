#pragma once
// The RL agent's view of the queue (SPEC 6.1, with B26 fixed): the first kSlots jobs of the baseline
// heuristic's serving order, kFeatures numbers each, every one in [0, 1], computed the same way on every
// cluster. No torch here: the learner (rl/torch) only sees the arrays.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/names.h"
#include "core/types.h"
#include "sim/view.h"

namespace rltune::rl {

inline constexpr int kSlots = 128;
// Actions: a slot, or (with --skip) kSkip, which starts nothing and waits for the next event or
// kSkipTime, whichever comes first (SPEC 3.5, made reachable: B8).
inline constexpr int kSkip = kSlots;
inline constexpr int kActions = kSlots + 1;
inline constexpr Seconds kSkipTime = 600;
inline constexpr int kFeatures = 7;          // the paper's features
inline constexpr int kExtendedFeatures = 10;  // with --features extended
inline constexpr int kRankedFeatures = 11;    // with --features ranked
inline constexpr int kRealisticFeatures = 13;  // with --features realistic
inline constexpr int kMaxFeatures = kRealisticFeatures;

// Per job, for the pools E the job may use (its eligible pools, taken together):
//  0 wait        min((now - submit) / wait_scale_s, 1 - eps)
//  1 size        min(gpus / size_scale, 1 - eps)
//  2 demand      min((gpus / max(free(E), eps)) / max(capacity(E), 1), 1 - eps)
//  3 room        clip((free(E) - S + capacity(E)) / (2 capacity(E) + eps), 0, 1 - eps), S = GPUs asked by the
//                visible jobs with the same eligible pools
//  4 fragmented  partly used nodes of E / max(nodes of E with free GPUs, eps), at most 1 - eps
//  5 ways        ways / 3 (eps when 0), ways = (2 if several tier-1 candidates, 1 if one, else 0) + (1 if
//                any tier-2 candidate); candidates enumerated with relax on every cluster (B26)
//  6 start now   eps if no tier-1 candidate, 0.5 with one way, 1 - eps with several (the reference's 1.5
//                is out of range, B26)
// With --features extended, what a real cluster also knows (not in the paper):
//  7 runtime     log(1 + estimate) / log(1 + runtime_scale_s), at most 1 - eps (the engine's estimate:
//                oracle or requested, per --runtime)
//  8 age rank    rank of the job's submit time among the visible jobs / (visible - 1); 0 = oldest
//  9 pool load   busy GPUs of E / capacity of E
// With --features ranked, the extended ones and the baseline's own judgement, so that the policy can
// start from the baseline's order and learn where to leave it:
// 10 rank        the job's slot / (visible - 1): its place in the baseline's order; 0 = served first
// With --features realistic, the ranked ones and how far the estimate can be trusted, for runtimes that
// are not known (both 0 under oracle runtimes):
// 11 doubt       the user's recent estimate error, mean |ln(estimate/true)| (sim::EstimateDoubt) / 3, at most
//                1 - eps (a 20x error); 1 - eps when none of the user's jobs has finished yet
// 12 source      where a predicted estimate came from: sim::EstimateSource's index / 5 (0 = the user's jobs
//                of that size and VC ... 1 - eps = nothing known); 0 unless --runtime predicted
// Empty slots are [0, 1, 1, 1, 1, 1, 0] (+ [1, 1, 1] (+ [1] (+ [1, 1]))) as in the reference, but masked explicitly, not by
// pattern. Only they have size 1, which the attention variant's tensor code uses to tell them apart.
inline constexpr double kEps = 1e-5;

enum class FeatureSet { paper, extended, ranked, realistic };
inline constexpr NameTable<FeatureSet, 4> kFeatureSetNames{
    "feature set",
    {{{FeatureSet::paper, "paper"}, {FeatureSet::extended, "extended"}, {FeatureSet::ranked, "ranked"}, {FeatureSet::realistic, "realistic"}}}};
inline FeatureSet parse_feature_set(const std::string& name) { return kFeatureSetNames.parse(name); }  // InputError for unknown names
inline const char* to_string(FeatureSet value) { return kFeatureSetNames.name(value); }
inline int feature_count(FeatureSet set) {
  constexpr int counts[] = {kFeatures, kExtendedFeatures, kRankedFeatures, kRealisticFeatures};
  return counts[static_cast<int>(set)];
}

struct ObservationOptions {
  double wait_scale_s = 43200;     // the reference's 12 hours
  double size_scale = 8;           // the reference's 8 GPUs
  double runtime_scale_s = 604800;  // extended: a week
  FeatureSet features = FeatureSet::paper;
};

struct Observation {
  int features = kFeatures;                                // numbers per slot
  std::array<float, kSlots * kMaxFeatures> values{};  // slot-major, `features` per slot
  std::array<std::uint8_t, kActions> mask{};       // 1 = a legal action: a slot holding a queued job, or kSkip
  std::array<JobIndex, kSlots> jobs{};             // the job in each slot, -1 for an empty slot
  int visible = 0;                                 // slots in use
};

// What describe_visible may reuse from earlier observations, where enumerating placements and taking
// logarithms took most of its time: the tier counts of (pool, request) while the pool's stamp
// (ClusterState::pool_stamp) holds, and a job's runtime feature while its estimate holds. Features never
// depend on what it holds; one cache serves one thread.
class ObservationCache {
 public:
  struct Tiers {
    std::size_t tier1 = 0, tier2 = 0;
  };
  // Starts an observation: its first look-up of each (pool, request) checks the stamp, the others reuse it.
  void begin() { seen_.clear(); }
  Tiers tiers(const cluster::ClusterState& state, PoolId pool, const cluster::Request& request);
  // Feature 7 of job `j` (log(1 + estimate) / log(1 + runtime_scale_s), bounded).
  float runtime(JobIndex j, Seconds estimate, double runtime_scale_s);

 private:
  struct Key {
    PoolId pool;
    cluster::Request request;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  struct Counted {
    std::uint64_t stamp;
    Tiers tiers;
  };
  std::unordered_map<Key, Counted, KeyHash> tiers_;
  std::vector<std::pair<Key, Tiers>> seen_;  // this observation's: few, and a scan is quicker than a hash
  double runtime_scale_s_ = -1;
  std::vector<std::pair<Seconds, float>> runtime_;  // by job: the estimate and its feature
};

// Fills `out` from `view` with the queued jobs of `order` (the baseline's serving order; jobs no longer
// queued are skipped), the first kSlots of them. Deterministic.
void observe(const sim::View& view, std::span<const JobIndex> order, Observation& out,
             const ObservationOptions& options = {});
// observe() in two parts: which jobs the slots hold and the mask (quick), then the slots' features from
// the same view (most of the time), with what `cache` kept from earlier observations.
void select_visible(const sim::View& view, std::span<const JobIndex> order, Observation& out, const ObservationOptions& options);
void describe_visible(const sim::View& view, Observation& out, const ObservationOptions& options, ObservationCache& cache);

}  // namespace rltune::rl
