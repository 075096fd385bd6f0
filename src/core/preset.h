#pragma once
// A preset compiled into the binary from configs/<kind>/*.yaml (see cmake/write_presets.cmake).
#include <string>

namespace rltune {

struct Preset {
  std::string name;  // file name without .yaml
  std::string yaml;
};

}  // namespace rltune
