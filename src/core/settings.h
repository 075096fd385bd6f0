#pragma once
// One record per numeric option of an options struct: its flag, its key in experiment YAML and
// config.json, its meaning and its bounds. The CLI flag, the YAML reader, validation and the
// config.json writer are all made from the records, so no way in accepts what another refuses.
#include <fmt/format.h>

#include <span>
#include <string>
#include <type_traits>
#include <variant>

#include "core/error.h"

namespace rltune {

template <typename Options>
struct NumberSetting {
  const char* flag;  // "--milp-extra-nodes"
  const char* key;   // "extra_nodes"
  const char* description;
  double min, max;
  std::variant<double Options::*, int Options::*, long Options::*> field;

  bool integer() const { return field.index() != 0; }
  double get(const Options& o) const {
    return std::visit([&](auto member) { return static_cast<double>(o.*member); }, field);
  }
  // `value` within the bounds (and whole, for an integer setting); the callers check.
  void set(Options& o, double value) const {
    std::visit([&](auto member) { o.*member = static_cast<std::remove_reference_t<decltype(o.*member)>>(value); }, field);
  }
};

// InputError "GROUP.KEY VALUE: must be between MIN and MAX" for the first setting out of its bounds.
template <typename Options>
void check_bounds(const Options& o, std::span<const NumberSetting<Options>> settings, const char* group) {
  for (const NumberSetting<Options>& s : settings) {
    const double v = s.get(o);
    if (!(v >= s.min && v <= s.max)) throw InputError(fmt::format("{}.{} {}: must be between {} and {}", group, s.key, v, s.min, s.max));
  }
}

// Each setting under its key in a JSON object (nlohmann's, or any with operator[]), integers as integers.
template <typename Json, typename Options>
void write_settings(Json& j, const Options& o, std::span<const NumberSetting<Options>> settings) {
  for (const NumberSetting<Options>& s : settings) {
    if (s.integer()) j[s.key] = static_cast<long long>(s.get(o));
    else j[s.key] = s.get(o);
  }
}

}  // namespace rltune
