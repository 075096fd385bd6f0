#include <gtest/gtest.h>

#include <cmath>

#include "helpers.h"
#include "policy/priority/priority.h"

namespace rltune::policy {
namespace {

const PriorityKeyDef& def(const std::string& name) {
  for (const auto& d : priority_key_defs())
    if (name == d.name) return d;
  throw std::runtime_error("no policy " + name);
}

// Facts: submit, estimate, gpus, wait, cluster GPUs.
JobFacts facts(double submit, double estimate, double gpus, double wait) { return {submit, estimate, gpus, wait, 136}; }

TEST(PriorityKeys, EachPolicyServesTheExpectedJobFirst) {
  struct Case {
    std::string policy;
    JobFacts first, second;  // `first` must sort strictly before `second`
  };
  const PriorityOptions options;
  const std::vector<Case> cases = {
      {"fcfs", facts(10, 500, 1, 0), facts(20, 5, 1, 0)},
      {"lcfs", facts(20, 5, 1, 0), facts(10, 500, 1, 0)},
      {"smallest", facts(20, 5, 1, 0), facts(10, 5, 2, 0)},
      {"smallest", facts(10, 5, 2, 0), facts(20, 5, 2, 0)},  // tie on size: earlier submit
      {"largest", facts(20, 5, 8, 0), facts(10, 5, 2, 0)},
      {"sjf", facts(20, 5, 8, 0), facts(10, 50, 1, 0)},
      {"sjf", facts(20, 5, 1, 0), facts(10, 5, 2, 0)},  // tie on runtime: fewer GPUs
      {"lpf", facts(20, 50, 8, 0), facts(10, 5, 1, 0)},
      {"saf", facts(20, 10, 2, 0), facts(10, 5, 8, 0)},  // area 20 < 40
      {"laf", facts(10, 5, 8, 0), facts(20, 10, 2, 0)},
      {"sexp", facts(0, 10, 4, 10), facts(0, 10, 1, 10)},  // 5 < 20
      {"lexp", facts(0, 10, 1, 10), facts(0, 10, 4, 10)},
      {"srf", facts(0, 10, 4, 0), facts(0, 10, 2, 0)},
      {"lrf", facts(0, 10, 2, 0), facts(0, 10, 4, 0)},
      {"multifactor", facts(0, 10, 1, 86400), facts(0, 10, 1, 3600)},  // older first
      {"multifactor", facts(0, 10, 64, 60), facts(0, 10, 1, 60)},      // favor large by default (Slurm)
      {"f1", facts(100, 10, 1, 0), facts(100, 1000, 1, 0)},
      {"f1", facts(100, 10, 1, 0), facts(10000, 10, 1, 0)},
      {"f2", facts(100, 10, 1, 0), facts(100, 1000, 1, 0)},
      {"f3", facts(100, 10, 1, 0), facts(100, 1000, 1, 0)},
      {"f4", facts(100, 10, 1, 0), facts(100, 1000, 1, 0)},
      {"wfp", facts(0, 10, 1, 100), facts(0, 10, 1, 50)},  // longer relative wait first
      {"wfp", facts(0, 10, 4, 100), facts(0, 10, 1, 100)},
      {"uni", facts(0, 10, 2, 100), facts(0, 10, 2, 50)},
  };
  for (const auto& c : cases) {
    const auto& d = def(c.policy);
    EXPECT_LT(d.key(c.first, options), d.key(c.second, options)) << c.policy;
  }
}

TEST(PriorityKeys, MultifactorWeightsAndFavorSmallAreOptions) {
  PriorityOptions options;
  options.multifactor.favor_small = true;
  const auto& mf = def("multifactor");
  EXPECT_LT(mf.key(facts(0, 10, 1, 60), options), mf.key(facts(0, 10, 64, 60), options));
  options.multifactor.size_weight = 0;
  EXPECT_EQ(mf.key(facts(0, 10, 1, 60), options), mf.key(facts(0, 10, 64, 60), options));
  // Age saturates at max_age.
  options.multifactor.max_age_s = 100;
  EXPECT_EQ(mf.key(facts(0, 10, 1, 200), options), mf.key(facts(0, 10, 1, 300), options));
}

TEST(PriorityKeys, TimeDependentPoliciesAreMarked) {
  for (const auto* name : {"sexp", "lexp", "multifactor", "wfp", "uni"}) EXPECT_TRUE(def(name).time_dependent) << name;
  for (const auto* name : {"fcfs", "sjf", "f1", "smallest"}) EXPECT_FALSE(def(name).time_dependent) << name;
}

TEST(PriorityKeys, GuardedAgainstZeroRuntimeAndSubmit) {
  const PriorityOptions options;
  for (const auto& d : priority_key_defs()) {
    const auto key = d.key(facts(0, 0, 1, 0), options);
    EXPECT_FALSE(std::isnan(key.first)) << d.name;
    EXPECT_FALSE(std::isnan(key.second)) << d.name;
  }
}

TEST(PriorityPolicy, UsesSimulatedWaitAndEstimatesNotTruth) {
  // Two jobs queued behind a long one; under `requested` runtimes SJF must order by the estimate.
  const auto cluster = testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 1, gpus_per_node: 1}\n");
  const std::vector<trace::JobSpec> jobs = {testing::job("long", 0, 100, 1, "", 100),
                                            testing::job("truly-short", 1, 5, 1, "", 1000),
                                            testing::job("truly-long", 2, 50, 1, "", 60)};
  const auto oracle = testing::simulate(cluster, jobs, testing::profile("sjf"));
  EXPECT_EQ(oracle["truly-short"].start, 100);
  const auto requested =
      testing::simulate(cluster, jobs, testing::profile("sjf"), {.runtime = sim::RuntimeKnowledge::requested});
  EXPECT_EQ(requested["truly-long"].start, 100);
  EXPECT_EQ(requested["truly-short"].start, 150);
}

}  // namespace
}  // namespace rltune::policy
