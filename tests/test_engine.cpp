#include <gtest/gtest.h>

#include "core/error.h"
#include "helpers.h"

namespace rltune::sim {
namespace {

using testing::job;

const char* kOneNode4 = "name: c\npools:\n  - {name: p, nodes: 1, gpus_per_node: 4}\n";

TEST(Engine, CompletionsAtTimeTComeBeforeDecisionsAtT) {
  const auto cluster = testing::cluster_from(kOneNode4);
  const auto out = testing::simulate(cluster, {job("a", 0, 10, 4), job("b", 10, 5, 4)}, testing::profile("fcfs"));
  EXPECT_EQ(out["b"].start, 10);
}

TEST(Engine, SimultaneousArrivalsAreAllQueuedBeforeTheDecision) {
  // Both arrive at 10 while the node is busy until 10; SJF must see both and start the shorter first.
  const auto cluster = testing::cluster_from(kOneNode4);
  const auto out = testing::simulate(cluster, {job("a", 0, 10, 4), job("long", 10, 50, 4), job("short", 10, 5, 4)},
                                     testing::profile("sjf"));
  EXPECT_EQ(out["short"].start, 10);
  EXPECT_EQ(out["long"].start, 15);
}

TEST(Engine, RejectsJobsThatCanNeverRunWithReasonsAndKeepsGoing) {
  const auto cluster = testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 2, gpus_per_node: 4, accepts: {vc: [x]}}\n");
  const auto out = testing::simulate(cluster,
                                     {job("ok", 0, 10, 2, "x"), job("big", 1, 10, 16, "x"), job("zero", 2, 10, 0, "x"),
                                      job("novc", 3, 10, 1, "y"), job("neg", 4, -5, 1, "x"), job("last", 5, 10, 1, "x")},
                                     testing::profile("fcfs"));
  EXPECT_EQ(out["ok"].status, "completed");
  EXPECT_EQ(out["last"].status, "completed");
  EXPECT_EQ(out["last"].start, 5);  // rejected jobs never block or stall time
  for (const auto& [id, reason] : std::vector<std::pair<std::string, std::string>>{
           {"big", "too_many_gpus"}, {"zero", "zero_gpus"}, {"novc", "no_eligible_pool"}, {"neg", "negative_duration"}}) {
    EXPECT_EQ(out[id].status, "rejected") << id;
    EXPECT_EQ(out[id].reason.rfind(reason, 0), 0u) << id << ": " << out[id].reason;
  }
}

TEST(Engine, RefusesInvalidDecisionsWithoutChangingState) {
  const auto cluster = testing::cluster_from(kOneNode4);
  const std::vector<trace::JobSpec> jobs = {job("a", 0, 10, 2), job("b", 5, 10, 2)};
  Engine engine(cluster, jobs);
  ASSERT_TRUE(engine.advance());
  EXPECT_EQ(engine.now(), 0);
  const auto refusal = [&](JobIndex j, const cluster::Placement& p) { return engine.start(j, p).refusal; };
  EXPECT_EQ(refusal(0, {0, {{0, 3}}}), StartRefusal::invalid_placement);  // wrong GPU count
  EXPECT_EQ(refusal(0, {0, {{1, 2}}}), StartRefusal::invalid_placement);  // no such node in the pool
  EXPECT_EQ(refusal(1, {0, {{0, 2}}}), StartRefusal::not_queued);         // not arrived yet
  EXPECT_EQ(refusal(2, {0, {{0, 2}}}), StartRefusal::no_such_job);
  EXPECT_EQ(engine.start(0, {0, {{0, 3}}}).reason, "job a: the placement gives 3 GPUs, the job needs 2");
  EXPECT_EQ(engine.cluster().free_total(), 4);
  EXPECT_TRUE(engine.start(0, {0, {{0, 2}}}).started());
  EXPECT_EQ(refusal(0, {0, {{0, 2}}}), StartRefusal::not_queued);  // already running
  EXPECT_EQ(engine.cluster().free_total(), 2);
}

TEST(Engine, AWakeIsADecisionPointUnlessAnEventComesFirst) {
  // "a" holds the node until 100; "b" (queued from 5) waits; "c" arrives at 300.
  const auto cluster = testing::cluster_from(kOneNode4);
  const std::vector<trace::JobSpec> jobs = {job("a", 0, 100, 4), job("b", 5, 10, 4), job("c", 300, 10, 4)};
  Engine engine(cluster, jobs);
  ASSERT_TRUE(engine.advance());
  ASSERT_TRUE(engine.start(0, {0, {{0, 4}}}).started());
  ASSERT_TRUE(engine.advance());
  EXPECT_EQ(engine.now(), 5);
  EXPECT_THROW(engine.wake_at(5), InvariantError);  // not after now
  engine.wake_at(50);
  ASSERT_TRUE(engine.advance());
  EXPECT_EQ(engine.now(), 50);  // the wake, before "a" ends
  EXPECT_EQ(engine.cluster().free_total(), 0);
  engine.wake_at(250);
  ASSERT_TRUE(engine.advance());
  EXPECT_EQ(engine.now(), 100);  // "a" ends first; the wake is forgotten
  ASSERT_TRUE(engine.start(1, {0, {{0, 4}}}).started());
  EXPECT_TRUE(engine.event_pending());
  ASSERT_TRUE(engine.advance());
  EXPECT_EQ(engine.now(), 300);  // not 250
  ASSERT_TRUE(engine.start(2, {0, {{0, 4}}}).started());
  EXPECT_TRUE(engine.event_pending());  // "c" still runs
  EXPECT_FALSE(engine.advance());
  EXPECT_FALSE(engine.event_pending());
}

TEST(Engine, JobsWaitForCpusAsWellAsGpusUnderEveryPlacement) {
  // One 8-GPU node with 16 CPUs. "a" takes 2 GPUs and 12 CPUs; "b" wants 2 GPUs and 8 CPUs: 6 GPUs are
  // free but only 4 CPUs, so b waits until a ends, under every placement policy.
  const auto cluster = testing::cluster_from("pools: [{name: p, nodes: 1, gpus_per_node: 8, cpus_per_node: 16}]");
  auto a = job("a", 0, 10, 2), b = job("b", 1, 5, 2);
  a.cpus = 12;
  b.cpus = 8;
  for (const char* placement : {"greedy", "defrag", "balance", "milp"}) {
    const auto out = testing::simulate(cluster, {a, b}, testing::profile("fcfs", policy::Blocking::global, false, placement));
    EXPECT_EQ(out["a"].start, 0) << placement;
    EXPECT_EQ(out["b"].start, 10) << placement;
  }
  // Without CPUs in the pool, b starts at once.
  const auto gpus_only = testing::cluster_from("pools: [{name: p, nodes: 1, gpus_per_node: 8}]");
  EXPECT_EQ(testing::simulate(gpus_only, {a, b}, testing::profile("fcfs"))["b"].start, 1);
}

class DoNothing final : public Scheduler {
 public:
  void decide(Engine&) override {}
};

TEST(Engine, AStalledSchedulerIsAnInvariantViolationNotAHang) {
  const auto cluster = testing::cluster_from(kOneNode4);
  const std::vector<trace::JobSpec> jobs = {job("a", 0, 10, 2)};
  Engine engine(cluster, jobs);
  DoNothing nothing;
  EXPECT_THROW(engine.run(nothing), InvariantError);
}

TEST(Engine, ZeroDurationJobsEndAtTheirStart) {
  const auto cluster = testing::cluster_from(kOneNode4);
  const auto out = testing::simulate(cluster, {job("a", 3, 0, 4), job("b", 3, 7, 4)}, testing::profile("fcfs"));
  EXPECT_EQ(out["a"].start, 3);
  EXPECT_EQ(out["a"].end, 3);
  EXPECT_EQ(out["b"].start, 3);
  EXPECT_EQ(out["b"].end, 10);
}

TEST(Engine, UnsortedJobsAreRefused) {
  const auto cluster = testing::cluster_from(kOneNode4);
  const std::vector<trace::JobSpec> jobs = {job("a", 5, 1, 1), job("b", 0, 1, 1)};
  EXPECT_THROW(Engine(cluster, jobs), InvariantError);
}

TEST(Engine, RequestedRuntimeFallsBackToTruthAndCountsIt) {
  const auto cluster = testing::cluster_from(kOneNode4);
  const std::vector<trace::JobSpec> jobs = {job("a", 0, 10, 1, "", 30), job("b", 0, 10, 1)};
  Engine engine(cluster, jobs, {.runtime = RuntimeKnowledge::requested});
  EXPECT_EQ(engine.job(0).estimate, 30);
  EXPECT_EQ(engine.job(1).estimate, 10);
  policy::register_builtins();
  auto fcfs = policy::make_profile(testing::profile("fcfs"));
  EXPECT_EQ(metrics::run_and_measure(engine, *fcfs, "all").estimate_fallbacks, 1u);  // the metrics count it
}

}  // namespace
}  // namespace rltune::sim
