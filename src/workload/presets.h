#pragma once
// Workload families compiled in from configs/workloads/*.yaml (see cmake/write_presets.cmake).
#include <string>
#include <vector>

namespace rltune::workload {

struct Preset {
  std::string name;  // file name without .yaml
  std::string yaml;
};

const std::vector<Preset>& presets();

}  // namespace rltune::workload
