#include "trace/csv_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/csv.h"
#include "core/datetime.h"
#include "core/error.h"

namespace rltune::trace {

CsvRows::CsvRows(std::istream& in, RowSink& sink, char separator)
    : lines_(in, sink.file(), sink.options().max_line_bytes), sink_(sink), separator_(separator) {}

void CsvRows::read_header(std::initializer_list<std::string_view> required, std::initializer_list<std::string_view> optional) {
  while (lines_.next(line_text_)) {
    if (line() == 1 && line_text_.starts_with("\xEF\xBB\xBF")) line_text_.remove_prefix(3);
    const auto trimmed = csv::trim(line_text_);
    if (trimmed.empty() || trimmed == "\r" || trimmed.front() == '#') continue;
    // Lines that end in CR alone read as one long line, whose "header" repeats names.
    if (const auto cr = line_text_.find('\r'); cr != std::string_view::npos && cr + 1 < line_text_.size())
      throw InputError::at(sink_.file(), line(), "", "", "ends its lines with CR only (old Mac text): convert them to LF");
    split();
    names_.clear();
    for (const auto& f : fields_) {
      const std::string name(csv::trim(f));
      // Which of two columns holds a field would be a guess; an ignored column may repeat.
      const auto is = [&](std::string_view known) { return known == name; };
      if (!name.empty() && column(name) >= 0 && (std::ranges::any_of(required, is) || std::ranges::any_of(optional, is)))
        throw InputError::at(sink_.file(), line(), name, "", "appears twice in the header row");
      names_.push_back(name);
    }
    const auto same_but_case = [](std::string_view a, std::string_view b) {
      return a != b && a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
             });
    };
    for (const std::string& name : names_)
      for (const auto& names : {required, optional})
        for (const std::string_view known : names)
          if (same_but_case(name, known) && column(known) < 0)
            throw InputError::at(sink_.file(), line(), name, "", fmt::format("would be ignored: the column is named '{}'", known));
    for (const auto name : required)
      if (column(name) < 0)
        throw InputError::at(sink_.file(), line(), std::string(name), "", "is missing from the header row");
    return;
  }
  throw InputError::at(sink_.file(), 0, "", "", "is empty (no header row)");
}

int CsvRows::column(std::string_view name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<int>(i);
  return -1;
}

bool CsvRows::next(char comment) {
  while (lines_.next(line_text_)) {
    const auto trimmed = csv::trim(line_text_);
    if (trimmed.empty() || trimmed == "\r" || trimmed.front() == comment) continue;
    split();
    ok_ = true;
    // Quoted fields across lines (RFC 4180) are not read: a line break is refused in every field rltune
    // keeps, and reading on would let a stray quote swallow the rows after it.
    if (quote_open_) fail_row("has a quote (\") that is never closed on its line (a field across lines is not read)");
    else if (!names_.empty() && fields_.size() > names_.size())
      fail_row(fixed_ ? fmt::format("has {} fields, more than the format's {} columns", fields_.size(), names_.size())
                      : fmt::format("has {} fields, more than the header row's {}", fields_.size(), names_.size()));
    return true;
  }
  return false;
}

void CsvRows::split() {
  if (separator_ == '|') {  // sacct --parsable2 never quotes: a '"' in a job name is just a character
    fields_.clear();
    std::string_view t = line_text_;
    if (!t.empty() && t.back() == '\r') t.remove_suffix(1);
    for (std::size_t start = 0;;) {
      const auto bar = t.find('|', start);
      fields_.emplace_back(t.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start));
      if (bar == std::string_view::npos) return;
      start = bar + 1;
    }
  }
  if (separator_ != ' ') {
    quote_open_ = !csv::split(line_text_, separator_, fields_);
    return;
  }
  fields_.clear();
  std::size_t i = 0;
  const std::string_view t = line_text_;
  while (true) {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r')) ++i;
    if (i == t.size()) return;
    const std::size_t start = i;
    while (i < t.size() && t[i] != ' ' && t[i] != '\t' && t[i] != '\r') ++i;
    fields_.emplace_back(t.substr(start, i - start));
  }
}

std::string_view CsvRows::text(int column) const {
  if (column < 0 || column >= static_cast<int>(fields_.size())) return {};
  return csv::trim(fields_[column]);
}

std::string CsvRows::name(int column) const {
  if (column >= 0 && column < static_cast<int>(names_.size())) return names_[column];
  return fmt::format("column {}", column + 1);
}

void CsvRows::fail(int column, std::string_view value, const std::string& message) {
  if (!ok_) return;
  ok_ = false;
  sink_.bad_row(line(), name(column), std::string(value), message);
}

void CsvRows::fail_row(const std::string& message) {
  if (!ok_) return;
  ok_ = false;
  sink_.bad_row(line(), "", "", message);
}

template <typename T, typename Parse>
std::optional<T> CsvRows::parsed(int column, std::optional<T> if_empty, Parse parse, const char* (*why)(std::string_view)) {
  if (!ok_) return std::nullopt;
  const auto t = text(column);
  if (t.empty()) {
    if (!if_empty) fail(column, t, "is empty");
    return if_empty;
  }
  const std::optional<T> v = parse(t);
  if (!v) fail(column, t, why(t));
  return v;
}

std::optional<std::int64_t> CsvRows::integer(int column, std::optional<std::int64_t> if_empty) {
  return parsed(column, if_empty, [](std::string_view t) { return csv::parse_int_rounding(t); }, csv::not_a_number_reason);
}

std::optional<double> CsvRows::number(int column, std::optional<double> if_empty) {
  return parsed(column, if_empty, [](std::string_view t) { return csv::parse_double(t); }, csv::not_a_number_reason);
}

std::optional<std::int64_t> CsvRows::datetime(int column, std::optional<std::int64_t> if_empty) {
  return parsed(column, if_empty, [](std::string_view t) { return parse_datetime(t); },
                [](std::string_view) { return "is not a date and time (YYYY-MM-DD HH:MM:SS)"; });
}

}  // namespace rltune::trace
