#include "core/error.h"

#include <fmt/format.h>

namespace rltune {

InputError InputError::at(const std::string& file, long line, const std::string& field,
                          const std::string& value, const std::string& message) {
  std::string where = file;
  if (line > 0) where += fmt::format(":{}", line);
  std::string what;
  if (!field.empty()) what += fmt::format("field '{}': ", field);
  if (!value.empty()) what += fmt::format("value '{}' ", value);
  return InputError(fmt::format("{}: {}{}", where, what, message));
}

void invariant_failed(const char* condition, const std::string& message, const char* file, int line) {
  throw InvariantError(fmt::format("invariant violated: {} ({}) at {}:{}", message, condition, file, line));
}

}  // namespace rltune
