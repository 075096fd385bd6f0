// The workload generator and its models: determinism, offered load, GPU mix and duration quantiles on
// large samples (tolerances stated per check), pool affinity, the daily cycle, model files and fitting.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "cluster/cluster_spec.h"
#include "core/error.h"
#include "helpers.h"
#include "trace/reader.h"
#include "workload/generator.h"

namespace rltune::workload {
namespace {

double offered_load(const trace::Trace& t, const cluster::ClusterSpec& c) {
  double work = 0;
  for (const auto& j : t.jobs) work += static_cast<double>(j.duration) * j.gpus;
  return work / (static_cast<double>(t.jobs.back().submit - t.jobs.front().submit) * c.total_gpus());
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

TEST(Generator, SameSeedSameJobsOtherSeedOtherJobs) {
  const auto cluster = cluster::load_cluster("philly");
  const auto model = load_model("philly");
  const auto a = generate(model, cluster, {.jobs = 500, .load = 0.9, .seed = 7});
  const auto b = generate(model, cluster, {.jobs = 500, .load = 0.9, .seed = 7});
  const auto c = generate(model, cluster, {.jobs = 500, .load = 0.9, .seed = 8});
  std::ostringstream sa, sb, sc;
  trace::write_canonical(sa, a.jobs);
  trace::write_canonical(sb, b.jobs);
  trace::write_canonical(sc, c.jobs);
  EXPECT_EQ(sa.str(), sb.str());
  EXPECT_NE(sa.str(), sc.str());
  EXPECT_EQ(a.jobs.front().submit, 0);
  EXPECT_TRUE(std::is_sorted(a.jobs.begin(), a.jobs.end(), [](const auto& x, const auto& y) { return x.submit < y.submit; }));
}

// Offered load within 3% of the target on 200,000 jobs, for every family on its own preset.
TEST(Generator, OfferedLoadMatchesTarget) {
  for (const char* family : {"philly", "helios", "alibaba"})
    for (const double load : {0.6, 0.95}) {
      const auto cluster = cluster::load_cluster(family);
      const auto t = generate(load_model(family), cluster, {.jobs = 200'000, .load = load, .seed = 1});
      EXPECT_NEAR(offered_load(t, cluster), load, 0.03 * load) << family << " at " << load;
      std::vector<PoolId> eligible;
      for (const auto& j : t.jobs) ASSERT_EQ(cluster::admission_problem(cluster, j, eligible), "") << family << " " << j.id;
    }
}

// GPU-count shares within 0.005 (about 5 standard errors) and duration quantiles within 5% of the model
// on 200,000 jobs, on a cluster where every GPU count fits.
TEST(Generator, GpuMixAndDurationQuantilesMatchTheModel) {
  const auto cluster = testing::cluster_from("pools: [{name: big, nodes: 100, gpus_per_node: 8}]");
  const auto model = load_model("philly");
  const auto t = generate(model, cluster, {.jobs = 200'000, .load = 0.8, .seed = 2});
  std::map<int, std::size_t> count;
  std::vector<double> one_gpu;
  for (const auto& j : t.jobs) {
    ++count[j.gpus];
    if (j.gpus == 1) one_gpu.push_back(static_cast<double>(j.duration));
  }
  for (const auto& size : model.sizes)
    EXPECT_NEAR(static_cast<double>(count[size.gpus]) / 200'000.0, size.share, 0.005) << size.gpus << " GPUs";
  const SizeClass& one = model.sizes.front();
  ASSERT_EQ(one.gpus, 1);
  for (const double q : {0.25, 0.5, 0.75, 0.9})
    EXPECT_NEAR(quantile(one_gpu, q), duration_at(one, q), 0.05 * duration_at(one, q)) << "p" << q * 100;
}

TEST(Generator, PoolsToldApartByVcOrTypeGetEqualLoad) {
  for (const char* family : {"helios", "alibaba"}) {
    const auto cluster = cluster::load_cluster(family);
    const auto t = generate(load_model(family), cluster, {.jobs = 200'000, .load = 0.8, .seed = 4});
    std::vector<double> work(cluster.pools.size(), 0);
    std::vector<PoolId> eligible;
    for (const auto& j : t.jobs) {
      cluster::admission_problem(cluster, j, eligible);
      ASSERT_EQ(eligible.size(), 1u) << family << ": each job is sent to one pool";
      work[eligible.front()] += static_cast<double>(j.duration) * j.gpus;
    }
    const double span = static_cast<double>(t.jobs.back().submit);
    // Within 15%: alibaba's durations are heavy-tailed (up to months), so a 16-GPU pool's load on
    // 200,000 jobs still varies by about 10%.
    for (std::size_t p = 0; p < cluster.pools.size(); ++p)
      EXPECT_NEAR(work[p] / (span * cluster.pools[p].total_gpus()), 0.8, 0.12) << family << " pool " << cluster.pools[p].name;
  }
}

TEST(Generator, DailyCycleShapesArrivals) {
  WorkloadModel model = load_model("helios");
  for (int h = 0; h < 24; ++h) model.hourly_weights[h] = h < 12 ? 2.0 : 0.0;  // mornings only
  const auto cluster = cluster::load_cluster("helios");
  const auto t = generate(model, cluster, {.jobs = 20'000, .load = 0.8, .seed = 5});
  for (const auto& j : t.jobs) ASSERT_LT(j.submit % 86400, 43200 + 1) << j.id;
  EXPECT_NEAR(offered_load(t, cluster), 0.8, 0.05);
}

TEST(WorkloadModel, YamlRoundTripsExactly) {
  for (const auto& name : family_names()) {
    const WorkloadModel m = load_model(name);
    const WorkloadModel again = parse_model(to_yaml(m, "comment"), "again.yaml");
    EXPECT_EQ(to_yaml(again, "comment"), to_yaml(m, "comment")) << name;
    ASSERT_EQ(again.sizes.size(), m.sizes.size());
    for (std::size_t i = 0; i < m.sizes.size(); ++i) {
      EXPECT_EQ(again.sizes[i].share, m.sizes[i].share);
      EXPECT_EQ(again.sizes[i].duration_quantiles, m.sizes[i].duration_quantiles);
    }
  }
}

TEST(WorkloadModel, BadModelsNameTheKey) {
  const std::string q = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25]";
  const auto error_of = [](const std::string& yaml) {
    try {
      parse_model(yaml, "m.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error_of("name: x\nsizes:\n  - {gpus: 1, share: 0.5, duration_quantiles: " + q + "}\n").find("sum to 1"),
            std::string::npos);
  EXPECT_NE(error_of("sizes:\n  - {gpus: 1, share: 1, duration_quantiles: [3, 2]}\n").find("sizes[0].duration_quantiles"),
            std::string::npos);
  EXPECT_NE(error_of("sizes:\n  - {gpus: 1, share: 1, duration_quantiles: [2, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, "
                     "14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25]}\n")
                .find("below the previous"),
            std::string::npos);
  EXPECT_NE(error_of("colour: red\n").find("unknown key"), std::string::npos);
  EXPECT_NE(error_of("sizes:\n  - {gpus: 0, share: 1, duration_quantiles: " + q + "}\n").find("m.yaml:2"), std::string::npos);
  EXPECT_NE(error_of("hourly_weights: [1, 2]\nsizes: []\n").find("24 numbers"), std::string::npos);
  EXPECT_THROW(load_model("no-such-family"), InputError);
  EXPECT_NE(error_of("job_id,submit_time,duration,num_gpus\na,0,10,1\n").find("not a workload model (a YAML mapping); to work like a "
                                                                             "trace, fit a model to it first"),
            std::string::npos);
}

WorkloadModel with_users(const std::string& family, int templates) {
  WorkloadModel m = load_model(family);
  m.user_behaviour = {.templates = templates, .repeat = 0.8, .activity_skew = 1.0, .duration_correlation = 0.9};
  return m;
}

// Users with templates repeat themselves: most jobs have the GPU count of an earlier job of the same
// user, and a user's mean duration at that count predicts the next one far better than without.
TEST(UserBehaviour, UsersRepeatThemselvesAndTheLoadStillMatches) {
  const auto cluster = cluster::load_cluster("helios");
  const auto error_of_history = [](const trace::Trace& t) {
    std::map<std::pair<std::string, int>, std::vector<double>> history;
    std::vector<double> errors;
    std::size_t repeated = 0;
    for (const auto& j : t.jobs) {
      auto& h = history[{j.user, j.gpus}];
      repeated += !h.empty();
      if (!h.empty())
        errors.push_back(std::fabs(std::log(std::max(1.0, h.back()) / std::max<double>(1, static_cast<double>(j.duration)))));
      h.push_back(static_cast<double>(j.duration));
    }
    return std::make_pair(quantile(errors, 0.5), static_cast<double>(repeated) / static_cast<double>(t.jobs.size()));
  };
  const auto plain = generate(load_model("helios"), cluster, {.jobs = 20'000, .load = 0.9, .seed = 3});
  const auto repeating = generate(with_users("helios", 3), cluster, {.jobs = 20'000, .load = 0.9, .seed = 3});
  const auto [plain_error, plain_repeated] = error_of_history(plain);
  const auto [error, repeated] = error_of_history(repeating);
  EXPECT_GT(repeated, 0.9);
  EXPECT_LT(error, 0.8 * plain_error) << "median |ln(previous / this)|: " << error << " vs " << plain_error;
  EXPECT_NEAR(offered_load(repeating, cluster), 0.9, 0.03 * 0.9);
  // Heavy-tailed activity: the most active tenth of the users submits far more than a tenth of the jobs.
  std::map<std::string, double> jobs_of;
  for (const auto& j : repeating.jobs) ++jobs_of[j.user];
  std::vector<double> counts;
  for (const auto& [user, n] : jobs_of) counts.push_back(n);
  std::sort(counts.rbegin(), counts.rend());
  EXPECT_EQ(counts.size(), 40u);
  EXPECT_GT(std::accumulate(counts.begin(), counts.begin() + 4, 0.0), 0.3 * static_cast<double>(repeating.jobs.size()));
  std::vector<PoolId> eligible;
  for (const auto& j : repeating.jobs) ASSERT_EQ(cluster::admission_problem(cluster, j, eligible), "") << j.id;
  // Off, the generator draws exactly what it drew before the behaviour existed.
  WorkloadModel off = with_users("helios", 0);
  std::ostringstream a, b;
  trace::write_canonical(a, generate(off, cluster, {.jobs = 500, .load = 0.9, .seed = 3}).jobs);
  trace::write_canonical(b, generate(load_model("helios"), cluster, {.jobs = 500, .load = 0.9, .seed = 3}).jobs);
  EXPECT_EQ(a.str(), b.str());
}

// A template's jobs draw their durations through a Gaussian copula, so every job still follows the
// model's distribution: with many equally active users the mean and the quantiles match it, even for
// Philly's heavy tail.
TEST(UserBehaviour, DurationsStillFollowTheModel) {
  const auto cluster = testing::cluster_from("pools: [{name: big, nodes: 100, gpus_per_node: 8}]");
  WorkloadModel m = with_users("philly", 3);
  m.users = 5000;
  m.user_behaviour.activity_skew = 0;
  m.user_behaviour.repeat = 1;
  const auto t = generate(m, cluster, {.jobs = 200'000, .load = 0.8, .seed = 5});
  double expected = 0, sum = 0;
  for (const auto& size : m.sizes) expected += size.share * mean_duration(size);
  std::map<int, std::vector<double>> by_gpus;
  for (const auto& j : t.jobs) {
    sum += static_cast<double>(j.duration);
    by_gpus[j.gpus].push_back(static_cast<double>(j.duration));
  }
  EXPECT_NEAR(sum / 200'000.0, expected, 0.1 * expected);
  for (const auto& size : m.sizes) {
    const auto& d = by_gpus[size.gpus];
    if (d.size() < 20'000) continue;
    EXPECT_NEAR(quantile(d, 0.5), size.duration_quantiles[10], 0.05 * size.duration_quantiles[10]) << size.gpus << " GPUs";
  }
}

TEST(UserBehaviour, RoundTripsThroughYamlAndBadValuesNameTheKey) {
  const WorkloadModel m = with_users("philly", 4);
  const WorkloadModel again = parse_model(to_yaml(m, "c"), "again.yaml");
  EXPECT_EQ(again.user_behaviour.templates, 4);
  EXPECT_EQ(to_yaml(again, "c"), to_yaml(m, "c"));
  const std::string sizes = "sizes:\n  - {gpus: 1, share: 1, duration_quantiles: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, "
                            "13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25]}\n";
  for (const auto& [yaml, key] : std::vector<std::pair<std::string, std::string>>{
           {"user_behaviour: {templates: 2, repeat: 1.5}\n", "user_behaviour.repeat"},
           {"user_behaviour: {repeat: 0.5}\n", "user_behaviour.templates"},
           {"user_behaviour: {templates: 2, colour: red}\n", "colour"},
           {"extends: nosuch\n", "is not a workload family (alibaba"},
           {"extends: helios-users\n", "helios-users itself extends another"}}) {
    try {
      parse_model(yaml + sizes, "m.yaml");
      ADD_FAILURE() << yaml;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

TEST(WorkloadModel, FitRecoversAGeneratedWorkload) {
  const auto cluster = testing::cluster_from("pools: [{name: big, nodes: 100, gpus_per_node: 8}]");
  const auto model = load_model("philly");
  const auto t = generate(model, cluster, {.jobs = 100'000, .load = 0.8, .seed = 6});
  const WorkloadModel fitted = fit_model(t, "refit");
  for (const auto& size : model.sizes) {
    const auto it = std::find_if(fitted.sizes.begin(), fitted.sizes.end(), [&](const auto& s) { return s.gpus == size.gpus; });
    if (size.share < 0.01) continue;  // rare counts may be absent or noisy
    ASSERT_NE(it, fitted.sizes.end()) << size.gpus;
    EXPECT_NEAR(it->share, size.share, 0.01);
    EXPECT_NEAR(it->duration_quantiles[10], size.duration_quantiles[10], 0.1 * size.duration_quantiles[10]);
  }
}

// Short traces too: the arrival span is set exactly, so the load is the target up to rounding to seconds.
TEST(Generator, OfferedLoadIsExactForShortTraces) {
  for (const char* family : {"philly", "helios", "alibaba"})
    for (const std::uint64_t seed : {1, 2, 3, 4, 5}) {
      const auto cluster = cluster::load_cluster(family);
      const auto t = generate(load_model(family), cluster, {.jobs = 100, .load = 0.9, .seed = seed});
      EXPECT_NEAR(offered_load(t, cluster), 0.9, 0.01) << family << " seed " << seed;
    }
}

TEST(Generator, MeanDurationFollowsTheModel) {
  // The generated mean must match the model's own mean (the tail quantiles keep outliers in check).
  const auto cluster = testing::cluster_from("pools: [{name: big, nodes: 100, gpus_per_node: 8}]");
  for (const auto& family : family_names()) {
    const auto model = load_model(family);
    // With user behaviour, one trace's mean hangs on a few heavy users' templates (UserBehaviour tests
    // the distribution itself).
    if (model.user_behaviour.on()) continue;
    double expected = 0;
    for (const auto& size : model.sizes) expected += size.share * mean_duration(size);
    const auto t = generate(model, cluster, {.jobs = 200'000, .load = 0.8, .seed = 3});
    double sum = 0;
    for (const auto& j : t.jobs) sum += static_cast<double>(j.duration);
    EXPECT_NEAR(sum / 200'000.0, expected, 0.1 * expected) << family;
  }
}

TEST(Generator, JobsAreEligibleOnClustersWithVcPools) {
  const auto one = testing::cluster_from("pools: [{name: a, gpu_type: V100, nodes: 4, gpus_per_node: 8, accepts: {vc: [x]}}]");
  const auto mixed = testing::cluster_from(
      "pools:\n  - {name: a, gpu_type: V100, nodes: 4, gpus_per_node: 8, accepts: {vc: [x]}}\n"
      "  - {name: b, gpu_type: P100, nodes: 4, gpus_per_node: 8}\n");
  for (const auto* cluster : {&one, &mixed}) {
    const auto t = generate(load_model("helios"), *cluster, {.jobs = 2000, .load = 0.8, .seed = 1});
    std::vector<PoolId> eligible;
    for (const auto& j : t.jobs) ASSERT_EQ(cluster::admission_problem(*cluster, j, eligible), "") << j.id;
  }
}

TEST(Generator, RejectsClustersNoSizeFits) {
  WorkloadModel model = load_model("philly");
  model.sizes = {model.sizes.back()};  // 64 GPUs only
  model.sizes.front().share = 1;
  const auto tiny = testing::cluster_from("pools: [{name: a, nodes: 1, gpus_per_node: 8}]");
  EXPECT_THROW(generate(model, tiny, {.jobs = 10, .load = 0.5, .seed = 1}), InputError);
}

// A daily cycle with hours without arrivals: the span starts at the first hour with arrivals (it used to
// start at midnight, and the empty hours before were cut, so the load came out higher than asked).
TEST(Generator, EmptyHoursBeforeTheFirstArrivalDoNotRaiseTheLoad) {
  WorkloadModel model = load_model("helios");
  for (std::size_t h = 0; h < 24; ++h) model.hourly_weights[h] = h < 6 ? 0 : 24.0 / 18;
  const auto cluster = cluster::load_cluster("helios");
  // Loads whose span ends in an hour with arrivals (one ending in the empty hours cannot be met: the
  // generator warns, with the load it gives).
  for (const double load : {0.3, 0.5}) {
    const trace::Trace t = generate(model, cluster, {.jobs = 2000, .load = load, .seed = 3});
    EXPECT_NEAR(offered_load(t, cluster), load, 0.01 * load) << load;
  }
}

// A span that ends in hours without arrivals: the last job stays at the end of the last hour with
// arrivals (rounding put it a day later, and the load came out lower than asked, without a warning).
TEST(Generator, EmptyHoursAtTheEndNeverLowerTheLoad) {
  WorkloadModel model = load_model("helios");
  for (std::size_t h = 0; h < 24; ++h) model.hourly_weights[h] = h < 6 || h >= 20 ? 0 : 24.0 / 14;
  const auto cluster = cluster::load_cluster("helios");
  for (const int jobs : {300, 1000, 3000})
    for (const double load : {0.3, 0.5, 0.7}) {
      const trace::Trace t = generate(model, cluster, {.jobs = jobs, .load = load, .seed = 2});
      EXPECT_GE(offered_load(t, cluster), 0.99 * load) << jobs << " jobs at " << load;
      const Seconds last = t.jobs.back().submit + 6 * 3600;  // clock time: the trace starts at 06:00
      EXPECT_TRUE(last % 86400 >= 6 * 3600 && last % 86400 <= 20 * 3600) << jobs << " jobs at " << load << ": " << last % 86400;
    }
}

// What no trace may hold (past 1e12 s, as every reader refuses) is an error, not a trace that cannot be
// read back, nor an hour-by-hour walk over 1e16 s.
TEST(Generator, RefusesTimesPastWhatATraceMayHold) {
  WorkloadModel model = load_model("helios");
  for (auto& size : model.sizes)
    for (auto& q : size.duration_quantiles) q = 1e10;
  const auto one_gpu = testing::cluster_from("pools: [{name: a, nodes: 1, gpus_per_node: 1}]");
  try {
    generate(model, one_gpu, {.jobs = 1000, .load = 0.001, .seed = 1});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("past the 1000000000000 s a trace may span"), std::string::npos) << e.what();
  }
  model.max_overestimate = 1000;
  try {
    generate(model, cluster::load_cluster("helios"), {.jobs = 20, .load = 100, .seed = 1});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("time limit"), std::string::npos) << e.what();
  }
}

TEST(WorkloadModel, FitRefusesWhatAModelCannotHold) {
  trace::Trace t;
  t.source = "long.csv";
  t.jobs.resize(2);
  t.jobs[0].id = "a", t.jobs[0].gpus = 1, t.jobs[0].duration = 100;
  t.jobs[1].id = "b", t.jobs[1].gpus = 1, t.jobs[1].duration = 200'000'000'000, t.jobs[1].submit = 60;
  try {
    fit_model(t, "long");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("long.csv: job b lasts 200000000000 s"), std::string::npos) << e.what();
  }
}

TEST(WorkloadModel, NamesWeightsAndProvenanceAreChecked) {
  const std::string sizes = "sizes:\n  - {gpus: 1, share: 1, duration_quantiles: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, "
                            "14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25]}\n";
  EXPECT_THROW(parse_model("name: ''\n" + sizes, "m.yaml"), InputError);
  EXPECT_THROW(parse_model("name: \"a\\nb\"\n" + sizes, "m.yaml"), InputError);
  EXPECT_THROW(parse_model("hourly_weights: [5e-324, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]\n" + sizes,
                           "m.yaml"),
               InputError);
  // A family changed by a file says so, not only where the family came from.
  const WorkloadModel changed = parse_model("extends: philly\n" + sizes, "mine.yaml");
  EXPECT_NE(changed.source.find("as changed by mine.yaml"), std::string::npos) << changed.source;
}

}  // namespace
}  // namespace rltune::workload
