#include "core/file.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace rltune {

void write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path + ": cannot write the output file");
    out << text;
    if (!out.flush()) throw InputError(path + ": cannot write the output file");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw InputError(path + ": cannot replace the output file");
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace rltune
