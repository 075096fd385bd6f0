#pragma once
// Logging by level through spdlog (libraries never print to stdout). Messages go to stderr.
#include <spdlog/spdlog.h>

namespace rltune {

// Sets the global level from a name (trace, debug, info, warn, error, off); unknown names throw InputError.
void set_log_level(const std::string& level);

}  // namespace rltune
