#include <gtest/gtest.h>

#include "cluster/cluster_spec.h"
#include "cluster/cluster_state.h"
#include "core/error.h"
#include "helpers.h"
#include "trace/gpu_types.h"

namespace rltune::cluster {
namespace {

TEST(ClusterPresets, MatchTheReferenceModels) {
  struct Case {
    std::string name;
    std::size_t pools;
    int nodes, gpus;
  };
  for (const Case& c : {Case{"helios", 5, 17, 136}, Case{"philly", 2, 36, 192}, Case{"alibaba", 5, 49, 254}}) {
    const ClusterSpec spec = load_cluster(c.name);
    EXPECT_EQ(spec.pools.size(), c.pools) << c.name;
    EXPECT_EQ(spec.total_nodes(), c.nodes) << c.name;
    EXPECT_EQ(spec.total_gpus(), c.gpus) << c.name;
    // Only the published Helios environment skips backfill candidates (B11).
    EXPECT_EQ(spec.reference_backfill_skips_after_start, c.name == "helios") << c.name;
  }
}

TEST(ClusterSpec, NumbersNodesAcrossPoolsInFileOrder) {
  const ClusterSpec philly = load_cluster("philly");
  EXPECT_EQ(philly.pools[0].first_node, 0);
  EXPECT_EQ(philly.pools[1].first_node, 16);
  EXPECT_EQ(philly.pool_of(15), 0);
  EXPECT_EQ(philly.pool_of(16), 1);
  EXPECT_EQ(philly.node_name(17), "large-1");
}

std::string yaml_error(const std::string& yaml) {
  try {
    parse_cluster(yaml, "c.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ClusterYaml, BadFilesGiveErrorsNamingTheKey) {
  struct Case {
    std::string yaml;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"name: x\npools:\n  - {name: a, nodes: 2, gpus_per_node: 8, colour: red}\n", {"c.yaml:3", "pools[0].colour", "unknown key"}},
      {"name: x\npools:\n  - {name: a, gpus_per_node: 8}\n", {"pools[0].nodes", "required"}},
      {"name: x\npools:\n  - {name: a, nodes: two, gpus_per_node: 8}\n", {"pools[0].nodes", "integer"}},
      {"name: x\npools:\n  - {name: a, nodes: 0, gpus_per_node: 8}\n", {"pools[0].nodes", "between 1 and"}},
      // yaml-cpp would read 010 as 8.
      {"name: x\npools:\n  - {name: a, nodes: 010, gpus_per_node: 8}\n", {"pools[0].nodes", "'010' has a leading zero"}},
      {"name: x\npools:\n  - {name: a, nodes: 2, gpus_per_node: -08}\n", {"pools[0].gpus_per_node", "'-08' has a leading zero"}},
      {"name: x\npools:\n  - {name: a, gpu_type: V100|T4, nodes: 2, gpus_per_node: 8}\n", {"pools[0].gpu_type", "names one GPU type"}},
      {"name: x\npools:\n  - {name: a, nodes: 1e30, gpus_per_node: 8}\n", {"pools[0].nodes", "integer between 1 and", "(got 1e30)"}},
      {"name: x\npools:\n  - {name: a, nodes: 3000000000, gpus_per_node: 8}\n", {"pools[0].nodes", "between 1 and"}},
      {"name: x\npools:\n  - {name: a, nodes: 1000000, gpus_per_node: 1024}\n", {"pools[0]", "more than"}},
      {"name: x\npools: []\n", {"c.yaml:2", "pools", "non-empty"}},  // the line of the empty list, not of the file's start
      {"name: x\npools:\n  - {name: a, nodes: 1, gpus_per_node: 8}\n  - {name: a, nodes: 1, gpus_per_node: 8}\n", {"pools[1].name", "duplicate"}},
      {"name: x\npools: [ {name: a\n", {"c.yaml", "not valid YAML"}},
      {"name: x\npools:\n  - {name: a, nodes: 1, gpus_per_node: 8, accepts: {gpus: 3}}\n", {"pools[0].accepts.gpus", "unknown key"}},
      {"", {"empty"}},
      {"nodes: 3\n", {"nodes", "unknown key"}},
      // Repeated keys: yaml-cpp would keep the first silently.
      {"name: x\npools:\n  - {name: a, nodes: 1, gpus_per_node: 8}\npools:\n  - {name: b, nodes: 1, gpus_per_node: 8}\n",
       {"c.yaml:4", "pools", "appears twice"}},
      {"name: x\npools:\n  - {name: a, nodes: 1, nodes: 2, gpus_per_node: 8}\n", {"pools[0].nodes", "appears twice"}},
      {"name: x\npools:\n  - {name: a, nodes: 1, gpus_per_node: 8, accepts: {min_gpus: 4, max_gpus: 2}}\n",
       {"pools[0].accepts.min_gpus", "more than max_gpus"}},
      {"name: x\npools:\n  - {name: a, nodes: 2, gpus_per_node: 8, accepts: {min_gpus: 17}}\n",
       {"pools[0].accepts.min_gpus", "more than the pool's 16 GPUs (2 nodes x 8): the pool would accept no job"}},
      {"name: x\npools:\n  - {name: a, nodes: 1, gpus_per_node: 8, accepts: {vc: []}}\n",
       {"pools[0].accepts.vc", "empty list: leave vc out to accept every VC"}},
      // A second document would be ignored: after "---", or after "..." (a marker on its own line).
      {"---\nname: x\npools:\n  - {name: a, nodes: 1, gpus_per_node: 8}\n--- # b\nname: y\n", {":5:", "second YAML document"}},
      {"name: x\npools:\n  - {name: a, nodes: 1, gpus_per_node: 8}\n...\n\nname: y\n", {":6:", "second YAML document"}},
      {"name: x\npools:\n  - {name: \"\", nodes: 1, gpus_per_node: 8}\n", {"pools[0].name", "must not be empty"}},
      {"name: x\npools:\n  - {name: a, gpu_type: H100, nodes: 1, gpus_per_node: 8}\n  - {name: b, gpu_type: h100, nodes: 1, gpus_per_node: 8}\n",
       {"c.yaml:4", "pools[1].gpu_type", "'h100' is pool a's 'H100' in other letter case"}},
      {"name: x\npools:\n  - {name: a, gpu_type: \"\", nodes: 1, gpus_per_node: 8}\n", {"pools[0].gpu_type", "must not be empty"}},
      {"name: x\npools:\n  - {name: a, nodes: 1, gpus_per_node: 8}\nreference: {backfill_skips_after_start: maybe}\n",
       {"c.yaml:4", "reference.backfill_skips_after_start", "true or false"}},
      {"name: x\npools:\n  - {name: a, nodes: 1, gpus_per_node: 8}\nreference: {skips: true}\n", {"reference.skips", "unknown key"}},
  };
  for (const auto& c : cases) {
    const std::string message = yaml_error(c.yaml);
    for (const auto& part : c.parts) EXPECT_NE(message.find(part), std::string::npos) << message << " / " << part;
  }
  EXPECT_THROW(load_cluster("no-such-preset"), InputError);
}

// A UTF-8 BOM before a comment and a document marker is not content: the file holds one document.
TEST(ClusterSpec, ABomBeforeTheDocumentMarkerIsNoSecondDocument) {
  for (const char* head : {"# my cluster\n---\n", "\n---\n", "---\n"}) {
    const std::string yaml = std::string("\xEF\xBB\xBF") + head + "name: bom\npools:\n  - {name: a, nodes: 1, gpus_per_node: 4}\n";
    const ClusterSpec spec = parse_cluster(yaml, "c.yaml");
    EXPECT_EQ(spec.name, "bom") << head;
    EXPECT_EQ(spec.total_gpus(), 4) << head;
  }
}

TEST(ClusterSpec, EligibilityFollowsAcceptsAndGpuTypes) {
  const ClusterSpec spec = testing::cluster_from(R"(
name: mixed
pools:
  - {name: small, gpu_type: T4, nodes: 2, gpus_per_node: 2, accepts: {max_gpus: 2}}
  - {name: big, gpu_type: V100, nodes: 2, gpus_per_node: 8, accepts: {vc: [a, b], min_gpus: 2}}
)");
  struct Case {
    trace::JobSpec job;
    std::vector<PoolId> eligible;
    std::string reason_prefix;
  };
  auto typed = [](trace::JobSpec j, std::vector<std::string> types) {
    j.gpu_types = std::move(types);
    return j;
  };
  const std::vector<Case> cases = {
      {testing::job("1", 0, 10, 1), {0}, ""},
      {testing::job("2", 0, 10, 2, "a"), {0, 1}, ""},
      {testing::job("3", 0, 10, 4, "b"), {1}, ""},
      {testing::job("4", 0, 10, 4, "c"), {}, "no_eligible_pool"},
      {testing::job("5", 0, 10, 32, "a"), {}, "too_many_gpus"},
      {testing::job("6", 0, 10, 0), {}, "zero_gpus"},
      {testing::job("7", 0, -1, 1), {}, "negative_duration"},
      {typed(testing::job("8", 0, 10, 2, "a"), {"V100"}), {1}, ""},
      {typed(testing::job("9", 0, 10, 2, "a"), {"A100", "T4"}), {0}, ""},
  };
  for (const auto& c : cases) {
    std::vector<PoolId> eligible;
    const std::string reason = admission_problem(spec, c.job, eligible);
    EXPECT_EQ(eligible, c.eligible) << c.job.id;
    EXPECT_EQ(reason.substr(0, c.reason_prefix.size()), c.reason_prefix) << c.job.id << ": " << reason;
    EXPECT_EQ(reason.empty(), c.reason_prefix.empty()) << c.job.id;
  }
  // A type of the cluster's own, not in rltune's table, matches in any letter case, as the table's do.
  const ClusterSpec own = testing::cluster_from("name: own\npools:\n  - {name: a, gpu_type: H100, nodes: 1, gpus_per_node: 8}\n");
  for (const char* asked : {"H100", "h100", " h100 "}) {
    std::vector<PoolId> eligible;
    EXPECT_EQ(admission_problem(own, typed(testing::job("h", 0, 10, 2), {trace::normalize_gpu_type(asked)}), eligible), "") << asked;
    EXPECT_EQ(eligible, std::vector<PoolId>{0}) << asked;
  }
  std::vector<PoolId> none;
  EXPECT_NE(admission_problem(own, typed(testing::job("h", 0, 10, 2), {"H200"}), none), "");
}

TEST(ClusterState, TracksFreeGpusAndRefusesBadPlacements) {
  const ClusterSpec spec = load_cluster("philly");
  ClusterState state(spec);
  const PoolId pools[] = {0, 1};
  const Placement p{1, {{16, 8}, {17, 2}}};
  EXPECT_EQ(state.validate(p, 10, pools), "");
  state.allocate(p);
  EXPECT_EQ(state.free(16), 0);
  EXPECT_EQ(state.free(17), 6);
  EXPECT_EQ(state.pool_free_total(1), 150);
  EXPECT_EQ(state.free_total(), 182);
  EXPECT_EQ(state.partial_nodes(), 1);
  EXPECT_NE(state.validate(Placement{1, {{16, 1}}}, 1, pools), "");          // node 16 is full
  EXPECT_NE(state.validate(Placement{0, {{16, 1}}}, 1, pools), "");          // node 16 is not in pool 0
  EXPECT_NE(state.validate(Placement{1, {{17, 2}}}, 3, pools), "");          // wrong GPU count
  EXPECT_NE(state.validate(Placement{1, {{18, 1}, {18, 1}}}, 2, pools), ""); // same node twice
  const PoolId only_small[] = {0};
  EXPECT_NE(state.validate(Placement{1, {{18, 1}}}, 1, only_small), "");    // pool not allowed
  state.release(p);
  EXPECT_EQ(state.free_total(), 192);
  EXPECT_EQ(state.partial_nodes(), 0);
  EXPECT_THROW(state.release(p), InvariantError);  // would exceed capacity: GPUs not conserved
}

// A pool's stamp changes with every allocation and release in it and only then; a copy keeps the stamps
// of what it copied, and two states that then change differently never share a stamp (caches key on it).
TEST(ClusterState, PoolStampsChangeWithTheirPoolOnly) {
  const ClusterSpec spec = load_cluster("philly");
  ClusterState state(spec);
  const ClusterState other(spec);
  EXPECT_NE(state.pool_stamp(0), state.pool_stamp(1));
  EXPECT_NE(state.pool_stamp(1), other.pool_stamp(1));  // every state starts with stamps of its own
  const std::uint64_t pool0 = state.pool_stamp(0), pool1 = state.pool_stamp(1);
  const Placement p{1, {{16, 8}, {17, 2}}};
  state.allocate(p);
  EXPECT_EQ(state.pool_stamp(0), pool0);
  EXPECT_NE(state.pool_stamp(1), pool1);
  ClusterState copy = state;
  EXPECT_EQ(copy.pool_stamp(1), state.pool_stamp(1));
  state.release(p);
  const Placement q{1, {{18, 1}}};
  copy.allocate(q);
  EXPECT_NE(copy.pool_stamp(1), state.pool_stamp(1));
  EXPECT_NE(state.pool_stamp(1), pool1);  // released back to empty, but a stamp is never reused
  EXPECT_EQ(state.pool_stamp(0), pool0);
}

TEST(ClusterState, CpusAndMemoryGoWithGpusAndAreConserved) {
  // Pool a models CPUs and memory, pool b neither: there a job's CPUs and memory are not limits.
  const ClusterSpec spec = testing::cluster_from(R"(
pools:
  - {name: a, nodes: 2, gpus_per_node: 4, cpus_per_node: 16, memory_mib_per_node: 1000}
  - {name: b, nodes: 1, gpus_per_node: 4}
)");
  ClusterState state(spec);
  const PoolId pools[] = {0, 1};
  const Request r(3, 20, 900);  // per share of g GPUs: ceil(20 g / 3) CPUs, ceil(900 g / 3) MiB
  EXPECT_EQ(r.cpus_for(1), 7);
  EXPECT_EQ(r.cpus_for(2), 14);
  EXPECT_EQ(r.memory_for(2), 600);
  EXPECT_EQ(NodeFree({4, 16, 1000}).max_share(r), 2);  // 3 GPUs would need 20 CPUs
  EXPECT_EQ(NodeFree({4, 16, 500}).max_share(r), 1);   // 2 GPUs would need 600 MiB
  EXPECT_EQ(NodeFree({4, -1, -1}).max_share(r), 3);    // nothing but GPUs modelled
  EXPECT_EQ(fewest_nodes(spec.pools[0], r), 2);
  EXPECT_EQ(fewest_nodes(spec.pools[1], r), 1);
  EXPECT_NE(state.validate(Placement{0, {{0, 3}}}, r, pools).find("CPUs"), std::string::npos);
  EXPECT_EQ(state.validate(Placement{1, {{2, 3}}}, r, pools), "");
  const Placement p{0, {{0, 2}, {1, 1}}, r.cpus, r.memory_mib};
  EXPECT_EQ(state.validate(p, r, pools), "");
  state.allocate(p);
  EXPECT_EQ(state.node_free(0), (NodeFree{2, 2, 400}));
  EXPECT_EQ(state.node_free(1), (NodeFree{3, 9, 700}));
  EXPECT_EQ(state.node_free(2), (NodeFree{4, -1, -1}));
  // Node 0 has 2 GPUs free but only 2 CPUs: a 1-GPU job asking 3 CPUs does not fit there.
  EXPECT_NE(state.validate(Placement{0, {{0, 1}}}, Request(1, 3), pools).find("free CPUs"), std::string::npos);
  EXPECT_NE(state.validate(Placement{0, {{1, 1}}}, Request(1, 0, 701), pools).find("MiB free"), std::string::npos);
  EXPECT_EQ(state.max_share(0, Request(2, 2)), 2);
  state.release(p);
  EXPECT_EQ(state.node_free(0), (NodeFree{4, 16, 1000}));
  EXPECT_EQ(state.node_free(1), (NodeFree{4, 16, 1000}));
  // Releasing CPUs that were never taken would create CPUs: not conserved.
  state.allocate(Placement{0, {{0, 1}}, 0});
  EXPECT_THROW(state.release(Placement{0, {{0, 1}}, 5}), InvariantError);
}

TEST(ClusterSpec, JobsWhoseCpusOrMemoryNoNodeCanHoldAreRejected) {
  const ClusterSpec spec = testing::cluster_from(R"(
pools:
  - {name: a, nodes: 2, gpus_per_node: 4, cpus_per_node: 16, memory_mib_per_node: 1000}
  - {name: b, nodes: 2, gpus_per_node: 8, accepts: {vc: [free]}}
)");
  const auto with = [](trace::JobSpec j, int cpus, long long memory) {
    j.cpus = cpus;
    j.memory_mib = memory;
    return j;
  };
  std::vector<PoolId> eligible;
  // 8 GPUs and 32 CPUs: 4 GPUs and 16 CPUs on each node of pool a.
  EXPECT_EQ(admission_problem(spec, with(testing::job("1", 0, 10, 8), 32, -1), eligible), "");
  EXPECT_EQ(eligible, std::vector<PoolId>{0});
  // 8 GPUs and 40 CPUs: a node holds at most 3 GPUs (15 CPUs), 3 nodes needed, the pool has 2.
  EXPECT_EQ(admission_problem(spec, with(testing::job("2", 0, 10, 8), 40, -1), eligible).rfind("too_many_cpus", 0), 0u);
  // 1 GPU and 17 CPUs: no node holds it.
  EXPECT_EQ(admission_problem(spec, with(testing::job("3", 0, 10, 1), 17, -1), eligible).rfind("too_many_cpus", 0), 0u);
  EXPECT_EQ(admission_problem(spec, with(testing::job("4", 0, 10, 2), 1, 3000), eligible).rfind("too_much_memory", 0), 0u);
  // Pool b does not model CPUs: the same job runs there.
  EXPECT_EQ(admission_problem(spec, with(testing::job("5", 0, 10, 1, "free"), 17, -1), eligible), "");
  EXPECT_EQ(eligible, std::vector<PoolId>{1});
}

}  // namespace
}  // namespace rltune::cluster
