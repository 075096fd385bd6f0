#pragma once
// Row-by-row reading of a CSV trace file for the readers: fields addressed by column (from a header row,
// or fixed for header-less files), parsed with errors that name the file, line, field and value. After
// the first bad field of a row, the row is marked failed and later fields of it report nothing, so a
// skipped row is counted once.
#include <cstdint>
#include <initializer_list>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/csv.h"
#include "trace/reader.h"

namespace rltune::trace {

class CsvRows {
 public:
  // separator ' ' means any run of spaces and tabs (whitespace-separated formats such as SWF); '|' splits
  // on every bar without quoting (sacct --parsable2).
  CsvRows(std::istream& in, RowSink& sink, char separator = ',');

  // Reads the header row (the first line that is not blank or a '#' comment; a UTF-8 byte-order mark is dropped) and requires
  // every name in `required`. Throws InputError naming the missing column.
  // `optional`: the other columns the reader reads; a header name that differs from one of them (or from
  // a required one) only in case is an error, since it would be ignored.
  void read_header(std::initializer_list<std::string_view> required, std::initializer_list<std::string_view> optional = {});
  // For header-less files: the names of the fixed columns, used in messages.
  void set_names(std::vector<std::string> names) {
    names_ = std::move(names);
    fixed_ = true;
  }
  // Index of a header column; -1 when absent.
  int column(std::string_view name) const;

  // Advances to the next data row, skipping blank lines and lines starting with `comment`; false at the end.
  bool next(char comment = '#');
  long line() const { return lines_.number(); }
  std::size_t size() const { return fields_.size(); }
  bool ok() const { return ok_; }

  // The trimmed field; "" when the column is -1 or beyond the row.
  std::string_view text(int column) const;
  // Numeric fields. Empty text gives `if_empty` when given, else a "is empty" error. Text that is not a
  // number gives an error. Errors return nullopt and mark the row failed.
  std::optional<std::int64_t> integer(int column, std::optional<std::int64_t> if_empty = std::nullopt);
  std::optional<double> number(int column, std::optional<double> if_empty = std::nullopt);
  // A "YYYY-MM-DD HH:MM:SS" timestamp in seconds since 1970 (UTC).
  std::optional<std::int64_t> datetime(int column, std::optional<std::int64_t> if_empty = std::nullopt);
  // Reports a bad field of the current row (once per row); the reader then skips the row.
  void fail(int column, std::string_view value, const std::string& message);
  // Reports a problem of the whole row (no single field), once per row.
  void fail_row(const std::string& message);

 private:
  std::string name(int column) const;
  void split();
  // A typed field: empty text gives if_empty (or an error), text `parse` rejects gives `expected`.
  template <typename T, typename Parse>
  std::optional<T> parsed(int column, std::optional<T> if_empty, Parse parse, const char* (*why)(std::string_view));

  csv::LineReader lines_;
  RowSink& sink_;
  char separator_;
  std::string_view line_text_;
  std::vector<std::string> fields_;
  std::vector<std::string> names_;
  bool ok_ = true;
  bool quote_open_ = false;  // the last line split left a quote open
  bool fixed_ = false;       // names_ come from set_names, not from a header row
};

}  // namespace rltune::trace
