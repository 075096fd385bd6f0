#pragma once
#include <string>

namespace rltune {

// Writes `text` to `path` atomically (temporary file, then rename), so a reader or a killed run never
// sees half a file. Throws InputError if it cannot.
void write_file(const std::string& path, const std::string& text);

}  // namespace rltune
