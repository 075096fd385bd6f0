#include "trace/gpu_types.h"

#include <algorithm>
#include <cctype>

#include "core/csv.h"

namespace rltune::trace {

const std::vector<GpuType>& gpu_types() {
  // Sources: the PAI 2020 machine spec and task table (T4, P100, V100, V100M32, MISC = K40m/K80/M60),
  // the Alibaba 2023 node list (A10, G2, G3, V100M16, V100M32), and NVIDIA's product names.
  static const std::vector<GpuType> table = {
      {"T4", "NVIDIA T4, 16 GB", {"Tesla T4", "T4-16G"}},
      {"P100", "NVIDIA P100, 16 GB", {"Tesla P100", "P100-16G", "P100-PCIE-16GB", "P100-SXM2-16GB"}},
      {"V100", "NVIDIA V100, 16 GB", {"V100M16", "V100-16G", "V100-SXM2-16GB", "V100-PCIE-16GB", "Tesla V100"}},
      {"V100M32", "NVIDIA V100, 32 GB", {"V100-32G", "V100-SXM2-32GB", "V100-PCIE-32GB", "V100S"}},
      {"MISC", "older GPUs grouped by PAI 2020 (K40m, K80, M60)", {"K40m", "K40", "K80", "M60", "M40"}},
      {"A10", "NVIDIA A10, 24 GB", {"A10-24G"}},
      // Two types, as V100 and V100M32 are: a job that needs 80 GB of memory cannot run on a 40 GB card.
      {"A100", "NVIDIA A100, 40 GB", {"A100-40G", "A100-SXM4-40GB", "A100-PCIE-40GB"}},
      {"A100-80G", "NVIDIA A100, 80 GB", {"A100-SXM4-80GB", "A100-PCIE-80GB", "A100 80GB"}},
      {"G2", "Alibaba 2023 anonymised GPU model G2", {}},
      {"G3", "Alibaba 2023 anonymised GPU model G3", {}},
  };
  return table;
}

namespace {

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view drop_prefix(std::string_view s, std::string_view prefix) {
  if (s.size() > prefix.size() && iequal(s.substr(0, prefix.size()), prefix)) return csv::trim(s.substr(prefix.size()));
  return s;
}

}  // namespace

std::string normalize_gpu_type(std::string_view name) {
  const std::string_view trimmed = csv::trim(name);
  const std::string_view bare = drop_prefix(drop_prefix(trimmed, "NVIDIA "), "Tesla ");
  for (const auto& type : gpu_types()) {
    if (iequal(bare, type.name) || iequal(trimmed, type.name)) return type.name;
    for (const auto& alias : type.aliases)
      if (iequal(bare, alias) || iequal(trimmed, alias)) return type.name;
  }
  return std::string(trimmed);
}

bool same_gpu_type(std::string_view a, std::string_view b) { return iequal(a, b); }

}  // namespace rltune::trace
