#pragma once
// Calendar timestamps as written by cluster logs ("2017-10-03 12:06:27"), read as UTC.
#include <cstdint>
#include <optional>
#include <string_view>

namespace rltune {

// Parses "YYYY-MM-DD HH:MM:SS" (also with 'T' between date and time, and an optional fractional second,
// rounded to the nearest second) into seconds since 1970-01-01 00:00:00 UTC. nullopt when the text is
// anything else, including out-of-range fields (month 13, 25:00:00, February 30).
std::optional<std::int64_t> parse_datetime(std::string_view text);

// The second a fraction ".DDD" (or "") adds when rounded to the nearest, half up: 0 or 1; nullopt
// when it is not a dot and digits.
std::optional<int> rounded_fraction(std::string_view fraction);

}  // namespace rltune
