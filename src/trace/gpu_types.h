#pragma once
// GPU-type names: one table of canonical names with their aliases, used by every trace reader and by
// cluster files, so that "V100M16", "Tesla V100-SXM2-16GB" and "v100" all mean the pool type "V100".
#include <string>
#include <string_view>
#include <vector>

namespace rltune::trace {

struct GpuType {
  std::string name;                  // canonical name
  std::string description;
  std::vector<std::string> aliases;  // matched case-insensitively, as are the names
};

// The table (T4, P100, V100, V100M32, MISC, A10, A100, G2, G3, ...).
const std::vector<GpuType>& gpu_types();

// Canonical name for `name` (case-insensitive, after trimming and dropping a "Tesla " or "NVIDIA " prefix).
// Names not in the table are kept as written (trimmed): clusters may define their own types.
std::string normalize_gpu_type(std::string_view name);
// Whether two normalised names are one type: letter case aside, as for the table's names, so that a
// cluster's own "H100" is the "h100" a trace asks for.
bool same_gpu_type(std::string_view a, std::string_view b);

}  // namespace rltune::trace
