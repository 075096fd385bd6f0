// Warm windows: the jobs before a window are replayed by fcfs first, so the window starts on a loaded
// cluster; they are never measured or scored, and the simulator, the experiment runner and the RL
// environment all see the same warm state.
#include <gtest/gtest.h>

#include "core/error.h"
#include "experiment/config.h"
#include "experiment/runner.h"
#include "env_helpers.h"
#include "helpers.h"
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

// The environment's warm-up is the simulator's: its baseline score is the bsld run_window measures, and
// an agent that follows fcfs gets reward 0, with predicted runtimes, pool blocking and backfilling too.
TEST(WarmWindows, TheEnvironmentScoresOnlyTheWindowAfterTheSameWarmUp) {
  const Loaded w;
  for (const bool realistic : {false, true}) {
    SCOPED_TRACE(realistic ? "pool+backfill+predicted" : "paper");
    rl::EnvOptions o;
    o.window_len = 120;
    o.warmup = 200;
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

}  // namespace
}  // namespace rltune
