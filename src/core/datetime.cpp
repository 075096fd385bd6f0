#include "core/datetime.h"

#include <charconv>

namespace rltune {

namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's civil algorithm).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool leap(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Reads exactly `digits` decimal digits at text[pos].
bool number(std::string_view text, std::size_t pos, std::size_t digits, int& out) {
  if (pos + digits > text.size()) return false;
  for (std::size_t i = pos; i < pos + digits; ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  std::from_chars(text.data() + pos, text.data() + pos + digits, out);
  return true;
}

}  // namespace

std::optional<int> rounded_fraction(std::string_view fraction) {
  if (fraction.empty()) return 0;
  if (fraction.size() == 1 || fraction[0] != '.') return std::nullopt;
  for (const char c : fraction.substr(1))
    if (c < '0' || c > '9') return std::nullopt;
  return fraction[1] >= '5' ? 1 : 0;
}

std::optional<std::int64_t> parse_datetime(std::string_view t) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r')) t.remove_suffix(1);
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (t.size() < 19 || !number(t, 0, 4, year) || t[4] != '-' || !number(t, 5, 2, month) || t[7] != '-' ||
      !number(t, 8, 2, day) || (t[10] != ' ' && t[10] != 'T') || !number(t, 11, 2, hour) || t[13] != ':' ||
      !number(t, 14, 2, minute) || t[16] != ':' || !number(t, 17, 2, second))
    return std::nullopt;
  const auto half_up = rounded_fraction(t.substr(19));  // optional ".123", rounded to the nearest second
  if (!half_up) return std::nullopt;
  constexpr int kDaysIn[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1) return std::nullopt;
  if (day > kDaysIn[month - 1] + (month == 2 && leap(year))) return std::nullopt;
  if (hour > 23 || minute > 59 || second > 60) return std::nullopt;  // 60: a leap second, as logged
  return days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 + hour * 3600 +
         minute * 60 + second + *half_up;
}

}  // namespace rltune
