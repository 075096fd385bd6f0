#pragma once
// Reading a JSON file that a person may have edited: strictly, with errors that name the file.
#include <nlohmann/json.hpp>

#include <string>

namespace rltune {

// The JSON in the file at `path`. InputError naming the file when it cannot be read, is not JSON, or
// gives a key twice in one object (nlohmann would keep the last silently: a hand edit that left the
// old value).
nlohmann::json read_json_file(const std::string& path);

}  // namespace rltune
