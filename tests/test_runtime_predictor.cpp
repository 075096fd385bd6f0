// Runtime predictions from history: the fallback order, causality (a job's estimate depends only on jobs
// finished before it arrived), determinism, backfilling when a job outlives its estimate, the realistic
// regime in the RL environment, and the names users write.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"
#include "experiment/config.h"
#include "experiment/profile_settings.h"
#include "env_helpers.h"
#include "helpers.h"
#include "rl/env.h"
#include "sim/runtime_predictor.h"

namespace rltune::sim {
namespace {

using testing::job;

using testing::user_job;

// An experiment of one policy entry (YAML) on a small generated workload.
experiment::Config one_policy(const std::string& entry) {
  policy::register_builtins();
  return experiment::parse_config("policies: [" + entry + "]\nworkloads: [{cluster: helios, trace: {generate: {jobs: 300}}}]\n",
                                  "/tmp/x.yaml");
}

TEST(HistoryPredictor, FallsBackFromUserKeyToUserToRequestedToVcToAll) {
  HistoryPredictor p(2);
  const auto ask = [&](const trace::JobSpec& j) { return p.predict(j); };
  const auto expect = [&](const trace::JobSpec& j, Seconds seconds, EstimateSource source) {
    const HistoryPredictor::Estimate e = ask(j);
    EXPECT_EQ(e.seconds, seconds) << j.id;
    EXPECT_EQ(e.source, source) << j.id << ": " << kEstimateSourceNames.name(e.source);
  };
  expect(user_job("nothing", 0, 0, 1, "u"), kNoHistoryEstimate, EstimateSource::none);
  expect(user_job("asks", 0, 0, 1, "u", "", 500), 500, EstimateSource::requested);

  p.record(user_job("other", 0, 0, 8, "w", "a"), 1000);  // another user, in VC a
  p.record(user_job("other", 0, 0, 8, "w", "b"), 3000);  // and in VC b
  expect(user_job("anyone", 0, 0, 1, "u"), 2000, EstimateSource::all);               // no VC: all finished jobs
  expect(user_job("in-a", 0, 0, 1, "u", "a"), 1000, EstimateSource::vc);             // VC a's mean
  expect(user_job("in-a-asks", 0, 0, 1, "u", "a", 700), 700, EstimateSource::requested);  // own request first

  p.record(user_job("mine", 0, 0, 4, "u", "a"), 100);
  expect(user_job("mine-1gpu", 0, 0, 1, "u", "a"), 100, EstimateSource::user);       // the user, any size and VC
  expect(user_job("mine-b", 0, 0, 4, "u", "b", 50), 50, EstimateSource::user);        // capped by the request
  p.record(user_job("mine", 0, 0, 4, "u", "a"), 300);
  expect(user_job("mine-4gpu", 0, 0, 4, "u", "a"), 200, EstimateSource::user_gpus_vc);  // mean of the last 2
  p.record(user_job("mine", 0, 0, 4, "u", "a"), 700);
  expect(user_job("mine-4gpu", 0, 0, 4, "u", "a"), 500, EstimateSource::user_gpus_vc);  // 300 and 700, not 100
  // A job without a user never uses another's history: VC a's mean of every finished job.
  expect(user_job("no-user", 0, 0, 4, "", "a"), (1000 + 100 + 300 + 700) / 4, EstimateSource::vc);
}

TEST(HistoryPredictor, EstimatesAreAtLeastOneSecond) {
  HistoryPredictor p(1);
  p.record(user_job("zero", 0, 0, 1, "u"), 0);
  EXPECT_EQ(p.predict(user_job("next", 0, 0, 1, "u")).seconds, 1);
}

TEST(EstimateDoubt, TheMeanLogErrorOfTheUsersLastEightFinishedJobs) {
  EstimateDoubt d;
  const trace::JobSpec u = user_job("u", 0, 0, 1, "u"), v = user_job("v", 0, 0, 1, "v");
  EXPECT_EQ(d.of(u), EstimateDoubt::kUnknown);
  d.record(u, 200, 100);  // twice too long
  d.record(u, 100, 100);  // right
  EXPECT_FLOAT_EQ(d.of(u), static_cast<float>(std::log(2.0) / 2));
  EXPECT_EQ(d.of(v), EstimateDoubt::kUnknown);  // another user's record says nothing about v
  d.record(v, 10, 0);                           // durations of 0 s count as 1 s
  EXPECT_FLOAT_EQ(d.of(v), static_cast<float>(std::log(10.0)));
  for (int k = 0; k < 8; ++k) d.record(u, 50, 100);  // the last eight: all half too short
  EXPECT_FLOAT_EQ(d.of(u), static_cast<float>(std::log(2.0)));
}

// A job's doubt is its user's record when it arrives: jobs that finish later do not change it.
TEST(EstimateDoubt, IsSetAtArrivalFromFinishedJobsOnly) {
  const testing::GeneratedWorkload w("helios", 400, 1.1, 5);
  const EngineOptions predicted{.runtime = RuntimeKnowledge::predicted};
  const testing::ArrivalValueCheck c =
      testing::check_arrival_values(w.cluster, w.trace.jobs, predicted, 200, [](const SimJob& j) { return j.estimate_doubt; });
  EXPECT_EQ(c.changed_before, 0);
  EXPECT_GT(c.changed_after, 0);
  EXPECT_TRUE(c.deterministic);
  const auto known = std::count_if(c.values.begin(), c.values.begin() + static_cast<std::ptrdiff_t>(c.arrived_by_pivot),
                                   [](double d) { return d != EstimateDoubt::kUnknown; });
  EXPECT_GT(known, 50);
}

const char* kOneNode4 = "name: c\npools:\n  - {name: p, nodes: 1, gpus_per_node: 4}\n";

// Hand-worked: a job outlives its estimate. Before the estimate passes, the reservation it holds back
// bounds backfilling by that estimate; after, the job is expected to run as long again as it has (no
// time limit), and backfilling re-plans with that: the reserved job is never delayed by a backfilled
// one beyond what the estimates at the time allowed.
TEST(PredictedRuntimes, BackfillingWhenAJobOutlivesItsEstimate) {
  const auto cluster = testing::cluster_from(kOneNode4);
  const std::vector<trace::JobSpec> jobs = {
      user_job("p", 0, 20, 2, "u"),           // no history: 1 h
      user_job("a", 30, 100, 2, "u"),         // predicted 20 (p's), runs 100: estimated end 50
      user_job("b", 31, 10, 4, "v"),          // needs the node: blocked, reserved for 50
      user_job("c", 32, 15, 2, "w", "", 15),  // requested 15, ends 47 <= 50: backfilled
      user_job("d", 35, 5, 2, "x", "", 5),    // at 47 it would end 52 > 50: waits
      user_job("e", 60, 5, 2, "y", "", 5),    // at 60 a is overdue, expected to end at 90: d, then e, backfill
  };
  const auto out = testing::simulate(cluster, jobs, testing::profile("fcfs", policy::Blocking::global, true),
                                     {.runtime = RuntimeKnowledge::predicted});
  const std::map<std::string, std::pair<Seconds, Seconds>> expected = {
      {"p", {0, 3600}}, {"a", {30, 20}}, {"b", {130, 20}}, {"c", {32, 15}}, {"d", {60, 5}}, {"e", {65, 5}}};
  for (const auto& [id, start_estimate] : expected) {
    EXPECT_EQ(out[id].start, start_estimate.first) << id;
    EXPECT_EQ(out[id].estimate, start_estimate.second) << id;
  }
  EXPECT_EQ(out.run.estimate_sources[static_cast<std::size_t>(EstimateSource::none)], 1u);
  EXPECT_EQ(out.run.estimate_sources[static_cast<std::size_t>(EstimateSource::user_gpus_vc)], 1u);
  EXPECT_EQ(out.run.estimate_sources[static_cast<std::size_t>(EstimateSource::all)], 1u);
  EXPECT_EQ(out.run.estimate_sources[static_cast<std::size_t>(EstimateSource::requested)], 3u);
}

// A job whose estimate runs out exactly at a decision point is still running there (completions come
// first): it has outlived its estimate, and backfilling plans with the corrected end, not with "now".
TEST(PredictedRuntimes, AJobStillRunningWhenItsEstimateEndsIsOverdue) {
  const auto cluster = testing::cluster_from(kOneNode4);
  const std::vector<trace::JobSpec> jobs = {
      user_job("p", 0, 20, 2, "u"),
      user_job("a", 30, 100, 2, "u"),       // predicted 20: estimated end 50
      user_job("b", 31, 10, 4, "v"),        // blocked, reserved for 50
      user_job("d", 50, 5, 2, "x", "", 5),  // at 50 a is still running: expected at 70, so d backfills
  };
  const auto out = testing::simulate(cluster, jobs, testing::profile("fcfs", policy::Blocking::global, true),
                                     {.runtime = RuntimeKnowledge::predicted});
  EXPECT_EQ(out["d"].start, 50);
  EXPECT_EQ(out["b"].start, 130);
}

// With a time limit, a job that outlived its estimate is expected to end at its limit.
TEST(PredictedRuntimes, AnOverdueJobIsExpectedAtItsTimeLimit) {
  const auto cluster = testing::cluster_from(kOneNode4);
  const std::vector<trace::JobSpec> jobs = {
      user_job("p", 0, 20, 2, "u", "", 500),
      user_job("a", 30, 100, 2, "u", "", 500),  // predicted 20, limit 500: at 60 expected to end at 530
      user_job("b", 31, 10, 4, "v", "", 10),    // reserved: at 60, for 530
      user_job("d", 60, 400, 2, "x", "", 400),  // ends 460 <= 530: backfilled at 60 (doubling would say 90)
  };
  const auto out = testing::simulate(cluster, jobs, testing::profile("fcfs", policy::Blocking::global, true),
                                     {.runtime = RuntimeKnowledge::predicted});
  EXPECT_EQ(out["a"].estimate, 20);
  EXPECT_EQ(out["d"].start, 60);
  EXPECT_EQ(out["b"].start, 460);  // d outlived a: the reservation moved to when the GPUs came free
}

// Hand-worked: a job that outlives its time limit too is never killed, and is expected to run as long
// again as it has so far. j1 (limit 10) runs until 1000 on pool a; j2 waits for all of a and holds the
// reservation, which under global blocking binds pool b too. At 20, j1 is expected at 40, so j3 (5 s on
// the idle pool b) backfills; at 30, at 60, so j4 does. Expected at once past its limit, j1 held the
// reservation at "now" and j3 and j4 waited for it until 1000.
TEST(PredictedRuntimes, AJobPastItsTimeLimitIsExpectedToRunAsLongAgain) {
  const auto cluster = testing::cluster_from(
      "name: c\npools:\n  - {name: a, gpu_type: V100, nodes: 1, gpus_per_node: 4}\n  - {name: b, gpu_type: T4, nodes: 1, gpus_per_node: 4}\n");
  const auto typed = [](trace::JobSpec j, const char* type) {
    j.gpu_types = {type};
    return j;
  };
  const std::vector<trace::JobSpec> jobs = {
      typed(user_job("j1", 0, 1000, 2, "u", "", 10), "V100"), typed(user_job("j2", 0, 10, 4, "u", "", 10), "V100"),
      typed(user_job("j3", 20, 5, 1, "u", "", 5), "T4"), typed(user_job("j4", 30, 5, 1, "u", "", 5), "T4")};
  for (const RuntimeKnowledge runtime : {RuntimeKnowledge::requested, RuntimeKnowledge::predicted}) {
    SCOPED_TRACE(to_string(runtime));
    const auto out = testing::simulate(cluster, jobs, testing::profile("fcfs", policy::Blocking::global, true), {.runtime = runtime});
    EXPECT_EQ(out["j1"].start, 0);
    EXPECT_EQ(out["j3"].start, 20);
    EXPECT_EQ(out["j4"].start, 30);
    EXPECT_EQ(out["j2"].start, 1000);
  }
}

// Lengthening every job that has not finished by time T changes nothing that was estimated by T: the
// predictor only learns from jobs that have finished.
TEST(PredictedRuntimes, AreCausal) {
  const testing::GeneratedWorkload w("helios", 400, 1.1, 5);
  const EngineOptions predicted{.runtime = RuntimeKnowledge::predicted};
  const auto profile = testing::profile("fcfs", policy::Blocking::pool, true);
  const auto first = testing::simulate(w.cluster, w.trace.jobs, profile, predicted);
  const Seconds t = w.trace.jobs[200].submit;
  std::vector<trace::JobSpec> altered = w.trace.jobs;
  int lengthened = 0;
  for (std::size_t i = 0; i < altered.size(); ++i)
    if (first.run.jobs[i].end > t) {
      altered[i].duration = altered[i].duration * 3 + 7;
      ++lengthened;
    }
  ASSERT_GT(lengthened, 200);
  const auto second = testing::simulate(w.cluster, altered, profile, predicted);
  int later_changed = 0;
  for (std::size_t i = 0; i < altered.size(); ++i) {
    if (altered[i].submit <= t) {
      ASSERT_EQ(first.run.jobs[i].estimate, second.run.jobs[i].estimate) << "job " << i;
      if (first.run.jobs[i].start <= t) {
        ASSERT_EQ(first.run.jobs[i].start, second.run.jobs[i].start) << "job " << i;
      }
    } else {
      later_changed += first.run.jobs[i].estimate != second.run.jobs[i].estimate;
    }
  }
  EXPECT_GT(later_changed, 0);  // the test can fail: later estimates do learn from the longer jobs
}

TEST(PredictedRuntimes, RepeatExactlyAndDifferFromTheTruth) {
  const testing::GeneratedWorkload w("philly", 300, 1.0, 9);
  const EngineOptions predicted{.runtime = RuntimeKnowledge::predicted, .predict_last = 3};
  const auto profile = testing::profile("sjf", policy::Blocking::pool, true);
  const auto a = testing::simulate(w.cluster, w.trace.jobs, profile, predicted);
  const auto b = testing::simulate(w.cluster, w.trace.jobs, profile, predicted);
  int wrong = 0;
  for (std::size_t i = 0; i < a.run.jobs.size(); ++i) {
    ASSERT_EQ(a.run.jobs[i].start, b.run.jobs[i].start);
    ASSERT_EQ(a.run.jobs[i].estimate, b.run.jobs[i].estimate);
    wrong += a.run.jobs[i].estimate != a.run.jobs[i].duration;
  }
  EXPECT_GT(wrong, 250);
  const metrics::EstimateAccuracy accuracy = metrics::estimate_accuracy({&a.run});
  EXPECT_EQ(accuracy.jobs, 300u);
  EXPECT_GT(accuracy.median_abs_log_ratio, 0.0);
  EXPECT_GT(accuracy.under_share, 0.0);
  EXPECT_LT(accuracy.under_share, 1.0);
}

TEST(PredictedRuntimes, NamesAndBounds) {
  EXPECT_EQ(parse_runtime_knowledge("predicted"), RuntimeKnowledge::predicted);
  EXPECT_EQ(parse_runtime_knowledge("predicted:history"), RuntimeKnowledge::predicted);
  try {
    parse_runtime_knowledge("predicted:unknown");
    ADD_FAILURE() << "predicted:unknown was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("predicted:history"), std::string::npos) << e.what();
  }
  const auto cluster = testing::cluster_from(kOneNode4);
  const std::vector<trace::JobSpec> jobs = {job("a", 0, 10, 1)};
  EXPECT_THROW(Engine(cluster, jobs, {.runtime = RuntimeKnowledge::predicted, .predict_last = 0}), InputError);
  // In an experiment, as on the command line, a predictor setting that would be ignored is an error.
  try {
    one_policy("{name: x, priority: fcfs, predict_last: 3}");
    ADD_FAILURE() << "predict_last without runtime predicted was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("predict_last"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("applies only to runtime predicted"), std::string::npos) << e.what();
  }
  EXPECT_EQ(one_policy("{name: x, priority: fcfs, runtime: predicted, predict_last: 3}").workloads[0].policies[0].engine.predict_last, 3);
}

// --backfill-limits plans backfilling: without backfilling it is an error, on the command line as in an
// experiment; a run's config.json records it when it is set.
TEST(BackfillLimits, NeedBackfillingAndAreRecorded) {
  policy::register_builtins();
  experiment::ProfileSettings s;
  s.backfill_limits = true;
  try {
    (void)s.engine();
    ADD_FAILURE() << "--backfill-limits without --backfill was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("needs --backfill"), std::string::npos) << e.what();
  }
  s.backfill = true;
  EXPECT_TRUE(s.engine().backfill_on_limits);
  experiment::Json config;
  s.describe(config, s.profile("fcfs"));
  EXPECT_EQ(config.value("backfill_limits", false), true);
  s.backfill_limits = false;
  EXPECT_FALSE(s.engine().backfill_on_limits);
  experiment::Json plain;
  s.describe(plain, s.profile("fcfs"));
  EXPECT_FALSE(plain.contains("backfill_limits"));  // configs written before it existed stay as they were

  try {
    one_policy("{name: x, priority: fcfs, backfill_limits: true}");
    ADD_FAILURE() << "backfill_limits without backfill was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("needs backfill: true"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(one_policy("{name: x, priority: fcfs, backfill: true, backfill_limits: true}").workloads[0].policies[0].engine.backfill_on_limits);
  EXPECT_FALSE(one_policy("{name: x, priority: fcfs, backfill: true}").workloads[0].policies[0].engine.backfill_on_limits);
}

// The realistic regime in the environment: an agent that follows the baseline reproduces it (reward 0)
// with predicted runtimes, pool blocking and backfilling.
TEST(PredictedRuntimes, FollowingTheBaselineInTheRealisticRegimeGivesRewardZero) {
  const testing::GeneratedWorkload w("helios", 2000, 0.95, 3);
  for (const char* baseline : {"fcfs", "sjf"}) {
    rl::EnvOptions o;
    o.window.length = 200;
    o.baseline = baseline;
    o.commit = false;
    o.profile.blocking = policy::Blocking::pool;
    o.profile.backfill = true;
    o.engine.runtime = RuntimeKnowledge::predicted;
    rl::Env env(w.cluster, w.trace.jobs, o);
    EXPECT_EQ(testing::episode(env, 100, testing::first_legal), 0.0) << baseline;
    EXPECT_GT(env.baseline_score(), 1.0) << baseline;
  }
}

}  // namespace
}  // namespace rltune::sim
