// The RL episode environment: an agent that follows the baseline's order reproduces the baseline exactly
// (reward 0); a better order earns a positive reward; splits never overlap; masked actions are refused.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "env_helpers.h"
#include "helpers.h"
#include "policy/registry.h"
#include "rl/env.h"
#include "rl/observation.h"
#include "rl/trainer.h"
#include "rl/policy_net.h"
#include "workload/generator.h"

namespace rltune::rl {
namespace {

struct Workload : testing::GeneratedWorkload {
  Workload() : GeneratedWorkload("helios", 2000, 0.95, 3) {}
};

using testing::episode;
using testing::first_legal;

TEST(Env, FollowingTheBaselineOrderGivesTheBaselineSchedule) {
  const Workload s;
  for (const char* baseline : {"fcfs"}) {  // sjf may switch to a job that arrives while the agent stays committed
    EnvOptions o;
    o.baseline = baseline;
    Env env(s.cluster, s.trace.jobs, o);
    const double reward = episode(env, 100, [](const Env&) { return 0; });
    EXPECT_EQ(reward, 0.0) << baseline;
    EXPECT_EQ(env.agent_score(), env.baseline_score()) << baseline;
    EXPECT_GT(env.baseline_score(), 1.0) << baseline;  // a loaded window: jobs wait
  }
}

// Under --semantics reference both sides step as the published code: the agent's pick is waited for
// (the baseline's head too), one event at a time, and a pick that can never run is dropped once nothing
// runs. Following the baseline's order then gives its schedule for any baseline, drops included.
TEST(Env, UnderTheReferenceFollowingAnyBaselineGivesItsSchedule) {
  Workload s;
  for (std::size_t i = 120; i < 400; i += 37) s.trace.jobs[i].gpus = 64;  // more than any VC has
  int drops = 0;
  for (const char* baseline : {"fcfs", "sjf", "f1", "wfp", "uni"}) {
    EnvOptions o;
    o.baseline = baseline;
    o.profile.semantics = "reference";
    policy::apply_semantics(o.profile);
    Env env(s.cluster, s.trace.jobs, o);
    const double reward = episode(env, 100, first_legal);
    EXPECT_EQ(reward, 0.0) << baseline;
    EXPECT_EQ(env.agent_score(), env.baseline_score()) << baseline;
    EXPECT_GT(env.baseline_score(), 1.0) << baseline;
    for (JobIndex j = 0; j < static_cast<JobIndex>(env.engine().job_count()); ++j)
      drops += env.engine().job(j).reason.find("dropped at") != std::string::npos;
  }
  EXPECT_GE(drops, 5 * 5);  // each window holds the 7 jobs that cannot run; most are dropped by its end
}

TEST(Env, PoolBlockingMasksBlockedPoolsAndReproducesFcfsWithPoolBlocking) {
  const Workload s;
  EnvOptions o;
  o.profile.blocking = policy::Blocking::pool;
  Env env(s.cluster, s.trace.jobs, o);
  bool saw_masked = false;
  const auto first_open = [&](const Env& e) {
    const int k = first_legal(e);
    saw_masked = saw_masked || k > 0;  // a queued job whose pools are blocked is not a legal pick
    return k;
  };
  const double reward = episode(env, 100, first_open);
  EXPECT_EQ(reward, 0.0);
  EXPECT_EQ(env.agent_score(), env.baseline_score());
  EXPECT_TRUE(saw_masked);
}

// Without commitment (--reconsider), an agent that follows the baseline's order reproduces any
// baseline, not only FCFS; with it, SJF's order can change under a committed pick.
TEST(Env, WithoutCommitmentFollowingAnyBaselineGivesItsSchedule) {
  const Workload s;
  for (const char* baseline : {"fcfs", "sjf", "f1", "wfp"})
    for (const policy::Blocking blocking : {policy::Blocking::global, policy::Blocking::pool}) {
      SCOPED_TRACE(std::string(baseline) + " " + policy::to_string(blocking));
      EnvOptions o;
      o.window.length = 200;
      o.baseline = baseline;
      o.commit = false;
      o.profile.blocking = blocking;
      o.profile.backfill = blocking == policy::Blocking::pool;
      Env env(s.cluster, s.trace.jobs, o);
      EXPECT_EQ(episode(env, 100, first_legal), 0.0);
      EXPECT_EQ(env.agent_score(), env.baseline_score());
    }
  EnvOptions o;
  o.window.length = 200;
  o.baseline = "sjf";
  Env committed(s.cluster, s.trace.jobs, o);
  EXPECT_NE(episode(committed, 100, first_legal), 0.0);
}

// With EASY backfilling, following the baseline order reproduces the simulator's fcfs+backfill start for
// start, under both blockings and with the look-ahead MILP (whose upcoming jobs must then be the same).
TEST(Env, WithBackfillingFollowingTheBaselineGivesTheSimulatorsSchedule) {
  const Workload s;
  for (const char* placement : {"greedy", "milp"})
    for (const policy::Blocking blocking : {policy::Blocking::global, policy::Blocking::pool}) {
      SCOPED_TRACE(std::string(placement) + " " + policy::to_string(blocking));
      EnvOptions o;
      o.window.length = 200;
      o.profile.backfill = true;
      o.profile.placement = placement;
      o.profile.blocking = blocking;
      o.profile.milp.time_limit_ms = 1e6;  // only the node limit stops a solve: the same result every run
      Env env(s.cluster, s.trace.jobs, o);
      const double reward = episode(env, 100, first_legal);
      EXPECT_EQ(reward, 0.0);

      const auto run = [&](const policy::ProfileOptions& profile) {
        auto engine = std::make_unique<sim::Engine>(s.cluster, std::span(s.trace.jobs).subspan(100, 200), o.engine);
        engine->run(*policy::make_profile(profile));
        return engine;
      };
      const auto reference = run(o.profile);
      policy::ProfileOptions plain = o.profile;
      plain.backfill = false;
      const auto without = run(plain);
      int changed_by_backfilling = 0;
      for (JobIndex j = 0; j < 200; ++j) {
        const sim::SimJob& mine = env.engine().job(j);
        ASSERT_EQ(mine.start, reference->job(j).start) << "job " << j;
        ASSERT_TRUE(mine.placement == reference->job(j).placement) << "job " << j;
        changed_by_backfilling += mine.start != without->job(j).start;
      }
      EXPECT_GT(changed_by_backfilling, 0);  // backfilling happens in this window
    }
}


// The agent sees the state it picks in: at every pick the observation's jobs and features are those
// observe() gives for the queue at that moment, though AgentPicker computes the features only when it
// asks for a pick (random picks under pool blocking and backfilling commit to jobs that wait, so many
// passes end without one), and reuses what earlier observations computed (ObservationCache), also in a
// second episode, whose jobs have other estimates at the same job indexes.
void expect_each_pick_sees_its_state(const cluster::ClusterSpec& cluster, std::span<const trace::JobSpec> jobs) {
  EnvOptions o;
  o.window.length = 200;
  o.profile.backfill = true;
  o.profile.blocking = policy::Blocking::pool;
  o.observation.features = FeatureSet::realistic;
  Env env(cluster, jobs, o);
  Rng rng(7);
  for (const std::size_t start : {100, 700}) {
    env.reset_at(start);
    const auto fcfs = policy::make_priority("fcfs", {});  // a priority keeps its order within one run
    int picks = 0;
    for (bool done = false; !done; ++picks) {
      const Observation& seen = env.observation();
      const sim::View view(env.engine());
      Observation fresh;
      observe(view, fcfs->order(view), fresh, o.observation);
      ASSERT_EQ(seen.visible, fresh.visible) << "window " << start << ", pick " << picks;
      ASSERT_EQ(seen.jobs, fresh.jobs) << "window " << start << ", pick " << picks;
      const auto n = static_cast<std::ptrdiff_t>(seen.visible * seen.features);
      ASSERT_TRUE(std::equal(seen.values.begin(), seen.values.begin() + n, fresh.values.begin())) << "window " << start << ", pick " << picks;
      std::vector<int> legal;
      for (int k = 0; k < seen.visible; ++k)
        if (seen.mask[static_cast<std::size_t>(k)]) legal.push_back(k);
      ASSERT_FALSE(legal.empty());
      done = env.step(legal[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(legal.size()) - 1))]).done;
    }
    EXPECT_GT(picks, 100) << "window " << start;  // most of the window's 200 jobs are picked
  }
}

TEST(Env, EachPickSeesTheStateItIsMadeIn) {
  const Workload s;
  expect_each_pick_sees_its_state(s.cluster, s.trace.jobs);
}

// The same where CPUs bind in one pool and not in the other: requests of one GPU count with different
// CPUs have different candidates in the first pool and the same in the second.
TEST(Env, EachPickSeesTheStateItIsMadeInWhereCpusBind) {
  const Workload s;
  const auto cluster = testing::cluster_from(
      "pools:\n  - {name: cpu, nodes: 6, gpus_per_node: 8, cpus_per_node: 48}\n"
      "  - {name: gpu, nodes: 6, gpus_per_node: 8}\n");
  std::vector<trace::JobSpec> jobs = s.trace.jobs;
  Rng rng(3);
  for (trace::JobSpec& j : jobs) {
    j.vc.clear();
    j.gpu_types.clear();
    j.gpus = std::min(j.gpus, 16);
    j.cpus = static_cast<int>(rng.uniform_int(1, 6)) * 4 * j.gpus;  // 4 to 24 per GPU: 2 to 12 GPUs of a node
  }
  expect_each_pick_sees_its_state(cluster, jobs);
}

// A job behind the 128 visible slots may start when every visible job is blocked (pool blocking or
// backfilling), as the simulator's heuristics and `rl` policy start it, not only once the queue shrinks.
TEST(Env, JobsBeyondTheVisibleSlotsStartWhenNoVisibleJobCan) {
  policy::register_builtins();
  const auto cluster = testing::cluster_from(
      "pools:\n  - {name: a, nodes: 1, gpus_per_node: 1, accepts: {vc: [a]}}\n"
      "  - {name: b, nodes: 1, gpus_per_node: 1, accepts: {vc: [b]}}\n");
  std::vector<trace::JobSpec> jobs{testing::job("long", 0, 1000, 1, "a")};
  for (int i = 1; i <= kSlots + 2; ++i) jobs.push_back(testing::job(fmt::format("a{}", i), i, 10, 1, "a"));
  jobs.push_back(testing::job("b", kSlots + 3, 10, 1, "b"));  // the 131st queued job: not visible
  const auto b = static_cast<JobIndex>(jobs.size() - 1);
  for (const bool backfill : {false, true}) {
    SCOPED_TRACE(fmt::format("backfill={}", backfill));
    EnvOptions o;
    o.window.length = static_cast<int>(jobs.size());
    o.profile.blocking = policy::Blocking::pool;
    o.profile.backfill = backfill;
    Env env(cluster, jobs, o);
    EXPECT_EQ(episode(env, 0, first_legal), 0.0);
    EXPECT_EQ(env.engine().job(b).start, kSlots + 3);  // at once, beside the blocked queue
    EXPECT_GT(env.engine().job(b - 1).start, 1000);
  }
}
// --skip: waiting is allowed only while something is still to happen, moves time on by at most
// kSkipTime, starts nothing, and an agent that always waits when it may still finishes every job.
TEST(Env, SkipWaitsForTheNextEventOrTenMinutes) {
  const Workload s;
  EnvOptions o;
  o.window.length = 100;
  Env without(s.cluster, s.trace.jobs, o);
  EXPECT_EQ(without.reset_at(100).mask[kSkip], 0);
  EXPECT_THROW(without.step(kSkip), InvariantError);

  o.skip = true;
  Env env(s.cluster, s.trace.jobs, o);
  env.reset_at(100);
  int skips = 0, short_waits = 0, full_waits = 0;
  Env::Step step;
  for (int steps = 0; steps < 100000 && !step.done; ++steps) {
    const Observation& obs = env.observation();
    const bool pending = env.engine().event_pending();
    ASSERT_EQ(obs.mask[kSkip], pending ? 1 : 0);
    if (!obs.mask[kSkip]) {
      step = env.step(first_legal(env));
      continue;
    }
    const Seconds before = env.engine().now();
    const std::size_t running = env.engine().running().size();
    ++skips;
    step = env.step(kSkip);
    if (step.done) break;
    const Seconds waited = env.engine().now() - before;
    ASSERT_GT(waited, 0);
    ASSERT_LE(waited, kSkipTime);
    ASSERT_LE(env.engine().running().size(), running);  // nothing started
    (waited == kSkipTime ? full_waits : short_waits)++;
  }
  for (JobIndex j = 0; j < 100; ++j) EXPECT_EQ(env.engine().job(j).state, sim::JobState::completed);
  EXPECT_GT(skips, 100);
  EXPECT_GT(full_waits, 0);   // nothing happened for ten minutes
  EXPECT_GT(short_waits, 0);  // an arrival or an end came first
  ASSERT_TRUE(step.done);
  EXPECT_LT(step.reward, 0) << "waiting whenever possible costs against FCFS";
}

TEST(Env, ShortestFirstBeatsFcfsOnBoundedSlowdown) {
  const Workload s;
  EnvOptions o;  // baseline fcfs, score bsld
  Env env(s.cluster, s.trace.jobs, o);
  const auto shortest = [](const Env& e) {
    const Observation& obs = e.observation();
    int best = 0;
    for (int k = 1; k < obs.visible; ++k)
      if (e.engine().job(obs.jobs[static_cast<std::size_t>(k)]).estimate <
          e.engine().job(obs.jobs[static_cast<std::size_t>(best)]).estimate)
        best = k;
    return best;
  };
  const double reward = episode(env, 100, shortest);
  EXPECT_GT(reward, 0.0);
  EXPECT_LT(env.agent_score(), env.baseline_score());
  for (std::size_t i = 0; i < env.engine().job_count(); ++i)
    EXPECT_EQ(env.engine().job(static_cast<JobIndex>(i)).state, sim::JobState::completed);
}

TEST(Env, SplitsDoNotOverlapAndAreDeterministic) {
  const Workload s;
  EnvOptions o;
  o.window.length = 64;
  Env env(s.cluster, s.trace.jobs, o);
  Rng a(9), b(9);
  for (int i = 0; i < 50; ++i) {
    env.reset(a, Split::train);
    EXPECT_LE(env.window_start() + 64, 1400u);  // 70% of 2,000 jobs
    const std::size_t train_start = env.window_start();
    env.reset(b, Split::train);
    EXPECT_EQ(env.window_start(), train_start);
    env.reset(a, Split::validation);
    EXPECT_GE(env.window_start(), 1400u);
    EXPECT_LE(env.window_start() + 64, 1700u);
    env.reset(a, Split::test);
    EXPECT_GE(env.window_start(), 1700u);
    env.reset(b, Split::validation);
    env.reset(b, Split::test);
  }
  o.window.length = 400;
  Env too_long(s.cluster, s.trace.jobs, o);
  EXPECT_THROW(too_long.reset(a, Split::test), InputError);  // the test split holds 300 jobs
}

TEST(Env, MaskedSlotsAreRefused) {
  const Workload s;
  EnvOptions o;
  o.window.length = 8;
  Env env(s.cluster, s.trace.jobs, o);
  const Observation& obs = env.reset_at(0);
  ASSERT_LT(obs.visible, kSlots);
  EXPECT_THROW(env.step(obs.visible), InvariantError);
  EXPECT_THROW(env.step(-1), InvariantError);
}

TEST(Env, ScoresAndBadNames) {
  EXPECT_EQ(parse_score("wait"), Score::wait);
  EXPECT_THROW(parse_score("speed"), InputError);
  const Workload s;
  EnvOptions o;
  o.baseline = "nope";
  EXPECT_THROW(Env(s.cluster, s.trace.jobs, o), InputError);
  // Window settings: the same bounds as every other way in (sim::window_settings), named by their keys.
  const auto error_of = [&](const EnvOptions& bad) {
    try {
      Env(s.cluster, s.trace.jobs, bad);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EnvOptions window;
  window.window.train_split = 1;
  EXPECT_NE(error_of(window).find("window.train_split 1: must be between"), std::string::npos) << error_of(window);
  window = {};
  window.window.warmup = -1;
  EXPECT_NE(error_of(window).find("window.warmup -1"), std::string::npos) << error_of(window);
  window = {};
  window.window.length = 5000;
  EXPECT_NE(error_of(window).find("window.length 5000: must be at most the trace's 2000 jobs"), std::string::npos) << error_of(window);
}

// Every enum written as a string: each name reads back as the value that writes it, and an unknown
// name's error lists the known ones.
template <typename Table>
void expect_round_trip(const Table& table) {
  for (const std::string& name : table.names()) EXPECT_EQ(table.name(table.parse(name)), name);
  try {
    table.parse("nonsense");
    ADD_FAILURE() << table.what << " took an unknown name";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), fmt::format("unknown {} 'nonsense' (known: {})", table.what, fmt::join(table.names(), ", ")));
  }
}

TEST(Names, EveryEnumNameReadsBackAsItsValue) {
  expect_round_trip(kScoreNames);
  expect_round_trip(sim::kSplitNames);
  expect_round_trip(kFeatureSetNames);
  expect_round_trip(kArchNames);
  expect_round_trip(kTeacherNames);
  expect_round_trip(policy::kBlockingNames);
  expect_round_trip(sim::kRuntimeNames);
  expect_round_trip(sim::kJobStateNames);
  EXPECT_STREQ(to_string(Split::validation), "validation");
  EXPECT_STREQ(sim::to_string(sim::JobState::completed), "completed");
}

}  // namespace
}  // namespace rltune::rl
