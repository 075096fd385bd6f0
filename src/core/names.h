#pragma once
// Enums written as strings: one table of (value, name) per enum serves both directions, so that a
// name cannot be added to one and forgotten in the other, and every unknown name gets the same error.
#include <fmt/format.h>

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace rltune {

template <typename E, std::size_t N>
struct NameTable {
  const char* what;  // what the names name, for errors: "runtime", "score"
  std::array<std::pair<E, const char*>, N> entries;

  const char* name(E value) const {
    for (const auto& [v, n] : entries)
      if (v == value) return n;
    return "?";
  }
  // InputError "unknown WHAT 'TEXT' (known: a, b)" for a name not in the table.
  E parse(std::string_view text) const {
    for (const auto& [v, n] : entries)
      if (text == n) return v;
    throw InputError(fmt::format("unknown {} '{}' (known: {})", what, text, fmt::join(names(), ", ")));
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries) out.emplace_back(e.second);
    return out;
  }
};

}  // namespace rltune
