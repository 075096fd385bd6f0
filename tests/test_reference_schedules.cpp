// Golden tests against schedules recorded from the published RLTune environment (../shared/
// reference-schedules, see its README): under --semantics reference, every window starts every job at
// the recorded time, with the same placements up to the names of nodes. They skip when that folder is
// absent (fresh clones).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "core/error.h"
#include "env_helpers.h"
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

// A model of the published baseline loop written straight from SPEC 3.3, 3.6 and 3.7, on clusters of
// 1-GPU nodes (where greedy placement fits a job exactly when its pool has as many GPUs free), to hold
// --semantics reference to it with and without backfilling, with jobs that can never run, and with the
// Helios environment's skipped backfill candidates.
struct PublishedModel {
  std::vector<trace::JobSpec> jobs;
  std::vector<int> pool_gpus;  // pool p takes the jobs of vc "p"
  bool by_gpus_first = false;  // the key: sjf's (runtime, GPUs), else fcfs's submit time
  bool backfill = false, skips_after_start = false;
  bool every_pool = false;  // backfill candidates from the whole queue (the published Helios agent's)

  std::map<std::string, Seconds> starts;  // job id -> start; dropped jobs are absent
  std::set<std::string> dropped;

  struct Running {
    Seconds end;
    int order;
    std::size_t job;
  };
  Seconds t = 0;
  std::vector<std::size_t> queue;
  std::vector<Running> running;  // unsorted: the next to end is the smallest (end, start order)
  std::vector<int> free;
  std::size_t next = 0;
  int started = 0;

  int pool(std::size_t j) const { return std::stoi(jobs[j].vc); }
  bool fits(std::size_t j) const { return jobs[j].gpus > 0 && jobs[j].gpus <= free[pool(j)]; }
  bool can_run(std::size_t j) const { return jobs[j].gpus > 0 && jobs[j].gpus <= pool_gpus[pool(j)]; }
  void start(std::size_t j) {
    starts[jobs[j].id] = t;
    free[pool(j)] -= jobs[j].gpus;
    running.push_back({t + jobs[j].duration, started++, j});
    queue.erase(std::find(queue.begin(), queue.end(), j));
  }
  std::vector<Running>::iterator next_end() {
    return std::min_element(running.begin(), running.end(), [](const Running& a, const Running& b) { return std::tie(a.end, a.order) < std::tie(b.end, b.order); });
  }
  void release(std::vector<Running>::iterator r) {
    t = std::max(t, r->end);
    free[pool(r->job)] += jobs[r->job].gpus;
    running.erase(r);
  }
  // One event: the next arrival if it comes no later than the next completion, else that completion.
  void event() {
    const Seconds r = running.empty() ? kForever : next_end()->end;
    if (next < jobs.size() && jobs[next].submit <= r) {
      t = std::max(t, jobs[next].submit);
      queue.push_back(next++);
    } else {
      release(next_end());
    }
  }
  bool refill() {
    if (!queue.empty()) return true;
    if (next >= jobs.size()) return false;
    while (queue.empty()) event();
    return true;
  }
  void run() {
    free = pool_gpus;
    t = jobs.front().submit;
    queue = {0};
    next = 1;
    for (;;) {
      std::stable_sort(queue.begin(), queue.end(), [&](std::size_t a, std::size_t b) {
        return by_gpus_first ? std::pair(jobs[a].duration, jobs[a].gpus) < std::pair(jobs[b].duration, jobs[b].gpus) : jobs[a].submit < jobs[b].submit;
      });
      const std::size_t h = queue.front();
      if (!fits(h)) {
        if (backfill && can_run(h)) {
          std::vector<Running> mine;
          for (const Running& r : running)
            if (pool(r.job) == pool(h)) mine.push_back(r);
          std::stable_sort(mine.begin(), mine.end(), [](const Running& a, const Running& b) { return a.end < b.end; });
          Seconds shadow = t;
          int room = free[pool(h)];
          for (const Running& r : mine) {
            room += jobs[r.job].gpus;
            shadow = r.end;
            if (jobs[h].gpus <= room) break;
          }
          while (!fits(h)) {
            std::vector<std::size_t> candidates;
            for (const std::size_t j : queue)
              if (every_pool || pool(j) == pool(h)) candidates.push_back(j);
            std::stable_sort(candidates.begin(), candidates.end(), [&](std::size_t a, std::size_t b) { return jobs[a].submit < jobs[b].submit; });
            for (std::size_t i = 0; i < candidates.size(); ++i) {  // a list walked by index, as Python's for
              const std::size_t j = candidates[i];
              if (t + jobs[j].duration < shadow && fits(j)) {
                start(j);
                if (skips_after_start) candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(i));
              }
            }
            event();
          }
        } else {
          while (!fits(h) && !running.empty()) event();
          if (!fits(h)) {
            dropped.insert(jobs[h].id);
            queue.erase(queue.begin());
            if (!refill()) break;
            continue;
          }
        }
      }
      start(h);
      if (!refill()) break;
    }
  }
};

const char* const kTwoPools = R"(pools:
  - {name: big, nodes: 6, gpus_per_node: 1, accepts: {vc: ["0"]}}
  - {name: small, nodes: 3, gpus_per_node: 1, accepts: {vc: ["1"]}}
)";

// 60 jobs for those two pools, often several in one second.
std::vector<trace::JobSpec> random_jobs(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<trace::JobSpec> jobs;
  Seconds submit = 0;
  for (int i = 0; i < 60; ++i) {
    submit += static_cast<Seconds>(rng() % 4) * 30;
    const int vc = static_cast<int>(rng() % 2);
    // Mostly 1 GPU or most of the pool (backfilling has room to work); a few can never run.
    const int most = vc == 0 ? 4 + static_cast<int>(rng() % 4) : 2 + static_cast<int>(rng() % 3);
    const int gpus = rng() % 17 == 0 ? 0 : rng() % 2 ? 1 : most;
    jobs.push_back(testing::job(fmt::format("j{}", i), submit, 10 + static_cast<Seconds>(rng() % 12) * 20, gpus, std::to_string(vc)));
  }
  return jobs;
}

PublishedModel model_for(std::uint64_t seed, bool backfill, bool skips_after_start) {
  PublishedModel model;
  model.pool_gpus = {6, 3};  // kTwoPools
  model.jobs = random_jobs(seed);
  model.backfill = backfill;
  model.skips_after_start = skips_after_start;
  return model;
}

TEST(ReferenceSemantics, FollowsTheModelOfThePublishedLoop) {
  const auto cluster = testing::cluster_from(kTwoPools);
  int drops = 0, backfilled = 0, skips_mattered = 0;
  for (const bool backfill : {false, true})
    for (const bool skips : {false, true})
      for (const bool sjf : {false, true})
        for (std::uint64_t seed = 1; seed <= 12; ++seed) {
          if (skips && !backfill) continue;
          SCOPED_TRACE(fmt::format("backfill {} skips {} sjf {} seed {}", backfill, skips, sjf, seed));
          PublishedModel model = model_for(seed, backfill, skips);
          model.by_gpus_first = sjf;
          model.run();
          if (skips) {  // the skipped candidates must matter somewhere, or this would test nothing
            PublishedModel plain = model;
            plain.skips_after_start = false;
            plain.starts.clear();
            plain.dropped.clear();
            plain.running.clear();
            plain.started = 0;
            plain.run();
            skips_mattered += plain.starts != model.starts;
          }

          cluster::ClusterSpec spec = cluster;
          spec.reference_backfill_skips_after_start = skips;
          policy::ProfileOptions profile = testing::profile(sjf ? "sjf" : "fcfs");
          profile.semantics = "reference";
          profile.backfill = backfill;
          policy::apply_semantics(profile);
          const testing::Outcome outcome = testing::simulate(spec, model.jobs, profile);
          ASSERT_EQ(outcome.run.jobs.size(), model.jobs.size());
          for (const auto& r : outcome.run.jobs) {
            if (model.dropped.count(r.job_id)) {
              EXPECT_FALSE(r.completed()) << r.job_id << " was dropped by the model";
              EXPECT_NE(r.reason.find("dropped at t="), std::string::npos) << r.reason;
              ++drops;
              continue;
            }
            ASSERT_TRUE(model.starts.count(r.job_id)) << r.job_id;
            EXPECT_EQ(r.start, model.starts.at(r.job_id)) << r.job_id;
          }
          std::size_t hold_up = 0;  // jobs the model started before an earlier-submitted job of their pool
          if (backfill)
            for (const auto& a : model.jobs)
              for (const auto& b : model.jobs)
                hold_up += a.vc == b.vc && a.submit < b.submit && model.starts.count(a.id) && model.starts.count(b.id) &&
                           model.starts.at(b.id) < model.starts.at(a.id);
          backfilled += hold_up > 0;
        }
  EXPECT_GT(drops, 0) << "no job that can never run was generated";
  EXPECT_GT(backfilled, 0) << "the model never backfilled";
  EXPECT_GT(skips_mattered, 0) << "skipping candidates never changed a schedule";
}

// Under the published keys, a queued job's wait reads as -1 - s: wfp ranks by ((1 + s) / r)^3 n,
// smallest first, whatever the time; multifactor reads the recorded wait, and refuses a trace without.
TEST(ReferenceSemantics, PublishedKeys) {
  const auto cluster = testing::cluster_from("pools:\n  - {name: p, nodes: 1, gpus_per_node: 1}\n");
  const auto starts = [&](const std::vector<trace::JobSpec>& jobs, const std::string& priority, const std::string& semantics) {
    policy::ProfileOptions profile = testing::profile(priority);
    profile.semantics = semantics;
    policy::apply_semantics(profile);
    std::map<std::string, Seconds> out;
    for (const auto& r : testing::simulate(cluster, jobs, profile).run.jobs) out[r.job_id] = r.start;
    return out;
  };
  // "head" waits for the blocker; then the published keys are b ((21/400)^3) before c ((31/100)^3),
  // where rltune's at t=1100 put c ((1070/100)^3) before b ((1080/400)^3).
  std::vector<trace::JobSpec> jobs = {testing::job("blocker", 0, 1000, 1), testing::job("head", 10, 100, 1),
                                      testing::job("b", 20, 400, 1), testing::job("c", 30, 100, 1)};
  const std::map<std::string, Seconds> published{{"blocker", 0}, {"head", 1000}, {"b", 1100}, {"c", 1500}};
  EXPECT_EQ(starts(jobs, "wfp", "reference"), published);
  const std::map<std::string, Seconds> ours{{"blocker", 0}, {"head", 1000}, {"c", 1100}, {"b", 1200}};
  EXPECT_EQ(starts(jobs, "wfp", "rltune"), ours);
  try {
    starts(jobs, "multifactor", "reference");
    ADD_FAILURE() << "the published multifactor ran without recorded waits";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("multifactor: job blocker (trace line 0)"), std::string::npos) << e.what();
  }
  // A recorded wait of 12 h puts "old" ahead of "fresh", which has waited longer here.
  jobs = {testing::job("blocker", 0, 1000, 1), testing::job("head", 5, 100, 1), testing::job("fresh", 10, 100, 1),
          testing::job("old", 20, 100, 1)};
  for (auto& j : jobs) j.recorded_wait = j.id == "old" ? 43200 : 0;
  EXPECT_EQ(starts(jobs, "multifactor", "reference").at("old"), 1100);
  EXPECT_EQ(starts(jobs, "multifactor", "rltune").at("fresh"), 1100);
  // A job without GPUs (srf's key 0 / 0) holds the head until nothing runs, then is dropped.
  jobs = {testing::job("blocker", 0, 1000, 1), testing::job("none", 10, 0, 0), testing::job("x", 20, 100, 1)};
  policy::ProfileOptions srf = testing::profile("srf");
  srf.semantics = "reference";
  policy::apply_semantics(srf);
  const auto outcome = testing::simulate(cluster, jobs, srf);
  ASSERT_EQ(outcome.run.jobs.size(), 3u);
  EXPECT_EQ(outcome.run.jobs[2].start, 1000);
  EXPECT_FALSE(outcome.run.jobs[1].completed());
  EXPECT_NE(outcome.run.jobs[1].reason.find("zero_gpus"), std::string::npos) << outcome.run.jobs[1].reason;
  EXPECT_NE(outcome.run.jobs[1].reason.find("dropped at t=1000"), std::string::npos) << outcome.run.jobs[1].reason;
}

// The published candidate lists filter by VC, whatever a job's size: a job of the head's VC that can
// never run is a candidate too, and the one skipped after A starts (Helios), so B starts at once.
TEST(ReferenceSemantics, AJobThatCanNeverRunIsStillTheCandidateSkipped) {
  cluster::ClusterSpec cluster = testing::cluster_from("pools:\n  - {name: p, nodes: 4, gpus_per_node: 1, accepts: {vc: [\"0\"]}}\n");
  cluster.reference_backfill_skips_after_start = true;
  const std::vector<trace::JobSpec> jobs = {testing::job("x", 0, 100, 4, "0"),  testing::job("p", 1, 1000, 2, "0"),
                                            testing::job("h", 2, 500, 4, "0"),  testing::job("a", 3, 100, 1, "0"),
                                            testing::job("z", 4, 100, 0, "0"),  testing::job("b", 5, 100, 1, "0")};
  policy::ProfileOptions profile = testing::profile("fcfs");
  profile.semantics = "reference";
  profile.backfill = true;
  policy::apply_semantics(profile);
  std::map<std::string, Seconds> start;
  for (const auto& r : testing::simulate(cluster, jobs, profile).run.jobs) start[r.job_id] = r.start;
  EXPECT_EQ(start.at("p"), 100);
  EXPECT_EQ(start.at("a"), 100);  // h waits for p (shadow 1100); a is backfilled, z skipped,
  EXPECT_EQ(start.at("b"), 100);  // then b
  EXPECT_EQ(start.at("h"), 1100);
}

// The agent's step against the same model: its pick waited for, one event at a time, with the
// environment's backfilling (from the whole queue where the cluster says so), jobs that can never run
// dropped. An agent that takes the FCFS order's first job is the model's FCFS head.
TEST(ReferenceSemantics, TheAgentFollowsTheModelOfThePublishedStep) {
  policy::register_builtins();
  const auto cluster = testing::cluster_from(kTwoPools);
  int differ = 0;  // windows where taking every pool's jobs changes the schedule
  for (const bool every_pool : {false, true})
    for (const bool skips : {false, true})
      for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        SCOPED_TRACE(fmt::format("every pool {} skips {} seed {}", every_pool, skips, seed));
        PublishedModel model = model_for(seed, true, skips);
        model.every_pool = every_pool;
        PublishedModel own_pool = model;
        model.run();
        own_pool.every_pool = false;
        own_pool.run();
        differ += every_pool && own_pool.starts != model.starts;

        cluster::ClusterSpec spec = cluster;
        spec.reference_backfill_skips_after_start = skips;
        spec.reference_agent_backfills_every_pool = every_pool;
        rl::EnvOptions o;
        o.window.length = static_cast<int>(model.jobs.size());
        o.profile.semantics = "reference";
        o.profile.backfill = true;
        policy::apply_semantics(o.profile);
        rl::Env env(spec, model.jobs, o);
        testing::episode(env, 0, testing::first_legal);
        for (JobIndex j = 0; j < static_cast<JobIndex>(model.jobs.size()); ++j) {
          const std::string& id = model.jobs[static_cast<std::size_t>(j)].id;
          if (model.dropped.count(id)) EXPECT_EQ(env.engine().job(j).state, sim::JobState::rejected) << id;
          else EXPECT_EQ(env.engine().job(j).start, model.starts.at(id)) << id;
        }
      }
  EXPECT_GT(differ, 0) << "backfilling from every pool never mattered";
}

// A learned policy steps as the published environment does (tests/test_env.cpp), except where that
// environment has nothing to match: reconsidered picks, a skip action.
TEST(ReferenceSemantics, LearnedPoliciesRefuseWhatThePublishedStepLacks) {
  rl::register_rl_policy();
  policy::PriorityOptions options;
  options.serves_heads = true;
  rl::PolicyFile reconsidering;
  reconsidering.commit = false;
  try {
    rl::make_rl_picker(reconsidering, options, std::nullopt);
    ADD_FAILURE() << "a model trained with --reconsider was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--semantics reference refuses --reconsider"), std::string::npos) << e.what();
  }
  rl::PolicyFile committing;
  committing.baseline = "fcfs";
  EXPECT_NO_THROW(rl::make_rl_picker(committing, options, std::nullopt));
  const testing::GeneratedWorkload w("helios", 300, 1.0, 1);
  rl::EnvOptions o;
  o.profile.semantics = "reference";
  policy::apply_semantics(o.profile);
  o.skip = true;
  try {
    rl::Env(w.cluster, w.trace.jobs, o);
    ADD_FAILURE() << "training under the reference with a skip action was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("refuses --skip"), std::string::npos) << e.what();
  }
  o.skip = false;
  EXPECT_NO_THROW(rl::Env(w.cluster, w.trace.jobs, o));
}

}  // namespace
}  // namespace rltune
