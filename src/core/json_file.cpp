#include "core/json_file.h"

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <vector>

#include "core/error.h"

namespace rltune {

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot read", path));
  std::vector<std::set<std::string>> keys;  // of each object being read
  std::string twice;
  const nlohmann::json::parser_callback_t note_keys = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::object_start) keys.emplace_back();
    else if (event == nlohmann::json::parse_event_t::object_end) keys.pop_back();
    else if (event == nlohmann::json::parse_event_t::key && !keys.back().insert(parsed.get<std::string>()).second && twice.empty())
      twice = parsed.get<std::string>();
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in, note_keys);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number beyond a double (1e400)
    throw InputError(fmt::format("{}: not JSON: {}", path, e.what()));
  }
  if (!twice.empty()) throw InputError(fmt::format("{}: key '{}' appears twice in one object", path, twice));
  return j;
}

}  // namespace rltune
