#include "policy/profile.h"

namespace rltune::policy {

ProfileOptions warmup_profile(const ProfileOptions& profile) {
  ProfileOptions warmup = profile;
  warmup.priority = "fcfs";
  warmup.priority_options = {};
  return warmup;
}

std::string ProfileOptions::name() const {
  std::string n = priority;
  if (placement != "greedy") n += "@" + placement;  // as the policy lists write it
  if (backfill) n += "+backfill";
  return n;
}

ProfileScheduler::ProfileScheduler(ProfileOptions options, std::unique_ptr<Picker> picker,
                                   std::unique_ptr<PlacementPolicy> placement)
    : options_(std::move(options)),
      picker_(std::move(picker)),
      pass_(options_.blocking, options_.backfill, std::move(placement)) {}

void ProfileScheduler::decide(sim::Engine& engine) {
  pass_.begin(engine);
  picker_->decide(pass_);
}

}  // namespace rltune::policy
