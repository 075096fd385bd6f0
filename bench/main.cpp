// Entry point of rltune_bench; the benchmarks register themselves from the other bench/*.cpp files.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
