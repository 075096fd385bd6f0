#pragma once
// The episode environment the learner drives (issue 5): an episode is a window of jobs; at every decision
// point the agent picks one queued job (a slot of the observation). The pick is a commitment, as in the
// reference (SPEC 3.4; EnvOptions::commit turns it off): if the job fits it starts now; if not, it
// starts first as soon as it fits and meanwhile blocks, as the simulator's --blocking says, every pool
// (global: nothing else starts, time moves on event by event) or only its own (pool: the agent keeps
// picking among jobs of other pools; jobs with no open pool are masked). The `rl` policy does the same
// in the simulator. Under FCFS (whose order never changes while a job waits) an agent that always takes
// slot 0 reproduces the baseline's schedule exactly; under orders that arrivals can change (sjf...) the
// baseline may switch to a newly arrived job while the agent stays committed (without commitment, it
// switches too, and any baseline is reproduced). The episode ends when every job has ended. The reward
// is terminal: (baseline - rl) / max(baseline, rl, 1) on the chosen score, where the baseline is the `baseline`
// heuristic run on the same window with the same placement (SPEC 6.5). With backfilling
// (profile.backfill), a blocked pool also takes jobs that fit now and end, by their estimate, before the
// blocking job's reservation (EASY), exactly as in the simulator's ProfileScheduler: those jobs stay legal
// actions while others are blocked, and they count in both scores (B11). Look-ahead placements (milp)
// see the queued jobs after the one being placed in the order the simulator's `rl` policy walks: the
// committed job, then the observed jobs by the ranker's logits (slot order without one), then the rest
// of the queue in baseline order.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cluster/cluster_spec.h"
#include "core/rng.h"
#include "policy/registry.h"
#include "rl/observation.h"
#include "sim/engine.h"

namespace rltune::rl {

// Scores, lower is better: average bounded slowdown, wait, JCT or slowdown over the window's completed
// jobs, or minus the GPU utilisation (GPU-seconds used / GPU-seconds available from first submit to last end).
enum class Score { bsld, wait, jct, sld, util };
Score parse_score(const std::string& name);  // InputError for unknown names
const char* to_string(Score score);
double score(const sim::Engine& finished, Score score);

enum class Split { train, validation, test, all };
Split parse_split(const std::string& name);  // InputError for unknown names
const char* to_string(Split split);
// [first, last) job indices of `split` in a trace of `jobs` jobs: the first train_split of the jobs (by
// index) train; the rest is halved into validation and test (B6: they never overlap training).
std::pair<std::size_t, std::size_t> split_range(std::size_t jobs, double train_split, Split split);
// The start of a window of `len` jobs drawn uniformly from `split` with `rng` (as training and
// evaluation draw them); InputError when the split holds fewer than `len` jobs.
std::size_t draw_window(Rng& rng, std::size_t jobs, double train_split, Split split, std::size_t len);

struct EnvOptions {
  int window_len = 256;
  double train_split = 0.7;     // the first 70% of the jobs (by index) give training windows; the rest is
                                // halved into validation and test (B6: they never overlap training)
  std::string baseline = "fcfs";
  Score score = Score::bsld;
  policy::ProfileOptions profile;  // placement and priority options for the agent and the baseline
  sim::EngineOptions engine;       // runtime knowledge
  ObservationOptions observation;
  bool skip = false;  // --skip: the agent may also wait (kSkip) while something is still to happen
  // A pick that cannot start yet is a commitment (the reference, SPEC 3.4): it starts first as soon as
  // it fits. Without (--reconsider), it only blocks until the next event, after which the agent picks
  // again, as the heuristics do; an agent that follows any baseline's order then reproduces it.
  bool commit = true;
};

class Env {
 public:
  // `jobs` (sorted by submit) must outlive the environment.
  Env(const cluster::ClusterSpec& cluster, std::span<const trace::JobSpec> jobs, EnvOptions options);

  // Starts an episode on a window drawn from `split` with `rng`; returns the first observation.
  const Observation& reset(Rng& rng, Split split);
  // Starts an episode on the window [start, start + window_len).
  const Observation& reset_at(std::size_t start);

  struct Step {
    bool done = false;
    double reward = 0;  // nonzero only when done
  };
  // Picks the job in `slot` (must be unmasked; otherwise InvariantError) and starts it, now if it fits,
  // else at the first event after which it fits. kSkip starts nothing and moves on to the next event or
  // kSkipTime later, whichever comes first.
  // Returns done with the terminal reward, or not done with observation() updated.
  Step step(int slot);

  // Writes one logit per slot of an observation, as the agent scores it.
  using Ranker = std::function<void(const Observation&, std::span<float>)>;
  // The agent's scores, for look-ahead placements to know which jobs come next; none = slot order.
  void set_ranker(Ranker ranker) { ranker_ = std::move(ranker); }

  const Observation& observation() const { return observation_; }
  const sim::Engine& engine() const { return *engine_; }
  double baseline_score() const { return baseline_score_; }
  double agent_score() const { return agent_score_; }
  std::size_t window_start() const { return window_start_; }

 private:
  // Advances to the next decision point with a job that may start and refreshes the observation (jobs
  // whose pools are all blocked are masked); false when done.
  bool next_decision();
  // After an action: the next decision, or the end of the episode with its reward.
  Step finish_step();
  // Starts `j` if it fits now in one of its open pools or, with backfilling, a blocked pool it may
  // backfill into.
  bool try_start(JobIndex j);
  // When no visible job may be picked: the queued jobs beyond the visible slots, in baseline order, start
  // or block as in the simulator's `rl` policy (which serves them after the jobs it ranked). True when
  // one started.
  bool serve_unseen();
  bool start_in(JobIndex j, std::span<const PoolId> pools);
  // ranked_ = the jobs `obs` shows, best logit first (look-ahead placements only).
  void rank(const Observation& obs);
  // upcoming_ = the queued jobs after `j` in the `rl` policy's order, up to the placement's look-ahead.
  void collect_upcoming(JobIndex j);
  void block(JobIndex j);
  void unblock();

  const cluster::ClusterSpec& cluster_;
  std::span<const trace::JobSpec> jobs_;
  EnvOptions options_;
  std::unique_ptr<policy::PriorityPolicy> order_;      // the baseline's order: the observation's slot order
  std::unique_ptr<policy::PlacementPolicy> placement_;
  std::unique_ptr<sim::Engine> engine_;
  Observation observation_;
  std::size_t window_start_ = 0;
  JobIndex committed_ = -1;   // the job the agent chose that has not started yet
  policy::PassState pass_;     // blocked pools and reservations, since the last start or event
  std::vector<PoolId> pools_;
  Ranker ranker_;
  std::vector<JobIndex> ranked_;  // the current observation's jobs by the agent's logits (look-ahead only)
  std::array<float, kActions> logits_{};
  std::vector<policy::UpcomingJob> upcoming_;
  std::vector<char> seen_;  // per job, scratch of collect_upcoming
  double baseline_score_ = 0, agent_score_ = 0;
};

}  // namespace rltune::rl
