#include "core/file.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/hash.h"

namespace rltune {

void write_file(const std::string& path, const std::string& text) {
  write_file(path, [&](std::ostream& out) { out << text; });
}

void write_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string tmp = path + ".tmp";
  const auto fail = [&](const char* what) {
    std::remove(tmp.c_str());  // a full disk must not leave half a file behind
    throw InputError(fmt::format("{}: cannot {} the output file", path, what));
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail("write");
    try {
      write(out);
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
    out.close();
    if (!out) fail("write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("replace");
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::string> file_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  Fnv1a h;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    h.add(buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return std::nullopt;
  return fmt::format("fnv1a64:{:016x}", h.value());
}

}  // namespace rltune
