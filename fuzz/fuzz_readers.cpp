// libFuzzer target for every trace reader: the first byte picks the format, the rest is the file. A
// reader may accept the input or throw InputError; anything else (a crash, a sanitizer report, another
// exception, an invariant of the result broken) is a bug. The pai task table is the part after the first
// "\n--\n"; gavel reads its durations from a small fixed source. Build and run: see fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "core/error.h"
#include "trace/reader.h"

namespace {

const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("rltune-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::ofstream(d / "durations.csv") << "duration_s,num_gpus\n100,1\n3600,8\n";
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rltune;
  if (size == 0) return 0;
  const auto& all = trace::readers();
  trace::ReadOptions options;
  const std::size_t pick = data[0] % (all.size() + 1);
  options.format = pick == all.size() ? "auto" : all[pick].name;
  options.skip_invalid = (data[0] / 16) % 2 == 1;
  options.duration_source = (scratch() / "durations.csv").string();
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (const auto cut = text.find("\n--\n"); cut != std::string::npos) {
    std::ofstream(scratch() / "tasks.csv") << text.substr(cut + 4);
    text.resize(cut);
  } else {
    std::ofstream(scratch() / "tasks.csv") << "";
  }
  options.pai_task_table = (scratch() / "tasks.csv").string();
  try {
    std::istringstream in(text);
    const trace::Trace t = trace::read_trace(in, "fuzz", options);
    for (std::size_t i = 0; i < t.jobs.size(); ++i) {
      const auto& j = t.jobs[i];
      if (j.id.empty() || j.submit < 0 || (i > 0 && t.jobs[i - 1].submit > j.submit)) std::abort();
    }
  } catch (const InputError&) {
  }
  return 0;
}
