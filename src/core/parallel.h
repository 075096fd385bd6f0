#pragma once
// The one thread pool: independent tasks spread over a few threads. Results must not depend on which
// thread ran a task, so callers give each task its own output slot (and, by `worker`, its own scratch).
#include <cstddef>
#include <functional>

namespace rltune {

// Calls run(i, worker) once for every i < n, on min(threads, n) threads (at least 1); the calling thread
// is worker 0 and each worker runs one task at a time. Tasks are handed out in order of i. After the
// first exception no further task starts; that exception is rethrown once the running tasks return.
void for_each_parallel(std::size_t n, int threads, const std::function<void(std::size_t i, int worker)>& run);

}  // namespace rltune
