#pragma once
// Node inventories -> cluster specs (`rltune cluster-from`): reads a published list of a cluster's
// machines, groups identical machines into pools and writes the cluster YAML of DESIGN.md section 3, so
// that users model a real cluster in one step instead of counting nodes by hand.
#include <istream>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"

namespace rltune::cluster {

// One numeric column of an inventory file; its value times `scale` is the node's quantity in rltune's
// unit (GPUs, cores, MiB).
struct InventoryColumn {
  std::string name;  // "" = the format does not have this column (the quantity is unknown)
  double scale = 1;
};

// How to read one inventory format: which column holds what. Adding a format = adding a table entry.
struct InventoryFormat {
  std::string name;
  std::string description;
  // Header-less files: the names of their fixed columns (used to address fields and in messages).
  // Empty = the file starts with a header row naming its columns.
  std::vector<std::string> fixed_columns;
  std::string id;  // node id column
  InventoryColumn gpus, cpus, memory_mib;
  std::string gpu_type;  // column naming the GPU model; "" = the format has none, see gpu_memory
  // Column with the memory of one GPU (e.g. "12GB") for formats without a GPU model: the type is then
  // named from it ("GPU-12GB"), since inventing a model would mislead.
  std::string gpu_memory;
};

// The known formats: philly-machines, pai-machines, openb-nodes.
const std::vector<InventoryFormat>& inventory_formats();
// Unknown names: InputError listing the known ones.
const InventoryFormat& inventory_format(const std::string& name);

struct InventoryNode {
  std::string id;
  std::string gpu_type;  // normalised by trace::normalize_gpu_type
  int gpus = 0;
  int cpus = -1;               // -1 = unknown; fractional cores are rounded down
  long long memory_mib = -1;   // -1 = unknown
  long line = 0;               // where it was read, for messages
};

struct Inventory {
  std::string source;  // file name
  std::string format;
  std::vector<InventoryNode> nodes;  // GPU nodes only, in file order
  // Machines without GPUs (GPU count 0, no GPU model, or model "CPU"): left out, only counted.
  std::size_t left_out = 0;
};

// Reads an inventory; `file` names `in` in messages. Throws InputError naming the file, line and field
// for a bad value, a missing column, an empty file or an inventory without any GPU node.
Inventory read_inventory(std::istream& in, const std::string& file, const std::string& format);
// Same, from a path (InputError when it cannot be opened).
Inventory read_inventory(const std::string& path, const std::string& format);

struct PoolingOptions {
  std::string name;          // cluster name
  int max_nodes_per_pool = 0;  // 0 = every node; otherwise >= 1: caps each pool, keeping the mix of types
};

struct InventoryCluster {
  ClusterSpec cluster;
  std::vector<int> inventory_nodes;  // per pool: nodes of that shape in the inventory (before capping)
};

// One pool per distinct (gpu_type, gpus, cpus, memory) shape, sorted by those keys, named from the type
// and GPUs per node ("v100m32-8g"; shapes sharing that name get their CPUs/memory appended). Pools have
// no `accepts`: jobs reach them by GPU type. Throws InputError for a bad option.
InventoryCluster pools_from_inventory(const Inventory& inventory, const PoolingOptions& options);

// Comment lines for the YAML: where the pools came from, what was left out, the inventory's own counts
// when they were capped.
std::vector<std::string> describe(const Inventory& inventory, const InventoryCluster& built);

// Cluster YAML that parse_cluster reads back into the same pools. Each comment line becomes "# LINE".
std::string to_yaml(const ClusterSpec& cluster, const std::vector<std::string>& comment_lines = {});

}  // namespace rltune::cluster
