#include <gtest/gtest.h>

#include <sstream>

#include "core/error.h"
#include "helpers.h"
#include "report/outputs.h"

namespace rltune::metrics {
namespace {

using testing::job;

TEST(Metrics, OneTableNamesEverySummaryKeyInOrder) {
  Summary s;
  s.jobs_total = 3;
  s.avg_bsld = 1.5;
  s.milp_us_p99 = 7;
  std::vector<std::string> all, without_milp;
  for (const MetricDef& m : summary_metrics()) {
    EXPECT_EQ(&summary_metric(m.name), &m);  // names are unique
    EXPECT_NE(m.count == nullptr, m.real == nullptr) << m.name;
    all.push_back(m.name);
    if (!m.milp_only) without_milp.push_back(m.name);
  }
  const auto keys = [](const report::Json& j) {
    std::vector<std::string> k;
    for (auto it = j.begin(); it != j.end(); ++it) k.push_back(it.key());
    return k;
  };
  EXPECT_EQ(keys(report::to_json(s)), without_milp);
  s.has_milp = true;
  const report::Json j = report::to_json(s);
  EXPECT_EQ(keys(j), all);
  EXPECT_TRUE(j["jobs_total"].is_number_integer());
  EXPECT_EQ(j["avg_bsld"].get<double>(), 1.5);
  EXPECT_EQ(summary_metric("milp_us_p99").of(s), 7);
  EXPECT_THROW(summary_metric("avg_nothing"), InvariantError);
  // Wall-clock measurements are marked: they are the only values that differ between identical runs.
  for (const char* name : {"sim_wall_s", "decision_us_p50", "decision_us_p99", "milp_us_p50", "milp_us_p99"})
    EXPECT_TRUE(summary_metric(name).wall_clock) << name;
  EXPECT_FALSE(summary_metric("avg_wait_s").wall_clock);
}

TEST(Metrics, ImprovementIsPositiveWhenBetterInTheMetricsDirection) {
  EXPECT_DOUBLE_EQ(improvement_pct(summary_metric("avg_bsld"), 10, 8).value(), 20);
  EXPECT_DOUBLE_EQ(improvement_pct(summary_metric("avg_wait_s"), 10, 12).value(), -20);
  EXPECT_DOUBLE_EQ(improvement_pct(summary_metric("gpu_utilization"), 0.5, 0.6).value(), 20);
  // No baseline to compare with: undefined, not "no change" (a p95 wait of 0 against 3,852 s was +0%).
  EXPECT_FALSE(improvement_pct(summary_metric("p95_wait_s"), 0, 3852.7).has_value());
  EXPECT_FALSE(improvement_pct(summary_metric("avg_bsld"), 0, 0).has_value());
  EXPECT_THROW(improvement_pct(summary_metric("jobs_total"), 1, 2), InvariantError);
}

TEST(Metrics, QuantilesInterpolateLikeNumpy) {
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
  EXPECT_DOUBLE_EQ(quantile({5}, 0.99), 5);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 1.0), 4);
  EXPECT_DOUBLE_EQ(quantile({0, 10}, 0.95), 9.5);
}

TEST(Metrics, SummaryFollowsTheContractDefinitions) {
  // 1 node x 4 GPUs. a: 0-100 (4 GPUs). b: submit 0, waits 100, runs 5 s (bsld uses max(5,10)=10).
  // c: rejected (8 GPUs).
  const auto cluster = testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 1, gpus_per_node: 4}\n");
  const auto out = testing::simulate(cluster, {job("a", 0, 100, 4), job("b", 0, 5, 2), job("c", 1, 5, 8)}, testing::profile("fcfs"));
  const Summary s = summarize(out.run);
  EXPECT_EQ(s.jobs_total, 3u);
  EXPECT_EQ(s.jobs_completed, 2u);
  EXPECT_EQ(s.jobs_rejected, 1u);
  EXPECT_DOUBLE_EQ(s.avg_wait_s, 50);
  EXPECT_DOUBLE_EQ(s.avg_jct_s, (100 + 105) / 2.0);
  EXPECT_DOUBLE_EQ(s.avg_bsld, (1 + 105 / 10.0) / 2);
  EXPECT_DOUBLE_EQ(s.makespan_s, 105);
  EXPECT_DOUBLE_EQ(s.gpu_utilization, (100.0 * 4 + 5.0 * 2) / (4 * 105));
  // The node is partly used (2 of 4 GPUs) during b's 5 s out of 105 s.
  EXPECT_DOUBLE_EQ(s.avg_fragmentation, 5.0 / 105);
  EXPECT_GE(s.decisions, 2u);
}

// Fragmentation is over the span utilisation is over, first measured submit to last measured end: a
// rejected arrival after the last end, or a warm-up job that runs on after the window, does not dilute it.
TEST(Metrics, FragmentationIsOverTheSpanOfTheMeasuredJobs) {
  const auto cluster = testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 1, gpus_per_node: 4}\n");
  const Summary alone = summarize(testing::simulate(cluster, {job("a", 0, 100, 2)}, testing::profile("fcfs")).run);
  const Summary late = summarize(testing::simulate(cluster, {job("a", 0, 100, 2), job("b", 1000, 10, 8)}, testing::profile("fcfs")).run);
  EXPECT_DOUBLE_EQ(alone.avg_fragmentation, 1.0);
  EXPECT_DOUBLE_EQ(late.avg_fragmentation, 1.0);  // was 0.1: the rejected arrival at 1000 extended the span
  EXPECT_DOUBLE_EQ(late.gpu_utilization, alone.gpu_utilization);
  // A warm window of one job (b, 10-60 on 2 GPUs of one node) after a warm-up job w that holds the other
  // node whole until 1000: one node of two is partly used over b's whole span (0.5), not over 50 s of 990.
  const auto two = testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 2, gpus_per_node: 4}\n");
  const std::vector<trace::JobSpec> jobs = {job("w", 0, 1000, 4), job("b", 10, 50, 2)};
  auto scheduler = policy::make_profile(testing::profile("fcfs"));
  sim::Engine engine(two, jobs);
  const RunMetrics warm = run_and_measure(engine, *scheduler, "1:1", 1);
  const Summary s = summarize(warm);
  EXPECT_EQ(s.jobs_total, 1u);
  EXPECT_DOUBLE_EQ(s.makespan_s, 50);
  EXPECT_DOUBLE_EQ(s.avg_fragmentation, 0.5);
  // A window whose one job ends where it was submitted, before time moved on, has an empty span: it
  // does not weigh in the aggregate.
  const std::vector<trace::JobSpec> zero_jobs = {job("w", 0, 1000, 4), job("z", 1000, 0, 2)};
  sim::Engine zero_engine(two, zero_jobs);
  auto zero_scheduler = policy::make_profile(testing::profile("fcfs"));
  const RunMetrics zero = run_and_measure(zero_engine, *zero_scheduler, "1:1", 1);
  EXPECT_EQ(zero.observed_to - zero.observed_from, 0);
  EXPECT_DOUBLE_EQ(summarize(std::vector<const RunMetrics*>{&zero, &warm}).avg_fragmentation, 0.5);
  // No measured job ran: no span, no fragmentation.
  EXPECT_DOUBLE_EQ(summarize(testing::simulate(cluster, {job("c", 0, 5, 8)}, testing::profile("fcfs")).run).avg_fragmentation, 0);
}

TEST(Metrics, AggregateWeightsWindowsBySpan) {
  const auto cluster = testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 1, gpus_per_node: 2}\n");
  const auto w1 = testing::simulate(cluster, {job("a", 0, 10, 2)}, testing::profile("fcfs"));  // util 1 over 10 s
  const auto w2 = testing::simulate(cluster, {job("b", 0, 30, 1)}, testing::profile("fcfs"));  // util 0.5 over 30 s
  const Summary s = summarize(std::vector<const RunMetrics*>{&w1.run, &w2.run});
  EXPECT_DOUBLE_EQ(s.gpu_utilization, (20.0 + 30.0) / (2 * 10 + 2 * 30));
  EXPECT_DOUBLE_EQ(s.makespan_s, 20);
  EXPECT_DOUBLE_EQ(s.avg_jct_s, 20);
  // A window where every job was rejected has no makespan: it is not averaged in as 0.
  const auto rejected = testing::simulate(cluster, {job("c", 0, 5, 8)}, testing::profile("fcfs"));
  const Summary with = summarize(std::vector<const RunMetrics*>{&w1.run, &w2.run, &rejected.run});
  EXPECT_DOUBLE_EQ(with.makespan_s, 20);
  EXPECT_DOUBLE_EQ(with.gpu_utilization, s.gpu_utilization);
  EXPECT_DOUBLE_EQ(summarize(rejected.run).makespan_s, 0);
}

TEST(Outputs, JobsCsvAndSummaryJsonFollowTheContract) {
  const auto cluster = testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 1, gpus_per_node: 4}\n");
  const auto out = testing::simulate(cluster, {job("a", 0, 100, 4), job("b,2", 0, 5, 2), job("c", 1, 5, 8)}, testing::profile("fcfs"));
  std::ostringstream csv;
  report::write_jobs_csv(csv, {&out.run});
  std::istringstream lines(csv.str());
  std::string header, a, b, c;
  std::getline(lines, header);
  std::getline(lines, a);
  std::getline(lines, b);
  std::getline(lines, c);
  EXPECT_EQ(header, "window,job_id,pool,num_gpus,submit_time,start_time,end_time,wait_s,jct_s,bsld,placement,status,reason");
  EXPECT_EQ(a, "all,a,p,4,0,0,100,0,100,1,p-0:4,completed,");
  EXPECT_EQ(b, "all,\"b,2\",p,2,0,100,105,100,105,10.5,p-0:2,completed,");
  EXPECT_EQ(c.rfind("all,c,,8,1,,,,,,,rejected,too_many_gpus", 0), 0u) << c;

  const auto json = report::summary_json({&out.run}, false);
  ASSERT_EQ(json["windows"].size(), 1u);
  EXPECT_EQ(json["windows"][0]["window"], "all");
  const std::vector<std::string> keys = {"jobs_total", "jobs_completed", "jobs_rejected", "avg_wait_s", "p50_wait_s",
                                         "p95_wait_s", "p99_wait_s", "avg_jct_s", "p95_jct_s", "avg_bsld", "p95_bsld",
                                         "gpu_utilization", "makespan_s", "avg_fragmentation", "decisions",
                                         "sim_wall_s", "decision_us_p50", "decision_us_p99"};
  std::vector<std::string> got;
  for (auto it = json["aggregate"].begin(); it != json["aggregate"].end(); ++it) got.push_back(it.key());
  EXPECT_EQ(got, keys);
  EXPECT_EQ(json["aggregate"]["jobs_rejected"], 1);
}

}  // namespace
}  // namespace rltune::metrics
