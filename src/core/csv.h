#pragma once
// Minimal CSV support: split one line (RFC 4180 quoting), parse numbers strictly, write quoted fields.
#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rltune::csv {

// Splits one line into fields. Handles double quotes ("a,b" and "" escapes). Strips a trailing '\r'.
// Returns false when a quote is left open (the rest of the line is then the last field).
bool split(std::string_view line, char separator, std::vector<std::string>& out);

// A control character (below 0x20, or DEL): it breaks any line-based output a name is written into.
inline bool is_control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

// Trims spaces and tabs at both ends.
std::string_view trim(std::string_view s);

// Parses a whole field as a number; nullopt when it is empty or not entirely a number.
std::optional<double> parse_double(std::string_view s);
// Parses an integer; a decimal value ("12.0", "12.6") is rounded to the nearest integer.
std::optional<std::int64_t> parse_int_rounding(std::string_view s);
// Why `s` failed to parse as a number: "is out of range" when it is one (1e300 as an integer, 1e999),
// else "is not a number".
const char* not_a_number_reason(std::string_view s);

// Reads a text file line by line, like std::getline, but never holds more than `max_bytes` of a line:
// a longer line, or one with a NUL byte (binary input), throws InputError naming the file and line at
// once, instead of reading gigabytes into memory first.
class LineReader {
 public:
  LineReader(std::istream& in, std::string file, std::size_t max_bytes);
  // The next line without its '\n' (valid until the next call); false at the end of the input.
  bool next(std::string_view& line);
  // The number of the line last returned (1-based).
  long number() const { return number_; }

 private:
  std::istream& in_;
  std::string file_;
  std::size_t size_;  // max_bytes + 2: the line, a '\r' of CRLF, and getline's terminating NUL
  std::unique_ptr<char[]> buffer_;  // not zeroed: a large limit costs no memory until lines use it
  long number_ = 0;
};

// Writes a field, quoting it when it contains the separator, a quote or a newline, or starts with '#'.
void write_field(std::ostream& out, std::string_view field);
// Writes `fields` as one record, each written by write_field, ending with a newline.
void write_record(std::ostream& out, std::span<const std::string> fields);

// Formats a double with up to 6 significant decimals and no trailing zeros ("1.5", "2", "0.333333").
std::string format_number(double value);

}  // namespace rltune::csv
