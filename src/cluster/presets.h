#pragma once
// Cluster presets compiled in from configs/clusters/*.yaml (see cmake/write_presets.cmake).
#include <string>
#include <vector>

namespace rltune::cluster {

struct Preset {
  std::string name;  // file name without .yaml
  std::string yaml;
};

const std::vector<Preset>& presets();

}  // namespace rltune::cluster
