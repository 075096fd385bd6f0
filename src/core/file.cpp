#include "core/file.h"

#include <cstdio>
#include <fstream>

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

}  // namespace rltune
