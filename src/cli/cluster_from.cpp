// `rltune cluster-from`: a cluster YAML from a node inventory (philly-machines, pai-machines, openb-nodes).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cluster/inventory.h"
#include "report/outputs.h"

namespace rltune::cli {

namespace {

struct ClusterFromArgs {
  std::string format;
  std::string file;
  std::string name;  // default: the inventory file's name without extension
  std::string out;   // default: stdout
  int sample = 0;    // 0 = every node
};

int run_cluster_from(const ClusterFromArgs& a) {
  const cluster::Inventory inventory = cluster::read_inventory(a.file, a.format);
  cluster::PoolingOptions options;
  options.name = a.name.empty() ? std::filesystem::path(a.file).stem().string() : a.name;
  options.max_nodes_per_pool = a.sample;
  const cluster::InventoryCluster built = cluster::pools_from_inventory(inventory, options);
  const std::string yaml = cluster::to_yaml(built.cluster, cluster::describe(inventory, built));
  // The file is only useful if it loads: check it the way `simulate --cluster` will read it.
  const cluster::ClusterSpec check = cluster::parse_cluster(yaml, a.file + " (as a cluster)");

  if (a.out.empty()) std::cout << yaml;
  else report::write_file(a.out, yaml);
  std::cerr << fmt::format("{}: {} GPU nodes read, {} machines without GPUs left out; {} pools, {} nodes, {} GPUs{}\n",
                           a.file, inventory.nodes.size(), inventory.left_out, check.pools.size(),
                           check.total_nodes(), check.total_gpus(), a.out.empty() ? "" : " written to " + a.out);
  return 0;
}

}  // namespace

Command add_cluster_from(CLI::App& app) {
  auto args = std::make_shared<ClusterFromArgs>();
  CLI::App* sub = app.add_subcommand(
      "cluster-from", "Build a cluster YAML from a node inventory: one pool per GPU type and node shape");
  std::string formats;
  for (const auto& f : cluster::inventory_formats()) formats += fmt::format("\n  {}: {}", f.name, f.description);
  sub->add_option("--format", args->format, "Inventory format:" + formats)->required();
  sub->add_option("file", args->file, "Inventory file")->required();
  sub->add_option("--sample", args->sample, "Keep at most this many nodes per pool (the mix of pools is kept)")
      ->check(CLI::Range(1, 1'000'000));
  sub->add_option("--name", args->name, "Cluster name (default: the file name without extension)");
  sub->add_option("--out", args->out, "Output YAML file (default: stdout)")->check(path_name());
  return {sub, [args] { return run_cluster_from(*args); }};
}

}  // namespace rltune::cli
