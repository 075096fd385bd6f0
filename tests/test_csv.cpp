#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/csv.h"
#include "core/file.h"
#include "helpers.h"

namespace rltune {
namespace {

TEST(Csv, SplitsPlainAndQuotedFields) {
  struct Case {
    std::string line;
    std::vector<std::string> fields;
  };
  const std::vector<Case> cases = {
      {"a,b,c", {"a", "b", "c"}},
      {"a,,c\r", {"a", "", "c"}},
      {"\"x,y\",z", {"x,y", "z"}},
      {"\"say \"\"hi\"\"\",1", {"say \"hi\"", "1"}},
      {"", {""}},
  };
  std::vector<std::string> out;
  for (const auto& c : cases) {
    csv::split(c.line, ',', out);
    EXPECT_EQ(out, c.fields) << c.line;
  }
}

TEST(Csv, ParsesIntegersStrictlyAndRoundsDecimals) {
  EXPECT_EQ(csv::parse_int_rounding("42"), 42);
  EXPECT_EQ(csv::parse_int_rounding(" -7 "), -7);
  EXPECT_EQ(csv::parse_int_rounding("12.6"), 13);
  EXPECT_EQ(csv::parse_int_rounding("1e3"), 1000);
  EXPECT_FALSE(csv::parse_int_rounding("12x").has_value());
  EXPECT_FALSE(csv::parse_int_rounding("").has_value());
  EXPECT_FALSE(csv::parse_int_rounding("nan").has_value());
}

// The limit is the line's bytes, with or without CRLF's '\r' (a line one byte over it was read).
TEST(Csv, LineReaderLimitIsExact) {
  const auto read = [](const std::string& text) {
    std::istringstream in(text);
    csv::LineReader lines(in, "t.csv", 4);
    std::string_view line;
    std::vector<std::string> out;
    while (lines.next(line)) out.emplace_back(line);
    return out;
  };
  EXPECT_EQ(read("abcd\nefgh"), (std::vector<std::string>{"abcd", "efgh"}));
  EXPECT_EQ(read("abcd\r\n"), (std::vector<std::string>{"abcd\r"}));
  for (const char* over : {"abcde\n", "abcde", "ab\nabcde\r\n", "abcdef\n"})
    testing::expect_input_error([&] { read(over); }, "the line is longer than 4 bytes");
  testing::expect_input_error([&] { read("ok\nabcde\n"); }, "t.csv:2");
}

TEST(Csv, QuotesFieldsOnlyWhenNeeded) {
  std::ostringstream out;
  csv::write_field(out, "plain");
  out << '|';
  csv::write_field(out, "a,b");
  out << '|';
  csv::write_field(out, "q\"q");
  EXPECT_EQ(out.str(), "plain|\"a,b\"|\"q\"\"q\"");
  EXPECT_EQ(csv::format_number(2.0), "2");
  EXPECT_EQ(csv::format_number(1.5), "1.5");
  EXPECT_EQ(csv::format_number(1.0 / 3), "0.333333");
}

// Files are written whole or not at all, also when streamed: a writer that fails midway leaves neither
// the file nor its temporary behind, and an earlier version of the file stays as it was.
TEST(WriteFile, StreamedContentIsAllOrNothing) {
  const testing::TempDir dir;
  const std::string path = dir.path + "/jobs.csv";
  write_file(path, [](std::ostream& out) { out << "a,b\n1,2\n"; });
  EXPECT_EQ(read_file(path), "a,b\n1,2\n");
  EXPECT_THROW(write_file(path, [](std::ostream& out) {
                 out << "half";
                 throw std::runtime_error("disk full");
               }),
               std::runtime_error);
  EXPECT_EQ(read_file(path), "a,b\n1,2\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

}  // namespace
}  // namespace rltune
