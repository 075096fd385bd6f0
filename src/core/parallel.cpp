#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace rltune {

void for_each_parallel(std::size_t n, int threads, const std::function<void(std::size_t i, int worker)>& run) {
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::exception_ptr error;
  const auto work = [&](int worker) {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        run(i, worker);
      } catch (...) {
        const std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        next = n;
      }
    }
  };
  const auto count = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), std::max<std::size_t>(n, 1)));
  {
    std::vector<std::jthread> pool;
    for (int w = 1; w < count; ++w) pool.emplace_back(work, w);
    work(0);
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace rltune
