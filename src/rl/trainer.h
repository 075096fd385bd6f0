#pragma once
// The training loop (torch-free): each epoch plays `trajs` episodes on training windows in parallel
// threads with the current policy, updates the learner, scores the policy on fixed validation windows
// (its argmax, or its draws with --validation-temperature), and checkpoints atomically into the run directory:
//   config.json   the run's settings (checked on --resume: a resumed run must use the same ones)
//   model.pt      policy, value and optimiser state after the last epoch (+ the loop's own state)
//   policy.json   the last policy's weights for the torch-free forward pass (`rl:DIR`)
//   best.pt, best.json  the same for the epoch with the best validation return
//   progress.csv  one row per epoch
// Every trajectory draws from its own seeded stream and the update sums in a fixed order or exactly, so a
// run is identical whatever the thread count, and whatever the number of MPI ranks it is spread over
// (each rank plays a block of the trajectories; rank 0 writes the files).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "core/comm.h"
#include "rl/env.h"
#include "rl/learner.h"
#include "trace/job_spec.h"

namespace rltune::rl {

// Whose picks behaviour cloning learns: the --baseline's, a clairvoyant teacher's (of the visible jobs,
// the one with the shortest true duration), or sjf-sampled's draws (rollout.h).
enum class Teacher { baseline, clairvoyant, sjf_sampled };
inline constexpr NameTable<Teacher, 3> kTeacherNames{
    "teacher", {{{Teacher::baseline, "baseline"}, {Teacher::clairvoyant, "clairvoyant"}, {Teacher::sjf_sampled, "sjf-sampled"}}}};

struct TrainOptions {
  EnvOptions env;
  Arch arch = Arch::mlp;
  PpoOptions ppo;
  int imitation_epochs = 0;  // behaviour cloning of the teacher's picks before PPO (each: trajs episodes)
  Teacher teacher = Teacher::baseline;
  int epochs = 100;
  int trajs = 100;
  int threads = 1;
  std::uint64_t seed = 0;
  int validation_windows = 10;
  double validation_temperature = 0;  // validation draws the picks at this temperature; 0: the argmax
  std::string out;  // run directory
  bool resume = false;
  bool progress = true;  // progress bar / lines on stderr
};

// The numeric settings of a training run that train's flags set: flag, key in config.json's options,
// meaning, bounds. train() refuses values outside them.
std::span<const NumberSetting<TrainOptions>> train_settings();

struct EpochRecord {
  int epoch = 0;  // 1-based
  double mean_return = 0, baseline_score = 0, rl_score = 0;
  double policy_loss = 0, value_loss = 0, kl = 0, entropy = 0, clip_fraction = 0;
  int policy_iters = 0;
  double validation_return = 0;
  bool best = false;
  // Timing: the only columns that vary between identical runs. decisions_per_s: every rank's rollout
  // decisions over the slowest rank's rollout time; by rank: each rank's own rate, space-separated.
  double decisions_per_s = 0, wall_s = 0;
  std::string decisions_per_s_by_rank;
};

// The contents of policy.json / best.json: the weights and everything needed to observe as in training.
nlohmann::json policy_file(const PolicyNet& net, const EnvOptions& env, int epoch);

// The scheduling rules a model was trained under, as its run's config.json records them. A model run
// under other rules still works, but what it learned (when blocking bites, how far estimates can be
// trusted) may not carry over.
struct Regime {
  policy::Blocking blocking = policy::Blocking::global;
  bool backfill = false;
  sim::RuntimeKnowledge runtime = sim::RuntimeKnowledge::oracle;
  bool reference = false;  // the published environment's step (--semantics reference)
  bool backfill_limits = false;  // backfilling planned with time limits (--backfill-limits)
  std::string cluster;           // preset name or YAML path ("" = not recorded)
};
// The regime in a training run's config.json; nullopt when it does not say (not a training config).
std::optional<Regime> parse_regime(const nlohmann::json& config);
// How `run` differs from `trained`, one phrase per rule ("blocking pool (trained: global)"); empty when alike.
std::vector<std::string> regime_differences(const Regime& trained, const Regime& run);

struct PolicyFile {
  PolicyNet net;
  std::string baseline;
  ObservationOptions observation;
  std::string score;
  bool commit = true;  // EnvOptions::commit
  int epoch = 0;
  std::string path;                // where it was loaded from ("" when parsed from memory)
  std::vector<std::string> files;  // the files read: the policy file, and the config.json beside it if any
  std::optional<Regime> regime;  // from the config.json beside it, when there is one
  // What it was trained on, from that config.json: the trace's source ("generated(...)" or the file
  // as given) and the share of its jobs, from the first, that training windows came from.
  struct TrainedOn {
    std::string trace;
    double train_split = 0;
  };
  std::optional<TrainedOn> trained_on;
};
PolicyFile parse_policy_file(const nlohmann::json& j, const std::string& where);  // InputError when malformed
// Loads DIR/best.json (else DIR/policy.json), or the file itself when `path` is a file, with the regime
// of the config.json in the same folder (an unreadable one is an InputError).
PolicyFile load_policy(const std::string& path);

// `config` = the caller's description of the run (cluster, trace, options), written into config.json
// with the options above. Returns every epoch's record, including those of a resumed run.
// With several ranks every rank calls it with the same arguments and a learner on the same `comm`; the
// run directory must be one that every rank sees (a shared file system) for --resume.
std::vector<EpochRecord> train(const cluster::ClusterSpec& cluster, std::span<const trace::JobSpec> jobs,
                               const TrainOptions& options, Learner& learner, nlohmann::json config,
                               const Comm& comm = single_process());

// The run configuration as JSON (what config.json holds besides the caller's part).
nlohmann::json to_json(const TrainOptions& options);

}  // namespace rltune::rl
