// --semantics helios: HeliosArtifact's consolidate placement, ties by arrival, per-VC independence.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/csv.h"
#include "core/error.h"
#include "experiment/config.h"
#include "helpers.h"
#include "trace/reader.h"

namespace rltune {
namespace {

using testing::job;

policy::ProfileOptions helios(const std::string& priority) {
  policy::ProfileOptions p;
  p.priority = priority;
  p.semantics = "helios";
  policy::apply_semantics(p);
  return p;
}

std::map<std::string, std::string> placements(const testing::Outcome& out) {
  std::map<std::string, std::string> m;
  for (const auto& r : out.run.jobs) m[r.job_id] = r.placement;
  return m;
}

const char* kThreeNodes = "name: c\npools:\n  - {name: p, nodes: 3, gpus_per_node: 8}\n";

TEST(Consolidate, SmallJobsGoToTheFullestNodeThatFits) {
  // a: empty nodes, lowest id -> p-0 (2 left). b: p-0 cannot take 4; p-1 and p-2 tie at 8 -> p-1 (4 left).
  // c: 2 GPUs -> p-0 (2 free, the fewest that fit). d: 3 -> p-1 (4 free). e: 8 -> p-2.
  const auto out = testing::simulate(testing::cluster_from(kThreeNodes),
                                     {job("a", 0, 100, 6), job("b", 1, 100, 4), job("c", 2, 100, 2), job("d", 3, 100, 3), job("e", 4, 100, 8)},
                                     helios("fcfs"));
  EXPECT_EQ(placements(out), (std::map<std::string, std::string>{
                                 {"a", "p-0:6"}, {"b", "p-1:4"}, {"c", "p-0:2"}, {"d", "p-1:3"}, {"e", "p-2:8"}}));
}

TEST(Consolidate, LargeJobsTakeWholeNodesAndTheRoomiestNodeForTheRest) {
  // a takes 2 of p-0. j (10 GPUs) takes the whole free p-1 and its 2 other GPUs on the roomiest node
  // left, p-2 (8 free) rather than p-0 (6 free); greedy takes the lexicographically smallest list.
  const auto cluster = testing::cluster_from(kThreeNodes);
  const std::vector<trace::JobSpec> jobs = {job("a", 0, 100, 2), job("j", 1, 100, 10)};
  EXPECT_EQ(testing::simulate(cluster, jobs, helios("fcfs"))["j"].placement, "p-1:8+p-2:2");
  EXPECT_EQ(testing::simulate(cluster, jobs, testing::profile("fcfs"))["j"].placement, "p-0:2+p-1:8");
  // 16 GPUs with one node partly used: the two whole free nodes.
  EXPECT_EQ(testing::simulate(cluster, {job("a", 0, 100, 2), job("k", 1, 100, 16)}, helios("fcfs"))["k"].placement, "p-1:8+p-2:8");
}

TEST(Consolidate, WaitsRatherThanSplitDifferently) {
  // a and b leave 3 GPUs on p-0 and p-1 and p-2 whole: 14 free. j (12 = 8 + 4) needs a node with 4
  // for its remainder: none until a ends at 100; then the whole p-0 (lowest id) and 4 on the roomiest
  // other node, p-2. With two nodes, c (4 GPUs) fits neither node's 3 and is never split.
  const auto out = testing::simulate(testing::cluster_from(kThreeNodes),
                                     {job("a", 0, 100, 5), job("b", 0, 200, 5), job("j", 1, 50, 12)}, helios("fcfs"));
  EXPECT_EQ(out["b"].placement, "p-1:5");
  EXPECT_EQ(out["j"].start, 100);
  EXPECT_EQ(out["j"].placement, "p-0:8+p-2:4");
  const auto small = testing::simulate(testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 2, gpus_per_node: 8}\n"),
                                       {job("a", 0, 100, 5), job("b", 0, 200, 5), job("c", 1, 10, 4)}, helios("fcfs"));
  EXPECT_EQ(small["c"].start, 100);
  EXPECT_EQ(small["c"].placement, "p-0:4");
}

TEST(Consolidate, TriesPoolsInOrderAndReportsJobsNoPoolHolds) {
  const auto cluster = testing::cluster_from(
      "name: c\npools:\n  - {name: s, nodes: 1, gpus_per_node: 4}\n  - {name: l, nodes: 2, gpus_per_node: 8}\n");
  const auto out = testing::simulate(cluster, {job("a", 0, 10, 2), job("b", 0, 10, 4), job("c", 0, 10, 12)}, helios("fcfs"));
  EXPECT_EQ(out["a"].placement, "s-0:2");
  EXPECT_EQ(out["b"].placement, "l-0:4");  // s has 2 left
  EXPECT_EQ(out["c"].placement, "l-0:4+l-1:8");  // the whole free l-1, and the 4 left on l-0
  policy::register_builtins();
  const auto consolidate = policy::make_consolidate_placement();
  cluster::ClusterState state(cluster);
  const PoolId both[] = {0, 1};
  EXPECT_EQ(consolidate->place(state, {17, 0, 0}, both).status, policy::PlaceStatus::never_fits);
  EXPECT_EQ(consolidate->place(state, {16, 0, 0}, both).status, policy::PlaceStatus::placed);
}

TEST(HeliosSemantics, SjfBreaksTiesByArrivalNotBySize) {
  // One node of 4 GPUs, busy until 100. y (3 GPUs) and z (2 GPUs) have the same runtime and cannot run
  // together: rltune's sjf serves the smaller z first, HeliosArtifact's stable sort the earlier y.
  const auto cluster = testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 1, gpus_per_node: 4}\n");
  const std::vector<trace::JobSpec> jobs = {job("x", 0, 100, 4), job("y", 1, 50, 3), job("z", 2, 50, 2)};
  const auto ours = testing::simulate(cluster, jobs, testing::profile("sjf", policy::Blocking::pool));
  EXPECT_EQ(ours["z"].start, 100);
  EXPECT_EQ(ours["y"].start, 150);
  const auto theirs = testing::simulate(cluster, jobs, helios("sjf"));
  EXPECT_EQ(theirs["y"].start, 100);
  EXPECT_EQ(theirs["z"].start, 150);
}

TEST(HeliosSemantics, FixesItsSettingsAndRejectsContradictions) {
  const policy::ProfileOptions p = helios("sjf");
  EXPECT_EQ(p.placement, "consolidate");
  EXPECT_EQ(p.blocking, policy::Blocking::pool);
  EXPECT_FALSE(p.backfill);
  EXPECT_TRUE(p.priority_options.ties_by_arrival);
  EXPECT_THROW(policy::find_semantics("slurm"), InputError);

  policy::register_builtins();
  const std::string head = "workloads:\n  - {cluster: helios, trace: {generate: {jobs: 50}}}\n";
  const auto c = experiment::parse_config(head + "defaults: {semantics: helios}\npolicies: [fcfs, {priority: sjf, blocking: pool}]\n",
                                          "/tmp/x.yaml");
  for (const auto& s : c.workloads.at(0).policies) {
    EXPECT_EQ(s.profile.placement, "consolidate") << s.label;
    EXPECT_TRUE(s.profile.priority_options.ties_by_arrival) << s.label;
  }
  const auto error = [&](const std::string& yaml) {
    try {
      experiment::parse_config(head + yaml, "/tmp/x.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error("defaults: {semantics: helios, placement: greedy}\npolicies: [fcfs]\n").find("defaults.placement"), std::string::npos);
  EXPECT_NE(error("policies: [{priority: fcfs, semantics: helios, backfill: true}]\n").find("policies[0].backfill"), std::string::npos);
  EXPECT_NE(error("defaults: {semantics: helios}\npolicies: [fcfs@greedy]\n").find("contradicts semantics helios"), std::string::npos);
  EXPECT_NE(error("defaults: {semantics: slurm}\npolicies: [fcfs]\n").find("unknown semantics 'slurm'"), std::string::npos);
}

// Schedules recorded by running HeliosArtifact @ bdaae10 (framework/QSSF Service, FIFO and SJF with the
// consolidate placer, each VC on its own) on fixtures/helios-peer/trace.csv; see the README there.
struct PeerJob {
  Seconds start;
  std::string placement;  // as rltune writes it: POOL-NODE:GPUS+..., by node
};

std::map<std::string, PeerJob> peer_schedule(const std::string& file) {
  std::ifstream in(file);
  EXPECT_TRUE(in) << file;
  std::map<std::string, PeerJob> out;
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "job_id,vc,submit_time,duration,num_gpus,start_time,nodes");
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    EXPECT_TRUE(csv::split(line, ',', f)) << line;
    std::map<int, int> shares;  // node -> GPUs
    std::stringstream nodes(f.at(6));
    for (std::string item; std::getline(nodes, item, '|');) shares[std::stoi(item.substr(0, item.find(':')))] += std::stoi(item.substr(item.find(':') + 1));
    std::string placement;
    for (const auto& [node, gpus] : shares) {
      if (!placement.empty()) placement += '+';
      placement += fmt::format("vc{}-{}:{}", f.at(1), node, gpus);
    }
    out[f.at(0)] = {std::stoll(f.at(5)), placement};
  }
  return out;
}

class HeliosPeer : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(HeliosPeer, EqualsTheRecordedScheduleJobForJob) {
  const std::string dir = std::string(RLTUNE_FIXTURES) + "/helios-peer/";
  const auto [priority, recorded] = GetParam();
  const auto cluster = cluster::load_cluster(dir + "cluster.yaml");
  const auto trace = trace::read_trace(dir + "trace.csv", {});
  const auto out = testing::simulate(cluster, trace.jobs, helios(priority));
  const auto peer = peer_schedule(dir + recorded);
  ASSERT_EQ(peer.size(), out.run.jobs.size());
  std::size_t same = 0;
  for (const auto& r : out.run.jobs) {
    const PeerJob& p = peer.at(r.job_id);
    EXPECT_EQ(r.start, p.start) << r.job_id;
    EXPECT_EQ(r.placement, p.placement) << r.job_id;
    same += r.start == p.start && r.placement == p.placement;
  }
  EXPECT_EQ(same, peer.size());
}

INSTANTIATE_TEST_SUITE_P(FifoAndSjf, HeliosPeer,
                         ::testing::Values(std::pair{"fcfs", "fifo.csv"}, std::pair{"sjf", "sjf.csv"}),
                         [](const auto& info) { return std::string(info.param.first); });

}  // namespace
}  // namespace rltune
