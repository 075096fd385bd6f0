#include "cluster/inventory.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "cluster/yaml_check.h"
#include "core/csv.h"
#include "core/error.h"
#include "trace/gpu_types.h"

namespace rltune::cluster {

const std::vector<InventoryFormat>& inventory_formats() {
  // Every field is spelled out (empty = the format lacks it) so that each entry reads as a full mapping.
  static const std::vector<InventoryFormat> table = {
      {.name = "philly-machines",
       .description = "Microsoft Philly cluster_machine_list (header: machineId, number of GPUs, single GPU mem); "
                      "no GPU model is published, so types are named from the GPU memory: GPU-12GB, GPU-24GB",
       .fixed_columns = {},
       .id = "machineId",
       .gpus = {"number of GPUs"},
       .cpus = {},
       .memory_mib = {},
       .gpu_type = "",
       .gpu_memory = "single GPU mem"},
      {.name = "pai-machines",
       .description = "Alibaba PAI 2020 machine spec (no header: machine,gpu_type,cap_cpu,cap_mem,cap_gpu; "
                      "cap_cpu in cores, cap_mem in GB)",
       .fixed_columns = {"machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"},
       .id = "machine",
       .gpus = {"cap_gpu"},
       .cpus = {"cap_cpu"},
       .memory_mib = {"cap_mem", 1024},
       .gpu_type = "gpu_type",
       .gpu_memory = ""},
      {.name = "openb-nodes",
       .description = "Alibaba 2023 openb_node_list (header: sn,cpu_milli,memory_mib,gpu,model)",
       .fixed_columns = {},
       .id = "sn",
       .gpus = {"gpu"},
       .cpus = {"cpu_milli", 0.001},
       .memory_mib = {"memory_mib"},
       .gpu_type = "model",
       .gpu_memory = ""},
  };
  return table;
}

const InventoryFormat& inventory_format(const std::string& name) {
  std::string known;
  for (const auto& f : inventory_formats()) {
    if (f.name == name) return f;
    known += (known.empty() ? "" : ", ") + f.name;
  }
  throw InputError(fmt::format("unknown inventory format '{}' (known: {})", name, known));
}

namespace {

// The ranges parse_cluster accepts, so that every node read here can be written as a loadable pool.
constexpr long long kMaxGpusPerNode = 1024, kMaxCpusPerNode = 1'000'000, kMaxMemoryMib = 1'000'000'000'000;

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The lines of an inventory file, split into trimmed fields, with errors that name the file, line and field.
class Rows {
 public:
  Rows(std::istream& in, const std::string& file) : in_(in), file_(file) {}

  // Advances to the next non-blank, non-comment line; false at the end.
  bool next() {
    std::string text;
    while (std::getline(in_, text)) {
      ++line_;
      if (line_ == 1 && text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // UTF-8 byte-order mark
      const auto trimmed = csv::trim(text);
      if (trimmed.empty() || trimmed == "\r" || trimmed.front() == '#') continue;
      csv::split(text, ',', fields_);
      for (auto& f : fields_) f = std::string(csv::trim(f));
      return true;
    }
    return false;
  }
  long line() const { return line_; }
  const std::vector<std::string>& fields() const { return fields_; }
  void set_names(std::vector<std::string> names) { names_ = std::move(names); }

  // Index of a named column; -1 when absent.
  int column(const std::string& name) const {
    const auto it = std::find(names_.begin(), names_.end(), name);
    return it == names_.end() ? -1 : static_cast<int>(it - names_.begin());
  }
  const std::string& text(int column) const {
    if (column >= static_cast<int>(fields_.size()))
      fail(column, "", fmt::format("is missing (the row has {} of {} columns)", fields_.size(), names_.size()));
    return fields_[column];
  }
  // A number times `scale`; nullopt when the field is empty.
  std::optional<double> number(int column, double scale) const {
    const std::string& t = text(column);
    if (t.empty()) return std::nullopt;
    const auto v = csv::parse_double(t);
    if (!v) fail(column, t, "is not a number");
    return *v * scale;
  }
  [[noreturn]] void fail(int column, const std::string& value, const std::string& message) const {
    throw InputError::at(file_, line_, names_[column], value, message);
  }

 private:
  std::istream& in_;
  const std::string& file_;
  std::vector<std::string> fields_, names_;
  long line_ = 0;
};

// Where each field of a format is in the file; -1 = the format does not have it.
struct Columns {
  int id = -1, gpus = -1, cpus = -1, memory_mib = -1, gpu_type = -1, gpu_memory = -1;
};

// Resolves the format's column names against the file's names; a missing one is an error on `line`.
Columns find_columns(const InventoryFormat& format, const Rows& rows, const std::string& file, long line) {
  auto find = [&](const std::string& name) {
    if (name.empty()) return -1;
    const int c = rows.column(name);
    if (c < 0) throw InputError::at(file, line, name, "", "is missing from the header row");
    return c;
  };
  Columns c;
  c.id = find(format.id);
  c.gpus = find(format.gpus.name);
  c.cpus = find(format.cpus.name);
  c.memory_mib = find(format.memory_mib.name);
  c.gpu_type = find(format.gpu_type);
  c.gpu_memory = find(format.gpu_memory);
  return c;
}

// "12GB" -> "GPU-12GB": a type name for formats that only give the memory of one GPU.
std::string type_from_gpu_memory(const Rows& rows, int column) {
  const std::string& t = rows.text(column);
  const bool has_unit = t.size() > 2 && iequal(std::string_view(t).substr(t.size() - 2), "GB");
  const auto gb = has_unit ? csv::parse_double(std::string_view(t).substr(0, t.size() - 2)) : std::nullopt;
  if (!gb || *gb <= 0) rows.fail(column, t, "is not a GPU memory size like 12GB");
  return "GPU-" + csv::format_number(*gb) + "GB";
}

}  // namespace

Inventory read_inventory(std::istream& in, const std::string& file, const std::string& format_name) {
  const InventoryFormat& format = inventory_format(format_name);
  Inventory inventory;
  inventory.source = file;
  inventory.format = format.name;
  Rows rows(in, file);
  bool have_row = rows.next();
  if (!have_row) throw InputError::at(file, 0, "", "", "is empty (no machine rows)");
  if (format.fixed_columns.empty()) {
    rows.set_names(rows.fields());
  } else {
    rows.set_names(format.fixed_columns);
    // A header row copied from the published .header file is allowed.
    if (rows.fields() == format.fixed_columns) have_row = rows.next();
  }
  const Columns col = find_columns(format, rows, file, rows.line());
  if (format.fixed_columns.empty()) have_row = rows.next();

  std::size_t machines = 0;
  std::unordered_map<std::string, long> line_of_id;  // duplicate detection only, never iterated
  for (; have_row; have_row = rows.next()) {
    ++machines;
    InventoryNode node;
    node.line = rows.line();
    node.id = rows.text(col.id);
    if (node.id.empty()) rows.fail(col.id, "", "is empty");
    if (const auto [it, fresh] = line_of_id.emplace(node.id, node.line); !fresh)
      rows.fail(col.id, node.id, fmt::format("is a duplicate node id (first on line {})", it->second));

    const auto gpus = rows.number(col.gpus, format.gpus.scale);
    if (!gpus) rows.fail(col.gpus, "", "is empty");
    if (*gpus != std::floor(*gpus) || *gpus < 0 || *gpus > static_cast<double>(kMaxGpusPerNode))
      rows.fail(col.gpus, rows.text(col.gpus),
                fmt::format("must be a whole number of GPUs from 0 to {}", kMaxGpusPerNode));
    node.gpus = static_cast<int>(*gpus);
    // Machines without GPUs cannot run a GPU job: PAI lists them with type CPU, openb with GPU count 0
    // and no model. They are left out and counted, never an error.
    const std::string& model = rows.text(col.gpu_type >= 0 ? col.gpu_type : col.gpu_memory);
    if (node.gpus == 0 || model.empty() || iequal(model, "CPU")) {
      // Left out as documented, but GPUs of no model are capacity the user may expect: said, not silent.
      if (node.gpus > 0 && model.empty())
        spdlog::warn("{}:{}: node {} has {} GPUs but no GPU model: left out", file, node.line, node.id, node.gpus);
      ++inventory.left_out;
      continue;
    }
    node.gpu_type = trace::normalize_gpu_type(col.gpu_type >= 0 ? model : type_from_gpu_memory(rows, col.gpu_memory));

    if (col.cpus >= 0)
      if (const auto cpus = rows.number(col.cpus, format.cpus.scale)) {
        // Round down: a fractional core cannot host a whole CPU request.
        if (*cpus < 1 || *cpus > static_cast<double>(kMaxCpusPerNode))
          rows.fail(col.cpus, rows.text(col.cpus), fmt::format("must give 1 to {} CPU cores", kMaxCpusPerNode));
        node.cpus = static_cast<int>(std::floor(*cpus));
      }
    if (col.memory_mib >= 0)
      if (const auto memory = rows.number(col.memory_mib, format.memory_mib.scale)) {
        if (*memory < 1 || *memory > static_cast<double>(kMaxMemoryMib))
          rows.fail(col.memory_mib, rows.text(col.memory_mib), fmt::format("must give 1 to {} MiB", kMaxMemoryMib));
        node.memory_mib = std::llround(*memory);
      }
    inventory.nodes.push_back(std::move(node));
  }
  if (inventory.nodes.empty())
    throw InputError::at(file, 0, "", "", fmt::format("has no GPU node ({} machines read, {} without GPUs)",
                                                     machines, inventory.left_out));
  return inventory;
}

Inventory read_inventory(const std::string& path, const std::string& format) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the inventory file");
  return read_inventory(in, path, format);
}

namespace {

// Lowercase letters and digits; anything else becomes '-' ("GPU-12GB" -> "gpu-12gb").
std::string slug(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    out += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '-';
  }
  return out;
}

std::string memory_label(long long mib) {
  return mib % 1024 == 0 ? fmt::format("{}gib", mib / 1024) : fmt::format("{}mib", mib);
}

}  // namespace

InventoryCluster pools_from_inventory(const Inventory& inventory, const PoolingOptions& options) {
  if (options.max_nodes_per_pool < 0)
    throw InputError(fmt::format("--sample must be at least 1 node per pool (got {})", options.max_nodes_per_pool));
  // The map orders pools by GPU type, then GPUs, CPUs and memory per node: the output is deterministic.
  using Shape = std::tuple<std::string, int, int, long long>;
  std::map<Shape, int> count;
  for (const auto& n : inventory.nodes) ++count[{n.gpu_type, n.gpus, n.cpus, n.memory_mib}];

  // Name = type and GPUs per node. Shapes sharing that name are told apart by the CPUs and/or memory
  // that differ between them; a numeric suffix settles anything left (e.g. unknown values).
  std::map<std::string, std::vector<Shape>> by_base;
  for (const auto& [shape, n] : count)
    by_base[fmt::format("{}-{}g", slug(std::get<0>(shape)), std::get<1>(shape))].push_back(shape);
  std::map<Shape, std::string> name_of;
  std::set<std::string> used;
  for (const auto& entry : by_base) {
    const std::string& base = entry.first;
    const std::vector<Shape>& shapes = entry.second;  // not a structured binding: clang 14 cannot capture one
    auto differ = [&](auto get) {
      return std::any_of(shapes.begin(), shapes.end(), [&](const Shape& s) { return get(s) != get(shapes.front()); });
    };
    const bool cpus_differ = differ([](const Shape& s) { return std::get<2>(s); });
    const bool memory_differs = differ([](const Shape& s) { return std::get<3>(s); });
    for (const Shape& s : shapes) {
      std::string described = base;
      if (cpus_differ && std::get<2>(s) > 0) described += fmt::format("-{}cpu", std::get<2>(s));
      if (memory_differs && std::get<3>(s) > 0) described += fmt::format("-{}", memory_label(std::get<3>(s)));
      std::string name = described;
      for (int k = 2; used.count(name); ++k) name = fmt::format("{}-{}", described, k);
      used.insert(name);
      name_of[s] = name;
    }
  }

  InventoryCluster built;
  built.cluster.name = options.name;
  built.cluster.source = inventory.source;
  NodeId next_node = 0;
  for (const auto& [shape, n] : count) {
    PoolSpec pool;
    pool.name = name_of[shape];
    std::tie(pool.gpu_type, pool.gpus_per_node, pool.cpus_per_node, pool.memory_mib_per_node) = shape;
    pool.nodes = options.max_nodes_per_pool > 0 ? std::min(n, options.max_nodes_per_pool) : n;
    pool.first_node = next_node;
    next_node += pool.nodes;
    built.cluster.pools.push_back(std::move(pool));
    built.inventory_nodes.push_back(n);
  }
  return built;
}

std::vector<std::string> describe(const Inventory& inventory, const InventoryCluster& built) {
  const ClusterSpec& c = built.cluster;
  std::vector<std::string> lines = {
      fmt::format("Built by `rltune cluster-from --format {}` from {}.", inventory.format, inventory.source),
      fmt::format("{} GPU nodes read in {} pools; {} machines without GPUs left out.", inventory.nodes.size(),
                  c.pools.size(), inventory.left_out),
  };
  if (inventory_format(inventory.format).gpu_type.empty())
    lines.push_back("The inventory names no GPU model: GPU types are named from the memory of one GPU.");
  for (std::size_t p = 0; p < c.pools.size(); ++p)
    if (c.pools[p].nodes < built.inventory_nodes[p])
      lines.push_back(fmt::format("Sampled: pool {} keeps {} of its {} nodes.", c.pools[p].name, c.pools[p].nodes,
                                  built.inventory_nodes[p]));
  lines.push_back("Jobs reach pools by GPU type (no `accepts`); add `accepts` to model partitions or VCs.");
  return lines;
}

namespace {


}  // namespace

std::string to_yaml(const ClusterSpec& cluster, const std::vector<std::string>& comment_lines) {
  std::string out;
  for (const auto& text : comment_lines) {
    std::size_t start = 0;  // a line break inside a comment would end it: continue it as a new comment
    do {
      const std::size_t end = text.find('\n', start);
      const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
      out += line.empty() ? "#\n" : "# " + line + "\n";
      start = end == std::string::npos ? end : end + 1;
    } while (start != std::string::npos);
  }
  out += "name: " + yaml_scalar(cluster.name) + "\npools:\n";
  for (const PoolSpec& p : cluster.pools) {
    out += "  - {name: " + yaml_scalar(p.name);
    if (!p.gpu_type.empty()) out += ", gpu_type: " + yaml_scalar(p.gpu_type);
    out += fmt::format(", nodes: {}, gpus_per_node: {}", p.nodes, p.gpus_per_node);
    if (p.cpus_per_node >= 0) out += fmt::format(", cpus_per_node: {}", p.cpus_per_node);
    if (p.memory_mib_per_node >= 0) out += fmt::format(", memory_mib_per_node: {}", p.memory_mib_per_node);
    const Accepts& a = p.accepts;
    std::vector<std::string> keys;
    if (!a.vc.empty()) {
      std::string vcs;
      for (const auto& vc : a.vc) vcs += (vcs.empty() ? "" : ", ") + yaml_scalar(vc);
      keys.push_back("vc: [" + vcs + "]");
    }
    if (a.min_gpus != 0) keys.push_back(fmt::format("min_gpus: {}", a.min_gpus));
    if (a.max_gpus != 0) keys.push_back(fmt::format("max_gpus: {}", a.max_gpus));
    for (std::size_t k = 0; k < keys.size(); ++k) out += (k == 0 ? ", accepts: {" : ", ") + keys[k];
    if (!keys.empty()) out += "}";
    out += "}\n";
  }
  return out;
}

}  // namespace rltune::cluster
