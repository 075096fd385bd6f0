#pragma once
// Checked reading of YAML inputs (cluster files, workload models): every error names the file, line and
// key path. Header-only; users link yaml-cpp.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cmath>
#include <set>
#include <string>
#include <string_view>

#include "core/csv.h"
#include "core/error.h"

namespace rltune {

// A YAML scalar for writing: plain when it cannot be read as anything but this string, else double-quoted
// with escapes, so any name or path reads back unchanged.
inline std::string yaml_scalar(const std::string& s) {
  static const char* const kReserved[] = {"true", "false", "yes", "no", "on", "off", "y", "n", "null"};
  const auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  bool plain = !s.empty() && std::isalpha(static_cast<unsigned char>(s[0])) &&
               std::all_of(s.begin(), s.end(), [](char c) {
                 return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
               });
  for (const char* word : kReserved) {
    const std::string_view w(word);
    plain = plain && !(w.size() == s.size() && std::equal(w.begin(), w.end(), s.begin(), [&](char a, char b) {
                         return a == lower(b);
                       }));
  }
  if (plain) return s;
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += fmt::format("\\{}", c);
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else out += c;
  }
  return out + "\"";
}

struct YamlCheck {
  const std::string& source;

  [[noreturn]] void fail(const YAML::Node& node, const std::string& path, const std::string& message) const {
    const long line = node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
    throw InputError::at(source, line, path, "", message);
  }
  void only_keys(const YAML::Node& map, const std::string& path, const std::set<std::string>& allowed) const {
    if (!map.IsMap()) fail(map, path, "must be a mapping");
    std::set<std::string> seen;  // yaml-cpp keeps both entries of a repeated key, and lookups see only the first
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) fail(kv.first, path, "has a key that is not a name");
      const auto key = kv.first.as<std::string>();
      if (!seen.insert(key).second) fail(kv.first, path.empty() ? key : path + "." + key, "appears twice");
      if (!allowed.count(key)) {
        std::string known;
        for (const auto& k : allowed) known += (known.empty() ? "" : ", ") + k;
        fail(kv.first, path.empty() ? key : path + "." + key, "unknown key (known: " + known + ")");
      }
    }
  }
  long long integer(const YAML::Node& node, const std::string& path, long long min, long long max) const {
    check_no_leading_zero(node, path);
    long long v = 0;
    try {
      v = node.as<long long>();
    } catch (const YAML::Exception&) {
      double x = 0;  // 1e12, say: a whole number out of long long's range or written as a float
      if (YAML::convert<double>::decode(node, x) && std::isfinite(x) && x == std::floor(x))
        fail(node, path, fmt::format("must be an integer between {} and {}, written in digits (got {})", min, max, node.Scalar()));
      fail(node, path, "must be an integer");
    }
    if (v < min || v > max) fail(node, path, fmt::format("must be between {} and {} (got {})", min, max, v));
    return v;
  }
  // yaml-cpp reads 010 as octal 8 (YAML 1.1); YAML 1.2 and most readers say 10. Neither is silent here.
  void check_no_leading_zero(const YAML::Node& node, const std::string& path) const {
    if (!node.IsScalar()) return;
    const std::string& t = node.Scalar();
    const std::size_t digits = t.starts_with('-') || t.starts_with('+') ? 1 : 0;
    if (t.size() > digits + 1 && t[digits] == '0' && std::isdigit(static_cast<unsigned char>(t[digits + 1])))
      fail(node, path, fmt::format("'{}' has a leading zero, which YAML readers disagree on (octal or decimal): write it without", t));
  }
  // A seed: any 64-bit unsigned integer, as the CLI's --seed takes.
  std::uint64_t seed(const YAML::Node& node, const std::string& path) const {
    check_no_leading_zero(node, path);
    const std::string t = node.IsScalar() ? node.Scalar() : "";
    // Decimal, with an optional '+', or hexadecimal (0x...), as yaml-cpp reads integers.
    std::string_view digits = t;
    if (digits.starts_with('+')) digits.remove_prefix(1);
    const bool hex = digits.starts_with("0x") || digits.starts_with("0X");
    if (hex) digits.remove_prefix(2);
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, hex ? 16 : 10);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
      fail(node, path, fmt::format("must be an integer between 0 and {}{}", UINT64_MAX, t.empty() ? "" : " (got " + t + ")"));
    return v;
  }
  double number(const YAML::Node& node, const std::string& path, double min, double max) const {
    double v = 0;
    try {
      v = node.as<double>();
    } catch (const YAML::Exception&) {
      fail(node, path, "must be a number");
    }
    if (!std::isfinite(v) || v < min || v > max) fail(node, path, fmt::format("must be between {} and {} (got {})", min, max, v));
    return v;
  }
  std::string text(const YAML::Node& node, const std::string& path) const {
    if (!node.IsScalar()) fail(node, path, "must be a string");
    return node.as<std::string>();
  }
  // A name: text that is not empty (nor only spaces), on one line (it heads table columns and rows).
  std::string name(const YAML::Node& node, const std::string& path) const {
    std::string s = text(node, path);
    if (s.find_first_not_of(" \t") == std::string::npos) fail(node, path, "must not be empty");
    if (std::any_of(s.begin(), s.end(), csv::is_control))
      fail(node, path, "must not hold a control character (a line break, a tab)");
    return s;
  }
  // Parses the whole file, which must hold one document (YAML::Load would ignore a second one
  // silently); syntax errors name the line.
  YAML::Node load(const std::string& yaml) const {
    if (const long line = second_document_line(yaml))
      throw InputError::at(source, line, "", "", "starts a second YAML document; rltune reads one per file");
    try {
      return YAML::Load(yaml);
    } catch (const YAML::Exception& e) {
      throw InputError::at(source, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "", "is not valid YAML: " + e.msg);
    }
  }

  // The line where a second document starts (content after a "---" or "..." marker that follows
  // content), 0 for none. Markers are "---" or "..." at column 0, which no scalar may hold, so the text
  // tells (yaml-cpp's LoadAll can loop forever on some broken files).
  static long second_document_line(std::string_view yaml) {
    if (yaml.starts_with("\xEF\xBB\xBF")) yaml.remove_prefix(3);  // a UTF-8 BOM is no content (yaml-cpp skips it too)
    bool content = false, ended = false;
    long line = 0;
    for (std::size_t pos = 0; pos < yaml.size();) {
      const std::size_t end = std::min(yaml.find('\n', pos), yaml.size());
      std::string_view text = yaml.substr(pos, end - pos);
      pos = end + 1;
      ++line;
      const bool start = text.starts_with("---"), stop = text.starts_with("...");
      if ((start || stop) && (text.size() == 3 || text[3] == ' ' || text[3] == '\t' || text[3] == '\r')) {
        if (start && content) return line;
        ended = ended || stop;
        text.remove_prefix(3);  // "--- {a: 1}": the document starts on the marker's line
      }
      const std::size_t first = text.find_first_not_of(" \t\r");
      if (first == std::string_view::npos || text[first] == '#') continue;
      if (ended) return line;
      content = true;
    }
    return 0;
  }
};

}  // namespace rltune
