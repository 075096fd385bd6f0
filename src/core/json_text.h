#pragma once
// JSON text for output files, for any nlohmann json type (the header needs none of them).
#include <string>

namespace rltune {

// The text of `j`. Bytes that are not UTF-8 (file and trace names may hold any) become U+FFFD instead
// of stopping a command with an internal error after its work is done.
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace rltune
