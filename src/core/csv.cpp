#include "core/csv.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <fmt/format.h>

#include "core/error.h"

namespace rltune::csv {

bool split(std::string_view line, char separator, std::vector<std::string>& out) {
  out.clear();
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == separator) {
      out.push_back(std::move(field));
      field.clear();
    } else {
      field.push_back(c);
    }
  }
  out.push_back(std::move(field));
  return !quoted;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<std::int64_t> parse_int_rounding(std::string_view s) {
  s = trim(s);
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc() && ptr == s.data() + s.size() && !s.empty()) return value;
  const auto d = parse_double(s);
  if (!d || std::fabs(*d) > 9e15) return std::nullopt;
  return std::llround(*d);
}

const char* not_a_number_reason(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  const bool number = !s.empty() && ptr == s.data() + s.size() &&
                      (ec == std::errc::result_out_of_range || (ec == std::errc() && std::isfinite(value)));
  return number ? "is out of range" : "is not a number";
}

void write_field(std::ostream& out, std::string_view field) {
  // A leading '#' is quoted too: unquoted at the start of a row, the readers take the line for a comment.
  if (field.find_first_of(",\"\n\r") == std::string_view::npos && !field.starts_with('#')) {
    out << field;
    return;
  }
  out << '"';
  for (const char c : field) {
    if (c == '"') out << '"';
    out << c;
  }
  out << '"';
}

void write_record(std::ostream& out, std::span<const std::string> fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out << ',';
    write_field(out, fields[i]);
  }
  out << '\n';
}

std::string format_number(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15) return fmt::format("{}", static_cast<long long>(value));
  std::string s = fmt::format("{:.6f}", value);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

LineReader::LineReader(std::istream& in, std::string file, std::size_t max_bytes)
    : in_(in), file_(std::move(file)), size_(max_bytes + 2), buffer_(std::make_unique_for_overwrite<char[]>(size_)) {}

bool LineReader::next(std::string_view& line) {
  // istream::getline stops after size - 1 characters without a '\n' (failbit, not at the end): too long.
  in_.getline(buffer_.get(), static_cast<std::streamsize>(size_));
  const auto read = static_cast<std::size_t>(in_.gcount());
  if (read == 0 && in_.eof()) return false;
  ++number_;
  bool too_long = in_.fail() && !in_.eof();
  const std::size_t length = too_long || in_.eof() ? read : read - 1;  // without the '\n' getline took
  // The buffer holds one byte more than the limit, for CRLF's '\r': a line without one may fill it.
  const std::size_t max_bytes = size_ - 2;
  too_long = too_long || length - (length > 0 && buffer_[length - 1] == '\r') > max_bytes;
  if (std::memchr(buffer_.get(), '\0', length) != nullptr)
    throw InputError::at(file_, number_, "", "", "holds a NUL byte: binary data or UTF-16 text, not a UTF-8 trace");
  if (too_long)
    throw InputError::at(file_, number_, "", "",
                         fmt::format("the line is longer than {} bytes: is this a trace file? (raise the limit with "
                                     "--max-line-bytes, or max_line_bytes in an experiment's trace)",
                                     max_bytes));
  line = std::string_view(buffer_.get(), length);
  return true;
}

}  // namespace rltune::csv
