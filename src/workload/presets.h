#pragma once
// Workload families compiled in from configs/workloads/*.yaml.
#include <vector>

#include "core/preset.h"

namespace rltune::workload {

const std::vector<Preset>& presets();

}  // namespace rltune::workload
