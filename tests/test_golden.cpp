// Golden schedules: tiny traces whose correct schedule is worked out by hand in the comments.
#include <gtest/gtest.h>

#include "helpers.h"

namespace rltune {
namespace {

using policy::Blocking;
using testing::job;

struct Expected {
  std::string id;
  Seconds start, end;
  std::string placement = "";  // "" = not checked
};

void expect_schedule(const testing::Outcome& out, const std::vector<Expected>& expected) {
  for (const auto& e : expected) {
    EXPECT_EQ(out[e.id].start, e.start) << e.id;
    EXPECT_EQ(out[e.id].end, e.end) << e.id;
    if (!e.placement.empty()) {
      EXPECT_EQ(out[e.id].placement, e.placement) << e.id;
    }
  }
}

// One pool of 2 nodes x 4 GPUs.
//   a: t=0, 100 s, 4 GPUs -> node p-0 at once.
//   b: t=0,  50 s, 8 GPUs -> needs both nodes; p-0 is busy: b blocks.
//   c: t=10, 20 s, 2 GPUs -> fits on p-1.
const char* kTwoNodes = "name: c\npools:\n  - {name: p, nodes: 2, gpus_per_node: 4}\n";
std::vector<trace::JobSpec> blocking_trace() { return {job("a", 0, 100, 4), job("b", 0, 50, 8), job("c", 10, 20, 2, "", 200)}; }

TEST(Golden, GlobalBlockingWithoutBackfill) {
  // b blocks everything: c waits until b has started (100) and ended (150).
  const auto out = testing::simulate(testing::cluster_from(kTwoNodes), blocking_trace(), testing::profile("fcfs"));
  expect_schedule(out, {{"a", 0, 100, "p-0:4"}, {"b", 100, 150, "p-0:4+p-1:4"}, {"c", 150, 170, "p-0:2"}});
}

TEST(Golden, EasyBackfillFillsTheHoleBeforeTheReservation) {
  // b reserves the pool at 100 (a's end). c ends at 30 <= 100, so it starts at 10 on p-1.
  const auto out = testing::simulate(testing::cluster_from(kTwoNodes), blocking_trace(), testing::profile("fcfs", Blocking::global, true));
  expect_schedule(out, {{"a", 0, 100, "p-0:4"}, {"b", 100, 150, "p-0:4+p-1:4"}, {"c", 10, 30, "p-1:2"}});
}

TEST(Golden, BackfillTrustsEstimatesNotTheTruth) {
  // With requested runtimes c claims 200 s: 10 + 200 > 100, so it may not jump ahead of b.
  const auto out = testing::simulate(testing::cluster_from(kTwoNodes), blocking_trace(),
                                     testing::profile("fcfs", Blocking::global, true),
                                     {.runtime = sim::RuntimeKnowledge::requested});
  expect_schedule(out, {{"a", 0, 100}, {"b", 100, 150}, {"c", 150, 170}});
}

// Backfilling planned with time limits (--backfill-limits), as Slurm's backfill plans, while the
// estimates (here oracle) stay what the priorities see. On kTwoNodes:
//   a: t=0,  100 s, 4 GPUs, limit 300 -> p-0 at once.
//   b: t=0,   50 s, 8 GPUs, limit  60 -> blocked. Reserved by plan: at a's end by estimate (100) or by
//                                        limit (300).
//   c: t=10, 150 s, 2 GPUs, limit 250 -> by estimate it would end at 160 > 100: it waits for b (150) and
//                                        ends at 300. By limit it ends by 260 <= 300: it backfills at 10,
//                                        and b starts when c has freed p-1 (160), within its reservation.
std::vector<trace::JobSpec> limits_trace() {
  return {job("a", 0, 100, 4, "", 300), job("b", 0, 50, 8, "", 60), job("c", 10, 150, 2, "", 250)};
}

TEST(Golden, BackfillPlansWithTimeLimitsWhenAsked) {
  const auto backfill = testing::profile("fcfs", Blocking::global, true);
  const auto by_estimate = testing::simulate(testing::cluster_from(kTwoNodes), limits_trace(), backfill);
  expect_schedule(by_estimate, {{"a", 0, 100, "p-0:4"}, {"b", 100, 150}, {"c", 150, 300}});
  const auto by_limit = testing::simulate(testing::cluster_from(kTwoNodes), limits_trace(), backfill, {.backfill_on_limits = true});
  expect_schedule(by_limit, {{"a", 0, 100, "p-0:4"}, {"b", 160, 210}, {"c", 10, 160, "p-1:2"}});
  EXPECT_EQ(by_limit["c"].estimate, 150);  // what schedulers see stays the estimate
}

// Only backfilling's plans change: the priorities still order by estimates. One node of 4 GPUs; a holds
// it until 50; x (10 s, limit 1000) and y (100 s, limit 200) wait for all of it. SJF by estimates
// serves x first, by limits (--runtime requested) y.
TEST(Golden, TimeLimitPlansLeaveThePrioritiesToTheEstimates) {
  const auto cluster = testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 1, gpus_per_node: 4}\n");
  const std::vector<trace::JobSpec> jobs = {job("a", 0, 50, 4, "", 60), job("x", 1, 10, 4, "", 1000), job("y", 2, 100, 4, "", 200)};
  const auto sjf = testing::profile("sjf", Blocking::global, true);
  expect_schedule(testing::simulate(cluster, jobs, sjf, {.backfill_on_limits = true}), {{"x", 50, 60}, {"y", 60, 160}});
  expect_schedule(testing::simulate(cluster, jobs, sjf, {.runtime = sim::RuntimeKnowledge::requested}), {{"y", 50, 150}, {"x", 150, 160}});
}

// Two pools of 1 node x 4 GPUs, by VC.
//   a: t=0, 100 s, 4 GPUs, vc A -> pool A at once.
//   b: t=0,  10 s, 4 GPUs, vc A -> blocked behind a.
//   c: t=5,  10 s, 2 GPUs, vc B -> pool B is idle.
const char* kTwoPools =
    "name: c\npools:\n  - {name: A, nodes: 1, gpus_per_node: 4, accepts: {vc: [A]}}\n"
    "  - {name: B, nodes: 1, gpus_per_node: 4, accepts: {vc: [B]}}\n";
std::vector<trace::JobSpec> pools_trace() { return {job("a", 0, 100, 4, "A"), job("b", 0, 10, 4, "A"), job("c", 5, 10, 2, "B")}; }

TEST(Golden, GlobalBlockingStopsOtherPoolsToo) {
  const auto out = testing::simulate(testing::cluster_from(kTwoPools), pools_trace(), testing::profile("fcfs"));
  expect_schedule(out, {{"a", 0, 100, "A-0:4"}, {"b", 100, 110, "A-0:4"}, {"c", 100, 110, "B-0:2"}});
}

TEST(Golden, PoolBlockingKeepsOtherPoolsServed) {
  const auto out = testing::simulate(testing::cluster_from(kTwoPools), pools_trace(), testing::profile("fcfs", Blocking::pool));
  expect_schedule(out, {{"a", 0, 100}, {"b", 100, 110}, {"c", 5, 15, "B-0:2"}});
}

TEST(Golden, GlobalBlockingWithBackfillServesJobsEndingBeforeTheReservation) {
  // b's reservation (100) binds every pool under global blocking; c ends at 15 <= 100, so it backfills.
  const auto out = testing::simulate(testing::cluster_from(kTwoPools), pools_trace(), testing::profile("fcfs", Blocking::global, true));
  expect_schedule(out, {{"a", 0, 100}, {"b", 100, 110}, {"c", 5, 15}});
}

TEST(Golden, GlobalReservationHoldsLongJobsInOtherPoolsButPoolBlockingDoesNot) {
  // c now runs 500 s: 5 + 500 > 100, so under global blocking it waits for b (the reference's EASY);
  // under pool blocking with backfill, pool B is not blocked at all and c starts at 5.
  auto jobs = pools_trace();
  jobs[2].duration = 500;
  const auto global = testing::simulate(testing::cluster_from(kTwoPools), jobs, testing::profile("fcfs", Blocking::global, true));
  expect_schedule(global, {{"a", 0, 100}, {"b", 100, 110}, {"c", 100, 600}});
  const auto pool = testing::simulate(testing::cluster_from(kTwoPools), jobs, testing::profile("fcfs", Blocking::pool, true));
  expect_schedule(pool, {{"a", 0, 100}, {"b", 100, 110}, {"c", 5, 505}});
}

// Pool blocking with backfill: every blocked pool keeps its own reservation.
//   Pool A: a (0-100, 4 GPUs), b (4 GPUs) reserved at 100; d (vc A, 1 GPU... none free) waits.
//   Pool B: x (0-50, 3 GPUs), y (4 GPUs) reserved at 50; z (vc B, 1 GPU, 40 s) at t=1: 1 + 40 <= 50,
//   fits on the free GPU -> backfilled; w (vc B, 1 GPU, 60 s) at t=2: 62 > 50 -> waits for y.
TEST(Golden, PoolBlockingWithBackfillHasOneReservationPerPool) {
  const std::vector<trace::JobSpec> jobs = {job("a", 0, 100, 4, "A"), job("x", 0, 50, 3, "B"), job("b", 0, 10, 4, "A"),
                                            job("y", 0, 10, 4, "B"),  job("z", 1, 40, 1, "B"), job("w", 2, 60, 1, "B")};
  const auto out = testing::simulate(testing::cluster_from(kTwoPools), jobs, testing::profile("fcfs", Blocking::pool, true));
  expect_schedule(out, {{"a", 0, 100}, {"x", 0, 50}, {"b", 100, 110}, {"y", 50, 60}, {"z", 1, 41, "B-0:1"}, {"w", 60, 120}});
}

TEST(Golden, PhillyMultiPoolJobsUseOnePoolPreferringSmallNodes) {
  // Philly preset: 16 x 2-GPU nodes (ids 0-15) accept jobs of <= 4 GPUs; 20 x 8-GPU nodes (16-35).
  // "ten" needs 2 large nodes; after "six" took 6 GPUs of large-0, the smallest list is (large-0:2, large-1:8).
  const auto philly = cluster::load_cluster("philly");
  const auto out = testing::simulate(philly, {job("four", 0, 10, 4), job("six", 0, 10, 6), job("ten", 0, 10, 10)},
                                     testing::profile("fcfs"));
  expect_schedule(out, {{"four", 0, 10, "small-0:2+small-1:2"}, {"six", 0, 10, "large-0:6"}, {"ten", 0, 10, "large-0:2+large-1:8"}});
}

TEST(Golden, DefragPlacementAvoidsSplittingEvenly) {
  // 10 GPUs on idle 8-GPU nodes: greedy splits 5+5, defrag fills one node (8+2).
  const auto cluster = testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 3, gpus_per_node: 8}\n");
  EXPECT_EQ(testing::simulate(cluster, {job("j", 0, 10, 10)}, testing::profile("fcfs"))["j"].placement, "p-0:5+p-1:5");
  EXPECT_EQ(testing::simulate(cluster, {job("j", 0, 10, 10)}, testing::profile("fcfs", Blocking::global, false, "defrag"))["j"].placement,
            "p-0:8+p-1:2");
}

}  // namespace
}  // namespace rltune
