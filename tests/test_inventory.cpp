// Node inventories -> cluster pools (`rltune cluster-from`): hand-written fixtures of each format with
// exact expected pools, YAML round trips, --sample capping, bad input, and the real inventories in
// ../shared/traces (skipped when that folder is absent).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "cluster/cluster_spec.h"
#include "cluster/inventory.h"
#include "core/error.h"

namespace rltune::cluster {
namespace {

Inventory read(const std::string& text, const std::string& format) {
  std::istringstream in(text);
  return read_inventory(in, "inv.csv", format);
}

InventoryCluster pools_of(const std::string& text, const std::string& format, int max_nodes_per_pool = 0) {
  return pools_from_inventory(read(text, format), {"test", max_nodes_per_pool});
}

// The fields a pool gets from an inventory, comparable in one EXPECT.
struct Pool {
  std::string name, gpu_type;
  int nodes, gpus_per_node, cpus_per_node;
  long long memory_mib_per_node;
  bool operator==(const Pool&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Pool& p) {
  return out << "{" << p.name << ", " << p.gpu_type << ", " << p.nodes << " x " << p.gpus_per_node << " GPUs, "
             << p.cpus_per_node << " CPUs, " << p.memory_mib_per_node << " MiB}";
}

std::vector<Pool> pools(const ClusterSpec& spec) {
  std::vector<Pool> out;
  for (const auto& p : spec.pools)
    out.push_back({p.name, p.gpu_type, p.nodes, p.gpus_per_node, p.cpus_per_node, p.memory_mib_per_node});
  return out;
}

// Everything parse_cluster reads back, including accepts and node numbering.
void expect_round_trip(const ClusterSpec& spec) {
  const std::string yaml = to_yaml(spec, {"a comment", "", "two\nlines"});
  const ClusterSpec back = parse_cluster(yaml, "round-trip.yaml");
  EXPECT_EQ(back.name, spec.name) << yaml;
  ASSERT_EQ(back.pools.size(), spec.pools.size()) << yaml;
  for (std::size_t i = 0; i < spec.pools.size(); ++i) {
    const PoolSpec &a = spec.pools[i], &b = back.pools[i];
    EXPECT_EQ(pools(back)[i], pools(spec)[i]) << yaml;
    EXPECT_EQ(b.first_node, a.first_node) << yaml;
    EXPECT_EQ(b.accepts.vc, a.accepts.vc) << yaml;
    EXPECT_EQ(b.accepts.min_gpus, a.accepts.min_gpus) << yaml;
    EXPECT_EQ(b.accepts.max_gpus, a.accepts.max_gpus) << yaml;
  }
}

const std::string kPhilly =
    "machineId, number of GPUs, single GPU mem\n"
    "m0,2, 12GB\n"
    "m1,8, 24GB\n"
    "m2,2, 12GB\n"
    "m3,0,\n"
    "m4,2, 12GB\n";

// No header row; cap_mem in GB.
const std::string kPai =
    "t1,T4,96,512,2\n"
    "c1,CPU,96,512,0\n"
    "v1,V100,96,384,8\n"
    "v2,V100,96,512,8\n"
    "v3,V100,96,512,8\n"
    "t2,T4,96,512,2\n"
    "m1,MISC,96,512,8\n"
    "w1,V100M32,96,384,8\n";

// n4 has no GPU, n7 no model: both left out. V100M16 is an alias of V100; 82.5 cores round down.
const std::string kOpenb =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "n0,64000,262144,2,P100\n"
    "n1,16000,122880,2,P100\n"
    "n2,96000,393216,8,G2\n"
    "n3,32000,131072,4,V100M16\n"
    "n4,96000,786432,0,\n"
    "n5,82500,344064,8,V100M32\n"
    "n6,16000,122880,2,P100\n"
    "n7,8000,61440,2,\n";

TEST(Inventory, EachFormatGivesOnePoolPerNodeShape) {
  struct Case {
    std::string format, text;
    std::size_t left_out;
    std::vector<Pool> expected;
  };
  const std::vector<Case> cases = {
      {"philly-machines", kPhilly, 1,
       {{"gpu-12gb-2g", "GPU-12GB", 3, 2, -1, -1}, {"gpu-24gb-8g", "GPU-24GB", 1, 8, -1, -1}}},
      {"pai-machines", kPai, 1,
       {{"misc-8g", "MISC", 1, 8, 96, 524288},
        {"t4-2g", "T4", 2, 2, 96, 524288},
        {"v100-8g-384gib", "V100", 1, 8, 96, 393216},
        {"v100-8g-512gib", "V100", 2, 8, 96, 524288},
        {"v100m32-8g", "V100M32", 1, 8, 96, 393216}}},
      {"openb-nodes", kOpenb, 2,
       {{"g2-8g", "G2", 1, 8, 96, 393216},
        {"p100-2g-16cpu-120gib", "P100", 2, 2, 16, 122880},
        {"p100-2g-64cpu-256gib", "P100", 1, 2, 64, 262144},
        {"v100-4g", "V100", 1, 4, 32, 131072},
        {"v100m32-8g", "V100M32", 1, 8, 82, 344064}}},
  };
  for (const auto& c : cases) {
    const Inventory inventory = read(c.text, c.format);
    EXPECT_EQ(inventory.left_out, c.left_out) << c.format;
    const InventoryCluster built = pools_from_inventory(inventory, {"test", 0});
    EXPECT_EQ(pools(built.cluster), c.expected) << c.format;
    std::vector<int> counts;
    for (const auto& p : c.expected) counts.push_back(p.nodes);
    EXPECT_EQ(built.inventory_nodes, counts) << c.format;
    EXPECT_EQ(built.cluster.name, "test");
    expect_round_trip(built.cluster);
  }
}

TEST(Inventory, NodesKeepTheirIdsAndLines) {
  const Inventory inventory = read(kPhilly, "philly-machines");
  ASSERT_EQ(inventory.nodes.size(), 4u);
  EXPECT_EQ(inventory.nodes[1].id, "m1");
  EXPECT_EQ(inventory.nodes[1].line, 3);
  EXPECT_EQ(inventory.nodes[3].id, "m4");
  EXPECT_EQ(inventory.format, "philly-machines");
}

TEST(Inventory, PaiAcceptsTheHeaderRowOfItsHeaderFile) {
  const Inventory inventory = read("machine,gpu_type,cap_cpu,cap_mem,cap_gpu\n" + kPai, "pai-machines");
  EXPECT_EQ(inventory.nodes.size(), 7u);
  EXPECT_EQ(inventory.nodes.front().line, 2);
}

TEST(Inventory, SampleCapsEveryPoolAndKeepsTheMix) {
  const InventoryCluster built = pools_of(kPai, "pai-machines", 1);
  ASSERT_EQ(built.cluster.pools.size(), 5u);
  for (std::size_t p = 0; p < built.cluster.pools.size(); ++p) {
    EXPECT_EQ(built.cluster.pools[p].nodes, 1);
    EXPECT_EQ(built.cluster.pools[p].first_node, static_cast<NodeId>(p));  // numbering follows the capped sizes
  }
  EXPECT_EQ(built.inventory_nodes, (std::vector<int>{1, 2, 1, 2, 1}));
  const auto lines = describe(read(kPai, "pai-machines"), built);
  const auto has = [&](const std::string& text) { return std::find(lines.begin(), lines.end(), text) != lines.end(); };
  EXPECT_TRUE(has("Sampled: pool t4-2g keeps 1 of its 2 nodes."));
  EXPECT_TRUE(has("7 GPU nodes read in 5 pools; 1 machines without GPUs left out."));
  EXPECT_FALSE(has("Sampled: pool misc-8g keeps 1 of its 1 nodes."));  // not capped

  EXPECT_EQ(pools(pools_of(kPai, "pai-machines", 2).cluster), pools(pools_of(kPai, "pai-machines").cluster));
  EXPECT_THROW(pools_of(kPai, "pai-machines", -1), InputError);
}

TEST(Inventory, PoolNamesStayUniqueWhenTypesLookAlike) {
  // "gpu x" and "gpu-x" both read as "gpu-x-2g"; unknown CPUs (empty field) give no CPU suffix.
  const InventoryCluster built = pools_of(
      "sn,cpu_milli,memory_mib,gpu,model\n"
      "a,,1024,2,gpu x\n"
      "b,,1024,2,gpu-x\n"
      "c,,1024,2,T4\n"
      "d,8000,1024,2,T4\n",
      "openb-nodes");
  std::vector<std::string> names;
  for (const auto& p : built.cluster.pools) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"t4-2g", "t4-2g-8cpu", "gpu-x-2g", "gpu-x-2g-2"}));
  expect_round_trip(built.cluster);
}

TEST(InventoryYaml, RoundTripsPresetsAndNamesThatNeedQuotes) {
  for (const char* preset : {"helios", "philly", "alibaba"}) expect_round_trip(load_cluster(preset));
  ClusterSpec odd;
  odd.name = "my cluster: #1 \"quoted\" \\";
  PoolSpec pool;
  pool.name = "true";
  pool.gpu_type = "A100 80GB, SXM";
  pool.nodes = 3;
  pool.gpus_per_node = 4;
  pool.accepts.vc = {"0", "null", "a b"};
  pool.accepts.min_gpus = 2;
  odd.pools.push_back(pool);
  pool.name = "#2: -1";  // an empty name is refused; this one needs quotes
  pool.gpu_type = "";     // none: not written
  pool.first_node = 3;
  pool.accepts = {};
  odd.pools.push_back(pool);
  expect_round_trip(odd);
  EXPECT_EQ(to_yaml(load_cluster("alibaba")).substr(0, 30), "name: alibaba\npools:\n  - {name");
}

std::string error_of(const std::string& text, const std::string& format) {
  try {
    read(text, format);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Inventory, BadInputNamesTheFileLineAndField) {
  const std::string philly_header = "machineId, number of GPUs, single GPU mem\n";
  const std::string openb_header = "sn,cpu_milli,memory_mib,gpu,model\n";
  struct Case {
    std::string format, text;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"philly-machines", philly_header + "m0,2, 12GB\nm1,two, 12GB\n",
       {"inv.csv:3: field 'number of GPUs': value 'two' is not a number"}},
      {"philly-machines", philly_header + "m0,2.5, 12GB\n", {"inv.csv:2", "'number of GPUs'", "whole number"}},
      {"philly-machines", philly_header + "m0,-2, 12GB\n", {"inv.csv:2", "'number of GPUs'", "whole number"}},
      {"philly-machines", philly_header + "m0,2, lots\n", {"inv.csv:2", "'single GPU mem'", "'lots'", "like 12GB"}},
      {"philly-machines", philly_header + "m0,2\n", {"inv.csv:2", "'single GPU mem'", "missing (the row has 2 of 3"}},
      {"philly-machines", "machineId, GPUs, single GPU mem\nm0,2, 12GB\n",
       {"inv.csv:1: field 'number of GPUs': is missing from the header row"}},
      {"pai-machines", "t1,T4,96\n", {"inv.csv:1", "field 'cap_gpu'", "missing"}},
      {"pai-machines", "t1,T4,96,lots,2\n", {"inv.csv:1", "field 'cap_mem'", "value 'lots'", "not a number"}},
      {"pai-machines", "t1,T4,96,512,2\nt1,T4,96,512,2\n", {"inv.csv:2", "field 'machine'", "duplicate", "line 1"}},
      {"pai-machines", ",T4,96,512,2\n", {"inv.csv:1", "field 'machine'", "empty"}},
      {"pai-machines", "c1,CPU,96,512,0\nc2,CPU,96,512,0\n",
       {"inv.csv: ", "no GPU node (2 machines read, 2 without GPUs)"}},
      {"openb-nodes", openb_header + "n0,500,1024,1,T4\n", {"inv.csv:2", "field 'cpu_milli'", "CPU cores"}},
      {"openb-nodes", openb_header + "n0,8000,-5,1,T4\n", {"inv.csv:2", "field 'memory_mib'", "MiB"}},
      {"openb-nodes", openb_header + "n0,8000,1024,,T4\n", {"inv.csv:2", "field 'gpu'", "empty"}},
      {"openb-nodes", openb_header, {"no GPU node (0 machines read"}},
      {"openb-nodes", "sn,cpu_milli,memory_mib,gpu\n", {"inv.csv:1", "field 'model'", "missing from the header row"}},
      {"openb-nodes", "", {"inv.csv: is empty"}},
      {"openb-nodes", "\n# just a comment\n\n", {"inv.csv: is empty"}},
      {"slurm-nodes", "x", {"unknown inventory format 'slurm-nodes'", "philly-machines, pai-machines, openb-nodes"}},
  };
  for (const auto& c : cases) {
    const std::string message = error_of(c.text, c.format);
    for (const auto& part : c.parts) EXPECT_NE(message.find(part), std::string::npos) << message << " / " << part;
  }
  EXPECT_THROW(read_inventory("/no/such/inventory.csv", "pai-machines"), InputError);
}

// --- The real inventories (skipped when ../shared/traces is absent) ---

const std::string kShared = RLTUNE_SHARED_TRACES;

// Per GPU type: nodes, and GPUs per node (0 when a type has several sizes).
std::map<std::string, std::pair<int, int>> by_type(const ClusterSpec& spec) {
  std::map<std::string, std::pair<int, int>> out;
  for (const auto& p : spec.pools) {
    auto& [nodes, gpus] = out[p.gpu_type];
    gpus = (nodes == 0 || gpus == p.gpus_per_node) ? p.gpus_per_node : 0;
    nodes += p.nodes;
  }
  return out;
}

InventoryCluster read_shared(const std::string& relative, const std::string& format, Inventory& inventory) {
  inventory = read_inventory(kShared + "/" + relative, format);
  InventoryCluster built = pools_from_inventory(inventory, {"real", 0});
  expect_round_trip(built.cluster);
  return built;
}

// Why a test on `relative` is skipped, or "" when the file is there.
std::string missing(const std::string& relative) {
  const std::string path = kShared + "/" + relative;
  return std::filesystem::exists(path) ? "" : "no " + path + " (../shared/traces is absent)";
}

TEST(SharedInventories, PhillyMachineList) {
  if (const auto why = missing("philly/cluster_machine_list.csv"); !why.empty()) GTEST_SKIP() << why;
  Inventory inventory;
  const auto built = read_shared("philly/cluster_machine_list.csv", "philly-machines", inventory);
  EXPECT_EQ(inventory.left_out, 0u);
  const std::vector<Pool> expected = {{"gpu-12gb-2g", "GPU-12GB", 321, 2, -1, -1},
                                      {"gpu-24gb-8g", "GPU-24GB", 231, 8, -1, -1}};
  EXPECT_EQ(pools(built.cluster), expected);
}

TEST(SharedInventories, PaiMachineSpec) {
  if (const auto why = missing("alibaba/pai2020_machine_spec.csv"); !why.empty()) GTEST_SKIP() << why;
  Inventory inventory;
  const auto built = read_shared("alibaba/pai2020_machine_spec.csv", "pai-machines", inventory);
  EXPECT_EQ(inventory.left_out, 83u);  // CPU-only machines
  const std::map<std::string, std::pair<int, int>> expected = {
      {"T4", {497, 2}}, {"MISC", {280, 8}}, {"P100", {798, 2}}, {"V100", {104, 8}}, {"V100M32", {135, 8}}};
  EXPECT_EQ(by_type(built.cluster), expected);
  EXPECT_EQ(built.cluster.pools.size(), 6u);  // V100 nodes come with 384 GB (45) or 512 GB (59)
}

TEST(SharedInventories, OpenbNodeLists) {
  // Counted with awk -F, '$4 > 0 {n[$5]++}' (V100M16 is V100 in rltune).
  const std::map<std::string, int> expected = {{"A10", 2},   {"G2", 549}, {"G3", 39},     {"P100", 134},
                                               {"T4", 404},  {"V100", 55}, {"V100M32", 30}};
  const std::vector<std::pair<std::string, std::size_t>> files = {{"alibaba/openb_node_list_gpu_node.csv", 0},
                                                                  {"alibaba/openb_node_list_all_node.csv", 310}};
  for (const auto& [file, left_out] : files) {
    if (const auto why = missing(file); !why.empty()) GTEST_SKIP() << why;
    Inventory inventory;
    const auto built = read_shared(file, "openb-nodes", inventory);
    EXPECT_EQ(inventory.nodes.size(), 1213u) << file;
    EXPECT_EQ(inventory.left_out, left_out) << file;
    std::map<std::string, int> nodes;
    for (const auto& [type, count] : by_type(built.cluster)) nodes[type] = count.first;
    EXPECT_EQ(nodes, expected) << file;
    EXPECT_EQ(built.cluster.pools.size(), 15u) << file;  // distinct (model, gpu, cpu_milli, memory_mib)
  }
}

}  // namespace
}  // namespace rltune::cluster
