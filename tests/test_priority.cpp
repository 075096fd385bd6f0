#include <gtest/gtest.h>

#include <algorithm>
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

// Facts: submit, estimate, gpus, wait, cluster GPUs, recorded wait (none).
JobFacts facts(double submit, double estimate, double gpus, double wait) { return {submit, estimate, gpus, wait, 136, std::nan("")}; }

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
  for (const auto* name : {"sexp", "lexp", "multifactor", "wfp", "uni"}) EXPECT_TRUE(def(name).time_dependent()) << name;
  for (const auto* name : {"fcfs", "sjf", "f1", "smallest"}) EXPECT_FALSE(def(name).time_dependent()) << name;
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

// Orders are kept incrementally (time-independent ones: arrivals inserted or merged into the previous
// order; time-dependent ones: fixed orders per class, merged by the current key) and handed out a
// prefix at a time; at every decision of a loaded run they must equal a full sort of the queue by
// (key, arrival), and a longer prefix must extend a shorter one.
class CheckOrder final : public sim::Scheduler {
 public:
  CheckOrder(const PriorityKeyDef& def, const PriorityOptions& options, sim::Scheduler& inner)
      : def_(def), options_(options), kept_(make_key_priority(def, options)), lazy_(make_key_priority(def, options)), inner_(inner) {}
  void begin_run(const sim::Engine& engine) override { inner_.begin_run(engine); }
  void decide(sim::Engine& engine) override {
    const sim::View view(engine);
    const auto queued = [&](std::span<const JobIndex> order) {
      std::vector<JobIndex> jobs;
      for (const JobIndex j : order)
        if (view.job(j).queued()) jobs.push_back(j);
      return jobs;
    };
    std::vector<std::pair<std::pair<double, double>, JobIndex>> full;
    for (const JobIndex j : view.queue()) {
      const auto job = view.job(j);
      const JobFacts f{static_cast<double>(job.submit()), static_cast<double>(job.estimate()), static_cast<double>(job.gpus()),
                       static_cast<double>(view.now() - job.submit()), static_cast<double>(view.cluster_spec().total_gpus()),
                       std::nan("")};
      full.push_back({def_.key(f, options_), j});
    }
    std::sort(full.begin(), full.end());
    const std::vector<JobIndex> kept = queued(kept_->order(view));
    ASSERT_EQ(kept.size(), full.size()) << def_.name << " at " << view.now();
    for (std::size_t i = 0; i < kept.size(); ++i) {
      ASSERT_EQ(kept[i], full[i].second) << def_.name << " at " << view.now() << ", place " << i;
    }
    const auto first = lazy_->prefix(view, view.queue(), 2);
    const std::vector<JobIndex> shorter(first.begin(), first.end());
    const auto longer = lazy_->prefix(view, view.queue(), 5);
    ASSERT_GE(longer.size(), std::min<std::size_t>(5, full.size())) << def_.name;
    ASSERT_TRUE(std::equal(shorter.begin(), shorter.end(), longer.begin())) << def_.name << " at " << view.now();
    ASSERT_EQ(queued(lazy_->order(view)), kept) << def_.name << " at " << view.now();
    ++decisions;
    inner_.decide(engine);
  }
  int decisions = 0;

 private:
  const PriorityKeyDef& def_;
  PriorityOptions options_;
  std::unique_ptr<PriorityPolicy> kept_;  // asked for the whole order
  std::unique_ptr<PriorityPolicy> lazy_;  // asked for prefixes first
  sim::Scheduler& inner_;
};

int check_orders(const cluster::ClusterSpec& cluster, const std::vector<trace::JobSpec>& jobs, const PriorityKeyDef& def,
                 const PriorityOptions& options = {}) {
  auto profile = make_profile(testing::profile(def.name, Blocking::pool, true));
  CheckOrder check(def, options, *profile);
  sim::Engine engine(cluster, jobs, {});
  engine.run(check);
  return check.decisions;
}

TEST(PriorityPolicy, IncrementalOrdersEqualAFullSort) {
  const testing::GeneratedWorkload w("helios", 1500, 1.3, 4);
  std::vector<trace::JobSpec> jobs = w.trace.jobs;
  for (std::size_t i = 0; i < jobs.size(); i += 3) jobs[i].submit = jobs[std::max<std::size_t>(i, 1) - 1].submit;  // ties too
  for (std::size_t i = 100; i + 12 < jobs.size(); i += 200)  // and bursts of 12 arrivals at once: merged, not inserted
    for (std::size_t k = 1; k < 12; ++k) jobs[i + k].submit = jobs[i].submit;
  std::stable_sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.submit < b.submit; });
  for (const PriorityKeyDef& d : priority_key_defs()) EXPECT_GT(check_orders(w.cluster, jobs, d), 1000) << d.name;
  // Slurm's multifactor with a negative age weight: the age cap (an hour) reorders jobs of one GPU count.
  PriorityOptions aging_down;
  aging_down.multifactor.age_weight = -1000;
  aging_down.multifactor.max_age_s = 3600;
  EXPECT_GT(check_orders(w.cluster, jobs, def("multifactor"), aging_down), 1000);
}

// Every job submitted at once, with runtimes rounded to minutes, so that many jobs share a GPU count
// and a runtime (equal keys, and keys equal through different factors: 1 GPU for 1 min against 8 GPUs
// for 2 min under wfp).
TEST(PriorityPolicy, OrdersOfJobsSubmittedAtOnceEqualAFullSort) {
  const testing::GeneratedWorkload w("helios", 800, 1.3, 5);
  std::vector<trace::JobSpec> jobs = w.trace.jobs;
  for (auto& j : jobs) {
    j.submit = 100;
    j.duration = std::max<Seconds>(60, j.duration / 60 * 60);
  }
  for (const PriorityKeyDef& d : priority_key_defs()) EXPECT_GT(check_orders(w.cluster, jobs, d), 100) << d.name;
}

}  // namespace
}  // namespace rltune::policy
