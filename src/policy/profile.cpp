#include "policy/profile.h"

#include <fmt/format.h>

#include "core/error.h"

namespace rltune::policy {

namespace {

const Semantics kSemantics[] = {
    {"rltune", "rltune's own (the README's): every setting is the user's", nullptr, std::nullopt, std::nullopt, false, false, false},
    {"helios", "HeliosArtifact's QSSF Service simulator: consolidate placement, each VC on its own (pool blocking), "
               "no backfilling, priority ties by arrival",
     "consolidate", Blocking::pool, false, true, false, false},
    {"reference", "the published RLTune's baseline: greedy placement, one head at a time waited for until it fits "
                  "(with its own backfilling if asked), its priority keys, jobs that can never run dropped at the head",
     "greedy", Blocking::global, std::nullopt, false, true, true},
};

}  // namespace

std::span<const Semantics> semantics_profiles() { return kSemantics; }

const Semantics& find_semantics(std::string_view name) {
  std::string known;
  for (const Semantics& s : kSemantics) {
    if (s.name == name) return s;
    known += std::string(known.empty() ? "" : ", ") + s.name;
  }
  throw InputError(fmt::format("unknown semantics '{}' (known: {})", name, known));
}

std::vector<std::pair<std::string, std::string>> fixed_settings(const Semantics& s) {
  std::vector<std::pair<std::string, std::string>> out;
  if (s.placement) out.emplace_back("placement", s.placement);
  if (s.blocking) out.emplace_back("blocking", to_string(*s.blocking));
  if (s.backfill) out.emplace_back("backfill", *s.backfill ? "true" : "false");
  return out;
}

std::string setting_text(const ProfileOptions& p, const std::string& key) {
  if (key == "placement") return p.placement;
  if (key == "blocking") return to_string(p.blocking);
  if (key == "backfill") return p.backfill ? "true" : "false";
  throw InvariantError("no profile setting " + key);
}

void apply_semantics(ProfileOptions& p) {
  const Semantics& s = find_semantics(p.semantics);
  if (s.placement) p.placement = s.placement;
  if (s.blocking) p.blocking = *s.blocking;
  if (s.backfill) p.backfill = *s.backfill;
  p.priority_options.ties_by_arrival = s.ties_by_arrival;
  p.priority_options.serves_heads = s.serves_heads;
  p.priority_options.published_keys = s.published_keys;
}

ProfileOptions warmup_profile(const ProfileOptions& profile) {
  ProfileOptions warmup = profile;
  warmup.priority = "fcfs";
  warmup.priority_options = {};
  // The engine follows one loop for the whole run: under the published one, so does the warm-up.
  warmup.priority_options.serves_heads = profile.priority_options.serves_heads;
  warmup.priority_options.published_keys = profile.priority_options.published_keys;
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
