// libFuzzer target for every input rltune reads: trace formats, cluster, workload and experiment YAML,
// and policy.json. The first line of an input names its kind (fuzz_input.h); a bug aborts.
// Build and run: see fuzz/README.md.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto verdict = rltune::fuzz::check_input({reinterpret_cast<const char*>(data), size});
  if (verdict.outcome == rltune::fuzz::Outcome::bug) {
    std::fprintf(stderr, "bug: %s\n", verdict.detail.c_str());
    std::abort();
  }
  return 0;
}
