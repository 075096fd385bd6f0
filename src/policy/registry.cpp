#include "policy/registry.h"

#include "policy/placement/milp_placement.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace rltune::policy {

namespace {

std::vector<PriorityEntry>& priorities() {
  static std::vector<PriorityEntry> all;
  return all;
}

std::vector<PlacementEntry>& placements() {
  static std::vector<PlacementEntry> all;
  return all;
}

template <typename Entry>
const Entry& find(const std::vector<Entry>& entries, const std::string& name, const char* what) {
  for (const auto& e : entries)
    if (e.name == name) return e;
  std::string known;
  for (const auto& e : entries) known += std::string(known.empty() ? "" : ", ") + e.name;
  throw InputError(fmt::format("unknown {} policy '{}' (known: {})", what, name, known));
}

}  // namespace

void register_priority(PriorityEntry entry) {
  for (const auto& e : priorities())
    if (e.name == entry.name) throw InvariantError("priority policy registered twice: " + entry.name);
  priorities().push_back(std::move(entry));
}

void register_placement(PlacementEntry entry) {
  for (const auto& e : placements())
    if (e.name == entry.name) throw InvariantError("placement policy registered twice: " + entry.name);
  placements().push_back(std::move(entry));
}

void register_builtins() {
  static bool done = false;
  if (done) return;
  done = true;
  for (const PriorityKeyDef& def : priority_key_defs())
    register_priority({def.name, def.description, [&def](const std::string& argument, const PriorityOptions& options) {
                         if (!argument.empty())
                           throw InputError(fmt::format("priority policy '{}' takes no argument (got '{}')", def.name, argument));
                         auto make = [&def, options] { return make_key_priority(def, options); };
                         return options.serves_heads ? make_head_picker(make) : make_order_picker(make);
                       }});
  register_placement({"greedy", "reference pick: lexicographically smallest (node, GPUs) list on the fewest nodes",
                      [](const ProfileOptions&) { return make_greedy_placement(); }});
  register_placement({"defrag", "fewest new partially used nodes, then least idle GPUs on them",
                      [](const ProfileOptions&) { return make_defrag_placement(); }});
  register_placement({"balance", "smallest increase in the variance of node utilisation",
                      [](const ProfileOptions&) { return make_balance_placement(); }});
  register_placement({"consolidate", "HeliosArtifact's: best-fit node for small jobs, whole free nodes for large ones",
                      [](const ProfileOptions&) { return make_consolidate_placement(); }});
  register_placement({"milp", "MILP over nodes grouped by free GPUs: fewer partial nodes, balanced load, room for "
                              "the next jobs (--milp-*)",
                      [](const ProfileOptions& o) { return make_milp_placement(o.milp); }});
}

const std::vector<PriorityEntry>& priority_policies() { return priorities(); }
const std::vector<PlacementEntry>& placement_policies() { return placements(); }

bool is_sampled(const std::string& spec) {
  const std::string name = spec.substr(0, spec.find_first_of(":@"));
  return std::any_of(priorities().begin(), priorities().end(), [&](const PriorityEntry& e) { return e.sampled && e.name == name; });
}

bool may_use_multifactor(const std::string& spec) {
  const std::string name = spec.substr(0, spec.find_first_of(":@"));
  return name == "multifactor" || name == "rl" || name == "rl-sampled";
}

std::string only_for_sampled() {
  std::string names;
  for (const PriorityEntry& e : priorities())
    if (e.sampled) names += (names.empty() ? "" : ", ") + e.name;
  return fmt::format("applies only to sampled policies ({})", names);
}

std::unique_ptr<Picker> make_picker(const std::string& spec, const PriorityOptions& options) {
  const auto colon = spec.find(':');
  const std::string argument = colon == std::string::npos ? "" : spec.substr(colon + 1);
  return find(priorities(), spec.substr(0, colon), "priority").make(argument, options);
}

std::unique_ptr<PriorityPolicy> make_priority(const std::string& name, const PriorityOptions& options) {
  return make_key_priority(find(priority_key_defs(), name, "priority"), options);
}

std::unique_ptr<PlacementPolicy> make_placement(const ProfileOptions& options) {
  return find(placements(), options.placement, "placement").make(options);
}

std::unique_ptr<ProfileScheduler> make_profile(const ProfileOptions& options) {
  return std::make_unique<ProfileScheduler>(options, make_picker(options.priority, options.priority_options),
                                            make_placement(options));
}

}  // namespace rltune::policy
