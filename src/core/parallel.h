#pragma once
// The one thread pool: independent tasks spread over a few threads. Results must not depend on which
// thread ran a task, so callers give each task its own output slot (and, by `worker`, its own scratch).
#include <atomic>
#include <cstdint>
#include <exception>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace rltune {

// Calls run(i, worker) once for every i < n, on min(threads, n) threads (at least 1); the calling thread
// is worker 0 and each worker runs one task at a time. Tasks are handed out in order of i. After the
// first exception no further task starts; that exception is rethrown once the running tasks return.
void for_each_parallel(std::size_t n, int threads, const std::function<void(std::size_t i, int worker)>& run);

// The same contract as for_each_parallel, on threads that stay up between calls: for work handed out
// many times a second (a vectorised environment's steps), where starting threads for each call would
// cost more than the work. Workers and caller spin briefly for each other, then sleep. One caller at a
// time.
class ThreadTeam {
 public:
  explicit ThreadTeam(int threads);  // threads - 1 workers; the calling thread is worker 0
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;
  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // pinned: task i always runs on worker i % threads(), so that what task i works on stays in one core's
  // caches from call to call (a vectorised environment's i-th environment); else each task goes to the
  // next free worker.
  void for_each(std::size_t n, const std::function<void(std::size_t i, int worker)>& run, bool pinned = false);

 private:
  void work(int worker);       // takes tasks of the current call until none is left
  void serve(int worker);      // a worker thread's life
  void stop();                 // tells the workers to end and joins them
  std::vector<std::jthread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;      // a call has come (or the team is stopping)
  std::condition_variable finished_;  // the last worker is done with a call's tasks
  std::atomic<std::uint64_t> generation_{0};  // bumped by each call (and by the destructor)
  std::atomic<bool> stopping_{false};
  std::atomic<bool> failed_{false};  // a task of the current call has thrown: no further task starts
  bool pinned_ = false;
  std::atomic<std::size_t> next_{0}, busy_{0};
  std::size_t n_ = 0;
  const std::function<void(std::size_t, int)>* run_ = nullptr;
  std::exception_ptr error_;
};

}  // namespace rltune
