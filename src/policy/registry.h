#pragma once
// Policies by name. register_builtins() registers the heuristics; later modules (e.g. the learned
// policy) register themselves the same way. Unknown names are InputErrors listing the known ones.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "policy/profile.h"

namespace rltune::policy {

struct PriorityEntry {
  std::string name;
  std::string description;
  // `argument` is the text after "NAME:" in "--policy NAME:ARG" ("" when absent).
  std::function<std::unique_ptr<Picker>(const std::string& argument, const PriorityOptions& options)> make;
  bool sampled = false;  // it draws its picks, so the sampling settings (--temperature) apply to it
};

struct PlacementEntry {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<PlacementPolicy>(const ProfileOptions& options)> make;
};

void register_priority(PriorityEntry entry);
void register_placement(PlacementEntry entry);
// Registers every built-in priority and placement policy; calling it again does nothing.
void register_builtins();

const std::vector<PriorityEntry>& priority_policies();
const std::vector<PlacementEntry>& placement_policies();

// Whether "NAME", "NAME:ARG" or either with "@PLACEMENT" names a registered policy that draws its picks
// (rl-sampled, sjf-sampled).
bool is_sampled(const std::string& spec);
// "applies only to sampled policies (NAMES)": the error for a sampling setting where none samples.
std::string only_for_sampled();
// Whether the policy may read the multifactor settings: multifactor itself, or a learned model, whose
// baseline may be multifactor.
bool may_use_multifactor(const std::string& spec);
// Builds one policy's picker by name ("NAME" or "NAME:ARG"); InputError for unknown names.
std::unique_ptr<Picker> make_picker(const std::string& spec, const PriorityOptions& options);
// A priority order by name (fcfs, sjf...: the ones defined by a sort key), as a learned policy's
// baseline; InputError for other names.
std::unique_ptr<PriorityPolicy> make_priority(const std::string& name, const PriorityOptions& options);
std::unique_ptr<PlacementPolicy> make_placement(const ProfileOptions& options);
// Builds a profile from options; throws InputError for unknown policy names.
std::unique_ptr<ProfileScheduler> make_profile(const ProfileOptions& options);

}  // namespace rltune::policy
