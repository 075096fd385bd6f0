// Golden tests against schedules recorded from the published RLTune environment (../shared/
// reference-schedules, see its README): under --semantics reference, every window starts every job at
// the recorded time, with the same placements up to the names of nodes. They skip when that folder is
// absent (fresh clones).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "helpers.h"
#include "policy/registry.h"
#include "rl/env.h"
#include "rl/rl_policy.h"
#include "trace/reader.h"

namespace rltune {
namespace {

const std::string kDir = RLTUNE_REFERENCE_SCHEDULES;
constexpr std::size_t kWindow = 256;

// A schedule's placements as each pool's multiset of per-node histories ((start, job, GPUs) in time
// order), so that two schedules compare equal whatever their nodes are called.
using NodeHistory = std::vector<std::tuple<Seconds, std::string, int>>;
using Placements = std::map<std::string, std::multiset<NodeHistory>>;

Placements by_node(const std::map<std::string, std::pair<Seconds, std::string>>& jobs) {
  std::map<std::pair<std::string, std::string>, NodeHistory> nodes;
  for (const auto& [job, placed] : jobs) {
    const auto& [start, text] = placed;
    std::size_t from = 0;
    while (from < text.size()) {
      const std::size_t plus = std::min(text.find('+', from), text.size());
      const std::string share = text.substr(from, plus - from);
      const std::size_t colon = share.rfind(':'), dash = share.rfind('-', colon);
      nodes[{share.substr(0, dash), share.substr(dash + 1, colon - dash - 1)}].emplace_back(start, job, std::stoi(share.substr(colon + 1)));
      from = plus + 1;
    }
  }
  Placements out;
  for (auto& [node, history] : nodes) {
    std::sort(history.begin(), history.end());
    out[node.first].insert(history);
  }
  return out;
}

void expect_reproduced(const std::string& trace_name, const std::string& priority) {
  const std::string trace_file = kDir + "/" + trace_name + "_canonical.csv", schedule_file = kDir + "/" + trace_name + "_" + priority + ".json";
  if (!std::filesystem::exists(schedule_file)) GTEST_SKIP() << "no " << schedule_file << " (../shared/reference-schedules is absent)";
  const trace::Trace trace = trace::read_trace(trace_file, {});
  const nlohmann::json recorded = nlohmann::json::parse(std::ifstream(schedule_file));
  const auto cluster = cluster::load_cluster("helios");
  policy::ProfileOptions profile = testing::profile(priority);
  profile.semantics = "reference";
  policy::apply_semantics(profile);
  int windows = 0;
  for (const auto& window : recorded.at("per_batch")) {
    const auto start = window.at("start").get<std::size_t>();
    SCOPED_TRACE(fmt::format("{} {} window at {}", trace_name, priority, start));
    ASSERT_LE(start + kWindow, trace.jobs.size());
    const std::vector<trace::JobSpec> jobs(trace.jobs.begin() + static_cast<std::ptrdiff_t>(start),
                                           trace.jobs.begin() + static_cast<std::ptrdiff_t>(start + kWindow));
    const testing::Outcome outcome = testing::simulate(cluster, jobs, profile);
    std::map<std::string, std::pair<Seconds, std::string>> ours, theirs;
    for (const auto& r : outcome.run.jobs) ours[r.job_id] = {r.start, r.placement};
    for (const auto& [job, start_time] : window.at("jobs").items())
      theirs[job] = {start_time.get<Seconds>(), window.at("placements").at(job).get<std::string>()};
    ASSERT_EQ(ours.size(), theirs.size());
    int differing = 0;
    for (const auto& [job, placed] : theirs) differing += ours.at(job).first != placed.first;
    EXPECT_EQ(differing, 0) << "start times differ";
    EXPECT_EQ(by_node(ours), by_node(theirs)) << "placements differ";
    ++windows;
  }
  EXPECT_GE(windows, 7);
}

TEST(ReferenceSchedules, SyntheticFcfs) { expect_reproduced("synthetic", "fcfs"); }
TEST(ReferenceSchedules, SyntheticSjf) { expect_reproduced("synthetic", "sjf"); }
TEST(ReferenceSchedules, SyntheticF1) { expect_reproduced("synthetic", "f1"); }
TEST(ReferenceSchedules, Gen5vcFcfs) { expect_reproduced("gen5vc", "fcfs"); }
TEST(ReferenceSchedules, Gen5vcSjf) { expect_reproduced("gen5vc", "sjf"); }
TEST(ReferenceSchedules, Gen5vcF1) { expect_reproduced("gen5vc", "f1"); }

// One event at a time and one head at a time change nothing for FCFS unless events coincide (jobs that
// arrive together are admitted one by one; a head may start before every job ending with it has
// released its GPUs, which changes its placement): without coincidences, FCFS schedules are equal.
TEST(ReferenceSemantics, FcfsEqualsTheDefaultWhenNoEventsCoincide) {
  int without_coincidences = 0;
  for (const std::uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    testing::GeneratedWorkload w("helios", 300, 1.2, seed);
    for (std::size_t i = 1; i < w.trace.jobs.size(); ++i)  // distinct arrival seconds
      w.trace.jobs[i].submit = std::max(w.trace.jobs[i].submit, w.trace.jobs[i - 1].submit + 1);
    policy::ProfileOptions reference = testing::profile("fcfs");
    reference.semantics = "reference";
    policy::apply_semantics(reference);
    const auto ours = testing::simulate(w.cluster, w.trace.jobs, testing::profile("fcfs"));
    std::set<Seconds> ends;
    bool coincide = false;
    for (const auto& r : ours.run.jobs) coincide = coincide || !ends.insert(r.end).second;
    if (coincide) continue;
    ++without_coincidences;
    const auto theirs = testing::simulate(w.cluster, w.trace.jobs, reference);
    ASSERT_EQ(ours.run.jobs.size(), theirs.run.jobs.size());
    for (std::size_t i = 0; i < ours.run.jobs.size(); ++i) {
      EXPECT_EQ(ours.run.jobs[i].start, theirs.run.jobs[i].start) << "seed " << seed << ", " << ours.run.jobs[i].job_id;
      EXPECT_EQ(ours.run.jobs[i].placement, theirs.run.jobs[i].placement) << "seed " << seed << ", " << ours.run.jobs[i].job_id;
    }
  }
  EXPECT_GE(without_coincidences, 1);
}

// The learned policy does not step as the published environment yet: it refuses the semantics.
TEST(ReferenceSemantics, LearnedPoliciesRefuseIt) {
  rl::register_rl_policy();
  policy::PriorityOptions options;
  options.serves_heads = true;
  try {
    rl::make_rl_picker(rl::PolicyFile{}, options, std::nullopt);
    ADD_FAILURE() << "rl under --semantics reference was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--semantics reference"), std::string::npos) << e.what();
  }
  const testing::GeneratedWorkload w("helios", 300, 1.0, 1);
  rl::EnvOptions o;
  o.profile.semantics = "reference";
  policy::apply_semantics(o.profile);
  EXPECT_THROW(rl::Env(w.cluster, w.trace.jobs, o), InputError);
}

}  // namespace
}  // namespace rltune
