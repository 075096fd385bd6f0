#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace rltune {

namespace {

// Waits until done() or `limit` has passed; returns done(). Each turn is the CPU's pause hint: yielding to
// the kernel on each turn (sched_yield) cost more than a vectorised environment's steps. The clock is read
// every 64 turns, for the same reason.
template <class Done>
bool spin(const Done& done, std::chrono::microseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (unsigned turn = 1;; ++turn) {
    if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
    if (turn % 64 == 0 && std::chrono::steady_clock::now() >= until) return done();
  }
}

}  // namespace

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

ThreadTeam::ThreadTeam(int threads) {
  try {
    for (int w = 1; w < std::max(threads, 1); ++w) workers_.emplace_back([this, w] { serve(w); });
  } catch (...) {
    stop();  // no destructor runs for a team whose constructor throws
    throw;
  }
}

ThreadTeam::~ThreadTeam() { stop(); }

void ThreadTeam::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    ++generation_;
  }
  wake_.notify_all();
  workers_.clear();  // joins them now, while the members they use still exist
}

void ThreadTeam::work(int worker) {
  const auto stride = static_cast<std::size_t>(threads());
  for (std::size_t i = pinned_ ? static_cast<std::size_t>(worker) : next_++; i < n_ && !failed_; i = pinned_ ? i + stride : next_++) {
    try {
      (*run_)(i, worker);
    } catch (...) {
      const std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
      failed_ = true;
    }
  }
}

void ThreadTeam::serve(int worker) {
  std::uint64_t seen = 0;
  for (;;) {
    // Spin a little first: in a stepping loop the next call comes within microseconds, and waking a
    // sleeping thread costs about as much as a step.
    spin([&] { return generation_.load() != seen; }, std::chrono::microseconds(200));
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load() != seen; });
      seen = generation_.load();
      if (stopping_) return;
    }
    work(worker);
    if (--busy_ == 0) {
      const std::lock_guard lock(mutex_);  // so that the caller cannot miss the notification
      finished_.notify_one();
    }
  }
}

void ThreadTeam::for_each(std::size_t n, const std::function<void(std::size_t i, int worker)>& run, bool pinned) {
  if (workers_.empty() || n <= 1) {
    for (std::size_t i = 0; i < n; ++i) run(i, 0);
    return;
  }
  {
    const std::lock_guard lock(mutex_);
    n_ = n;
    run_ = &run;
    next_ = 0;
    pinned_ = pinned;
    failed_ = false;
    error_ = nullptr;
    busy_ = workers_.size();
    ++generation_;
  }
  wake_.notify_all();
  work(0);
  // Every worker must be done with this call's tasks: spin briefly (they usually are within
  // microseconds), then sleep, so that a machine with fewer free cores than threads is not starved.
  if (!spin([&] { return busy_.load() == 0; }, std::chrono::microseconds(50))) {
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return busy_.load() == 0; });
  }
  if (error_) std::rethrow_exception(error_);
}

}  // namespace rltune
