#pragma once
// Cluster presets compiled in from configs/clusters/*.yaml.
#include <vector>

#include "core/preset.h"

namespace rltune::cluster {

const std::vector<Preset>& presets();

}  // namespace rltune::cluster
