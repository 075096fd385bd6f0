// Warm windows: the jobs before a window are replayed by fcfs first, so the window starts on a loaded
// cluster; they are never measured or scored, and the simulator, the experiment runner and the RL
// environment all see the same warm state.
#include <gtest/gtest.h>

#include "core/error.h"
#include "experiment/config.h"
#include "experiment/runner.h"
#include "env_helpers.h"
#include "helpers.h"
#include "report/experiment_report.h"
#include "rl/env.h"

namespace rltune {
namespace {

struct Loaded : testing::GeneratedWorkload {
  Loaded() : GeneratedWorkload("helios", 700, 1.1, 4) {}
};

TEST(WarmWindows, ClipAtTheTracesStart) {
  const Loaded w;
  const sim::WarmWindow early = sim::warm_window(w.trace.jobs, 10, 20, 50);
  EXPECT_EQ(early.warmup, 10u);
  EXPECT_EQ(early.jobs.size(), 30u);
  EXPECT_EQ(&early.jobs[0], &w.trace.jobs[0]);
  const sim::WarmWindow later = sim::warm_window(w.trace.jobs, 300, 20, 50);
  EXPECT_EQ(later.warmup, 50u);
  EXPECT_EQ(&later.jobs[later.warmup], &w.trace.jobs[300]);
}

// Under fcfs with global blocking a job never depends on later jobs, so a window warmed by every job
// before it is scheduled exactly as in a run of the whole trace.
TEST(WarmWindows, AFullyWarmedFcfsWindowEqualsTheWholeTracesRows) {
  const Loaded w;
  const auto profile = testing::profile("fcfs");
  const auto whole = testing::simulate(w.cluster, w.trace.jobs, profile);
  auto scheduler = policy::make_profile(profile);
  const metrics::RunMetrics warm =
      experiment::run_window(w.cluster, sim::warm_window(w.trace.jobs, 400, 150, 400), {}, *scheduler, "400:150");
  ASSERT_EQ(warm.jobs.size(), 150u);  // the warm-up jobs are not measured
  int waited = 0;
  for (std::size_t i = 0; i < warm.jobs.size(); ++i) {
    const metrics::JobRecord& mine = warm.jobs[i];
    const metrics::JobRecord& reference = whole.run.jobs[400 + i];
    ASSERT_EQ(mine.job_id, reference.job_id);
    ASSERT_EQ(mine.start, reference.start) << mine.job_id;
    ASSERT_EQ(mine.placement, reference.placement) << mine.job_id;
    waited += mine.wait() > 0;
  }
  EXPECT_GT(waited, 50);  // a loaded cluster: the warm-up matters
  // Cold, the same window waits far less.
  const metrics::RunMetrics cold =
      experiment::run_window(w.cluster, sim::warm_window(w.trace.jobs, 400, 150, 0), {}, *scheduler, "400:150");
  EXPECT_LT(metrics::summarize(cold).avg_wait_s, metrics::summarize(warm).avg_wait_s);
}

// Under requested runtimes, only the window's jobs without a requested time count as fallbacks.
TEST(WarmWindows, EstimateFallbacksCountOnlyTheWindowsJobs) {
  const Loaded w;
  std::vector<trace::JobSpec> jobs = w.trace.jobs;
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i].requested_time = i < 400 || i == 410 ? -1 : 2 * jobs[i].duration;
  auto scheduler = policy::make_profile(testing::profile("sjf"));
  const sim::EngineOptions requested{.runtime = sim::RuntimeKnowledge::requested};
  EXPECT_EQ(experiment::run_window(w.cluster, sim::warm_window(jobs, 400, 50, 100), requested, *scheduler, "w").estimate_fallbacks, 1u);
  EXPECT_EQ(experiment::run_window(w.cluster, sim::warm_window(jobs, 350, 100, 0), requested, *scheduler, "w").estimate_fallbacks, 51u);
}

// The environment's warm-up is the simulator's: its baseline score is the bsld run_window measures, and
// an agent that follows fcfs gets reward 0, with predicted runtimes, pool blocking and backfilling too.
TEST(WarmWindows, TheEnvironmentScoresOnlyTheWindowAfterTheSameWarmUp) {
  const Loaded w;
  for (const bool realistic : {false, true}) {
    SCOPED_TRACE(realistic ? "pool+backfill+predicted" : "paper");
    rl::EnvOptions o;
    o.window.length = 120;
    o.window.warmup = 200;
    if (realistic) {
      o.profile.blocking = policy::Blocking::pool;
      o.profile.backfill = true;
      o.engine.runtime = sim::RuntimeKnowledge::predicted;
    }
    rl::Env env(w.cluster, w.trace.jobs, o);
    EXPECT_EQ(testing::episode(env, 350, testing::first_legal), 0.0);
    auto fcfs = policy::make_profile(o.profile);
    const metrics::RunMetrics run =
        experiment::run_window(w.cluster, sim::warm_window(w.trace.jobs, 350, 120, 200), o.engine, *fcfs, "350:120");
    EXPECT_DOUBLE_EQ(env.baseline_score(), metrics::summarize(run).avg_bsld);
    EXPECT_GT(env.baseline_score(), 1.0);
  }
}

TEST(WarmWindows, ExperimentConfigsTakeAWarmUp) {
  policy::register_builtins();
  const std::string base = "windows: {count: 2, length: 50, warmup: WARM}\npolicies: [fcfs]\n"
                           "workloads: [{cluster: helios, trace: {generate: {jobs: 300}}}]\n";
  const auto with = [&](const std::string& warm) {
    std::string text = base;
    text.replace(text.find("WARM"), 4, warm);
    return text;
  };
  EXPECT_EQ(experiment::parse_config(with("100"), "/tmp/x.yaml").windows.warmup, 100);
  try {
    experiment::parse_config(with("-1"), "/tmp/x.yaml");
    ADD_FAILURE() << "a negative warm-up was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("windows.warmup"), std::string::npos) << e.what();
  }
}

// `length: all`: one window, the whole split, after the warm-up; the same result as a direct run.
TEST(WarmWindows, AnExperimentWindowCanBeTheWholeSplit) {
  policy::register_builtins();
  const std::string text = "seed: 4\nwindows: {length: all, split: test, train_split: 0.5, warmup: 100}\npolicies: [fcfs, sjf]\n"
                           "workloads: [{cluster: helios, trace: {generate: {like: helios, jobs: 700, load: 1.1}}}]\n";
  const experiment::Config c = experiment::parse_config(text, "/tmp/x.yaml");
  EXPECT_TRUE(c.windows.whole);
  testing::TempDir dir;
  const experiment::Outcome o = experiment::run_experiment(c, dir.path + "/out", {.jobs = 1, .progress = false});
  EXPECT_EQ(o.runs, 2u);
  const auto runs = report::CsvTable::read(dir.path + "/out/runs.csv");
  ASSERT_EQ(runs.rows.size(), 2u);
  // 700 jobs: training 0..349, validation 350..524, test 525..699.
  const Loaded w;
  auto sjf = policy::make_profile(testing::profile("sjf"));
  const metrics::Summary direct =
      metrics::summarize(experiment::run_window(w.cluster, sim::warm_window(w.trace.jobs, 525, 175, 100), {}, *sjf, "x"));
  for (const auto& r : runs.rows) {
    EXPECT_EQ(r[runs.column("window")], "525:175");
    EXPECT_EQ(r[runs.column("jobs_total")], "175");
    if (r[runs.column("policy")] == "sjf") {
      EXPECT_DOUBLE_EQ(std::stod(r[runs.column("avg_wait_s")]), direct.avg_wait_s);
    }
  }
  try {
    experiment::parse_config("windows: {length: all, count: 3}\npolicies: [fcfs]\nworkloads: [{cluster: helios}]\n", "/tmp/x.yaml");
    ADD_FAILURE() << "length all with count 3 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("windows.count"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rltune
