#pragma once
// The episode environment the learner drives (issue 5): an episode is a window of jobs; at every decision
// point the agent picks one queued job (a slot of the observation), through the agent-driven picker of
// the one decision pass (rl/agent_picker.h: commitment, skip, masks, look-ahead order), exactly as a
// trained model runs in the simulator (`rl:DIR`). Under FCFS (whose order never changes while a job
// waits) an agent that always takes the first legal slot reproduces the baseline's schedule exactly;
// without commitment, so does an agent that follows any baseline. The episode ends when every job has
// ended. The reward is terminal: (baseline - rl) / max(baseline, rl, 1) on the chosen score, where the
// baseline is the `baseline` heuristic run on the same window with the same placement, blocking and
// backfilling (SPEC 6.5; backfilled jobs count in both scores, B11). A warm window first replays the jobs
// before it with fcfs, for both.
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
#include "rl/agent_picker.h"
#include "rl/observation.h"
#include "sim/engine.h"
#include "sim/window.h"

namespace rltune::rl {

// Scores, lower is better: average bounded slowdown, wait, JCT or slowdown over the window's completed
// jobs, or minus the GPU utilisation (GPU-seconds used / GPU-seconds available from first submit to last end).
enum class Score { bsld, wait, jct, sld, util };
inline constexpr NameTable<Score, 5> kScoreNames{"score", {{{Score::bsld, "bsld"}, {Score::wait, "wait"}, {Score::jct, "jct"}, {Score::sld, "sld"}, {Score::util, "util"}}}};
inline Score parse_score(const std::string& name) { return kScoreNames.parse(name); }  // InputError for unknown names
inline const char* to_string(Score value) { return kScoreNames.name(value); }
// Over the jobs from index `first_scored` on (earlier ones are a warm-up).
double score(const sim::Engine& finished, Score score, std::size_t first_scored = 0);

// Episodes are windows of a split (sim/window.h).
using sim::Split;

struct EnvOptions {
  // Episodes: windows of `length` jobs from the first `train_split` of the trace (the rest is halved into
  // validation and test: B6, they never overlap training), each after up to `warmup` jobs replayed first
  // by fcfs (with `profile`'s placement, blocking and backfilling), for the agent and the baseline alike:
  // they fill the cluster and the queue, and the agent decides once the window's first job has arrived.
  // Not scored. `count` is not read (the trainer draws as many windows as it needs).
  sim::WindowSettings window;
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

  // InputError naming the first window of `split` whose every job the cluster rejects at admission: a
  // reset that drew it would fail, perhaps deep into training. Check before drawing from a split. (Not
  // with a warm-up or the published loop, where the agent may decide on other jobs in such a window.)
  void check_windows_run(Split split) const;
  // Starts an episode on a window drawn from `split` with `rng`; returns the first observation.
  const Observation& reset(Rng& rng, Split split);
  // Starts an episode on the window [start, start + window.length).
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
  using Ranker = AgentPicker::Ranker;
  // The agent's scores, for look-ahead placements to know which jobs come next; none = slot order.
  void set_ranker(Ranker ranker);

  const Observation& observation() const { return agent_.observation(); }
  const sim::Engine& engine() const { return *engine_; }
  double baseline_score() const { return baseline_score_; }
  double agent_score() const { return agent_score_; }
  std::size_t window_start() const { return window_start_; }

 private:
  // Advances to the next point where the agent picks; false when every job has ended.
  bool next_decision();
  // After an action: the next decision, or the end of the episode with its reward.
  Step finish_step();

  const cluster::ClusterSpec& cluster_;
  std::span<const trace::JobSpec> jobs_;
  EnvOptions options_;
  policy::DecisionPass pass_;
  AgentPicker agent_;
  std::unique_ptr<sim::Engine> engine_;
  std::unique_ptr<policy::ProfileScheduler> warmup_;  // decides before agent_from_
  Seconds agent_from_ = 0;
  std::size_t warm_jobs_ = 0;  // this episode's warm-up jobs
  std::size_t window_start_ = 0;
  double baseline_score_ = 0, agent_score_ = 0;
};

}  // namespace rltune::rl
