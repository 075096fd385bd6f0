#pragma once
// A scheduler profile = a picker (a priority policy's order, or a learned policy) + one placement policy +
// blocking mode + optional EASY backfilling, deciding through the one decision pass.
#include <memory>
#include <string>
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
  // "fcfs", "sjf+backfill" ...: name used in outputs.
  std::string name() const;
};
// The profile that replays a warm window's warm-up: fcfs with `profile`'s placement, blocking and backfilling.
ProfileOptions warmup_profile(const ProfileOptions& profile);

// At each decision point: a new decision pass, to which the picker offers jobs.
class ProfileScheduler final : public sim::Scheduler {
 public:
  ProfileScheduler(ProfileOptions options, std::unique_ptr<Picker> picker, std::unique_ptr<PlacementPolicy> placement);

  void begin_run(const sim::Engine& engine) override { picker_->begin_run(pass_, engine); }
  void decide(sim::Engine& engine) override;
  const ProfileOptions& options() const { return options_; }
  const PlacementPolicy& placement() const { return pass_.placement(); }
  Picker& picker() { return *picker_; }

 private:
  ProfileOptions options_;
  std::unique_ptr<Picker> picker_;
  DecisionPass pass_;
};

}  // namespace rltune::policy
