#include "core/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include "core/error.h"

namespace rltune {

void set_log_level(const std::string& level) {
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off")
    throw InputError("--log-level: unknown level '" + level + "' (known: trace, debug, info, warn, error, off)");
  if (!spdlog::get("rltune")) {  // once: a second call only changes the level
    auto logger = spdlog::stderr_color_mt("rltune");
    logger->set_pattern("%^%l%$: %v");
    spdlog::set_default_logger(logger);
  }
  spdlog::set_level(parsed);
}

}  // namespace rltune
