#pragma once
// A scheduler profile = a picker (a priority policy's order, or a learned policy) + one placement policy +
// blocking mode + optional EASY backfilling, deciding through the one decision pass.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policy/decision_pass.h"
#include "policy/placement/milp_placement.h"
#include "policy/placement/placement.h"
#include "policy/priority/priority.h"
#include "sim/engine.h"

namespace rltune::policy {

struct ProfileOptions {
  std::string priority = "fcfs";
  std::string placement = "greedy";
  Blocking blocking = Blocking::global;
  bool backfill = false;
  PriorityOptions priority_options;
  MilpOptions milp;  // used by --placement milp
  // A name from semantics_profiles() (pointing into that table); apply_semantics() sets what it fixes.
  std::string_view semantics = "rltune";
  // "fcfs", "sjf+backfill" ...: name used in outputs.
  std::string name() const;
};
// Scheduling semantics: the settings under which rltune reproduces another simulator's schedules. A
// profile fixes them; "rltune", the default, fixes nothing.
struct Semantics {
  const char* name;
  const char* description;
  const char* placement;  // nullptr = not fixed
  std::optional<Blocking> blocking;
  std::optional<bool> backfill;
  bool ties_by_arrival;  // PriorityOptions::ties_by_arrival
  bool serves_heads;     // PriorityOptions::serves_heads
  bool published_keys;   // PriorityOptions::published_keys
};
std::span<const Semantics> semantics_profiles();
const Semantics& find_semantics(std::string_view name);  // InputError listing the known names
// The settings a semantics fixes, as (key, value) text, keys named as in the experiment YAML (the CLI
// flag is "--" + key): ("placement", "consolidate"), ("blocking", "pool"), ("backfill", "false").
std::vector<std::pair<std::string, std::string>> fixed_settings(const Semantics& semantics);
// The value of one of those keys in `p`, as text.
std::string setting_text(const ProfileOptions& p, const std::string& key);
// Sets in `p` what p.semantics fixes (InputError for an unknown name).
void apply_semantics(ProfileOptions& p);

// The profile that replays a warm window's warm-up: fcfs with `profile`'s placement, blocking and backfilling.
ProfileOptions warmup_profile(const ProfileOptions& profile);

// At each decision point: a new decision pass, to which the picker offers jobs.
class ProfileScheduler final : public sim::Scheduler {
 public:
  ProfileScheduler(ProfileOptions options, std::unique_ptr<Picker> picker, std::unique_ptr<PlacementPolicy> placement);

  void begin_run(const sim::Engine& engine) override { picker_->begin_run(pass_, engine); }
  void decide(sim::Engine& engine) override;
  // The published baseline re-checks its head after every single event, and drops a head that can never run.
  bool follows_published_loop() const override { return options_.priority_options.serves_heads; }
  const ProfileOptions& options() const { return options_; }
  const PlacementPolicy& placement() const { return pass_.placement(); }
  Picker& picker() { return *picker_; }

 private:
  ProfileOptions options_;
  std::unique_ptr<Picker> picker_;
  DecisionPass pass_;
};

}  // namespace rltune::policy
