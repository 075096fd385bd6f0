// The RL observation (SPEC 6.1 with B26 fixed): exact features on a hand case, bounds and masks on random
// states, slot order and the 128-slot cap.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/rng.h"
#include "helpers.h"
#include "rl/observation.h"

namespace rltune::rl {
namespace {

TEST(Observation, FeaturesOfAHandCase) {
  const auto cluster = testing::cluster_from("pools: [{name: p, nodes: 2, gpus_per_node: 8}]");
  const std::vector<trace::JobSpec> jobs = {testing::job("r", 0, 1000, 5), testing::job("j1", 0, 50, 2),
                                            testing::job("j2", 100, 50, 16)};
  sim::Engine engine(cluster, jobs);
  ASSERT_TRUE(engine.advance());  // t = 0: r and j1 queued
  ASSERT_TRUE(engine.start(0, {0, {{0, 5}}}).started());
  ASSERT_TRUE(engine.advance());  // t = 100: j2 arrives; j1 still waits
  ASSERT_EQ(engine.now(), 100);
  Observation o;
  observe(sim::View(engine), engine.queue(), o);
  ASSERT_EQ(o.visible, 2);
  EXPECT_EQ(o.jobs[0], 1);
  EXPECT_EQ(o.jobs[1], 2);
  // Pool: free 3 + 8 = 11 of 16; node 0 partly used; both visible jobs ask 2 + 16 = 18 GPUs.
  const float* j1 = o.values.data();
  EXPECT_FLOAT_EQ(j1[0], 100.0f / 43200);
  EXPECT_FLOAT_EQ(j1[1], 0.25f);
  EXPECT_FLOAT_EQ(j1[2], static_cast<float>(2.0 / 11 / 16));
  EXPECT_FLOAT_EQ(j1[3], static_cast<float>((11.0 - 18 + 16) / (32 + kEps)));
  EXPECT_FLOAT_EQ(j1[4], 0.5f);
  EXPECT_FLOAT_EQ(j1[5], static_cast<float>(2.0 / 3));  // two one-node candidates, no tier 2
  EXPECT_FLOAT_EQ(j1[6], static_cast<float>(1 - kEps));
  const float* j2 = o.values.data() + kFeatures;
  EXPECT_FLOAT_EQ(j2[0], 0.0f);
  EXPECT_FLOAT_EQ(j2[1], static_cast<float>(1 - kEps));  // 16 / 8, capped
  EXPECT_FLOAT_EQ(j2[5], static_cast<float>(kEps));      // 16 GPUs cannot go on the 11 free now
  EXPECT_FLOAT_EQ(j2[6], static_cast<float>(kEps));
  EXPECT_EQ(o.mask[0], 1);
  EXPECT_EQ(o.mask[1], 1);
  EXPECT_EQ(o.mask[2], 0);
  const float* empty = o.values.data() + 2 * kFeatures;
  EXPECT_EQ(std::vector<float>(empty, empty + kFeatures), (std::vector<float>{0, 1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(o.jobs[2], -1);
}

TEST(Observation, FeaturesStayInRangeAndMasksMatchJobs) {
  // Random clusters and queues: every feature in [0, 1], exactly the visible slots unmasked, in order.
  const auto cluster = cluster::load_cluster("philly");
  Rng rng(5);
  for (int round = 0; round < 20; ++round) {
    std::vector<trace::JobSpec> jobs;
    const int n = static_cast<int>(rng.uniform_int(1, 300));
    for (int i = 0; i < n; ++i)
      jobs.push_back(testing::job(fmt::format("j{}", i), 0, 100, static_cast<int>(rng.uniform_int(1, 32))));
    sim::Engine engine(cluster, jobs);
    ASSERT_TRUE(engine.advance());
    Observation o;
    observe(sim::View(engine), engine.queue(), o);
    EXPECT_EQ(o.visible, std::min(n, kSlots));
    for (int s = 0; s < kSlots; ++s) {
      EXPECT_EQ(o.mask[static_cast<std::size_t>(s)], s < o.visible ? 1 : 0);
      if (s < o.visible) {
        EXPECT_EQ(o.jobs[static_cast<std::size_t>(s)], engine.queue()[static_cast<std::size_t>(s)]);
      }
      for (int f = 0; f < kFeatures; ++f) {
        const float v = o.values[static_cast<std::size_t>(s * kFeatures + f)];
        ASSERT_GE(v, 0.0f);
        ASSERT_LE(v, 1.0f);
      }
    }
  }
}

TEST(Observation, SkipsJobsThatAreNoLongerQueued) {
  const auto cluster = testing::cluster_from("pools: [{name: p, nodes: 1, gpus_per_node: 8}]");
  const std::vector<trace::JobSpec> jobs = {testing::job("a", 0, 10, 2), testing::job("b", 0, 10, 2)};
  sim::Engine engine(cluster, jobs);
  ASSERT_TRUE(engine.advance());
  const std::vector<JobIndex> order = {0, 1};  // a stale order: a starts below
  ASSERT_TRUE(engine.start(0, {0, {{0, 2}}}).started());
  Observation o;
  observe(sim::View(engine), order, o);
  ASSERT_EQ(o.visible, 1);
  EXPECT_EQ(o.jobs[0], 1);
}

}  // namespace
}  // namespace rltune::rl
