// world(): MPI's world communicator in a build with MPI (RLTUNE_WITH_MPI), else this process alone. The
// only file that includes MPI, kept out of rltune_core so that only the programs link it.
#include <fmt/format.h>

#include <cstdlib>

#include "core/comm.h"
#include "core/error.h"

#if RLTUNE_WITH_MPI
#include <mpi.h>

#include <climits>
#include <numeric>
#endif

namespace rltune {

#if RLTUNE_WITH_MPI
namespace {

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, text, &length);
    throw std::runtime_error(fmt::format("{}: {}", call, std::string(text, static_cast<std::size_t>(length))));
  }
}

class MpiWorld final : public Comm {
 public:
  MpiWorld() {
    int ready = 0;
    MPI_Initialized(&ready);
    // FUNNELED: the process has threads (rollouts, runs), but only the main thread calls MPI.
    int provided = 0;
    if (!ready) check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    // Errors come back as status codes (then exceptions), not as MPI's default abort.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    });
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> all_gather(std::string_view mine) const override { return gather(mine, false); }
  std::vector<std::string> gather_to_root(std::string_view mine) const override { return gather(mine, true); }

  void sum(std::span<std::int64_t> values) const override {
    for (std::size_t first = 0; first < values.size(); first += INT_MAX) {
      const int count = static_cast<int>(std::min<std::size_t>(values.size() - first, INT_MAX));
      check(MPI_Allreduce(MPI_IN_PLACE, values.data() + first, count, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    }
  }

  [[noreturn]] void abort(int code) const override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; this is for the compiler
  }

 private:
  // Every rank's bytes in rank order, on every rank or (`to_root`) on rank 0 only.
  std::vector<std::string> gather(std::string_view mine, bool to_root) const {
    if (mine.size() > static_cast<std::size_t>(INT_MAX)) throw std::runtime_error("gather: more than 2 GB from one rank");
    int length = static_cast<int>(mine.size());
    const bool receiving = !to_root || rank_ == 0;
    std::vector<int> lengths(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
    if (to_root) check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
    else check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    long long total = 0;
    for (int r = 0; receiving && r < size_; ++r) {
      offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
      total += lengths[static_cast<std::size_t>(r)];
      // Found before any data moves (on rank 0 alone when gathering to it: the job is then aborted).
      if (total > INT_MAX) throw std::runtime_error("gather: more than 2 GB in all");
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    if (to_root)
      check(MPI_Gatherv(mine.data(), length, MPI_BYTE, all.data(), lengths.data(), offsets.data(), MPI_BYTE, 0, MPI_COMM_WORLD),
            "MPI_Gatherv");
    else
      check(MPI_Allgatherv(mine.data(), length, MPI_BYTE, all.data(), lengths.data(), offsets.data(), MPI_BYTE, MPI_COMM_WORLD),
            "MPI_Allgatherv");
    std::vector<std::string> parts;
    for (int r = 0; receiving && r < size_; ++r)
      parts.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                                 static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
    return parts;
  }

  int rank_ = 0, size_ = 1;
};

}  // namespace
#endif

const Comm& world() {
  if (!started_by_mpi_launcher()) {
    // srun without an MPI plugin starts independent copies; they would overwrite each other's files.
    if (const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS"); tasks && std::atoi(tasks) > 1)
      throw InputError(fmt::format("srun started {} tasks without MPI: each would do the whole run alone; use srun --mpi=pmix, "
                                   "or mpirun inside the allocation",
                                   tasks));
    return single_process();
  }
#if RLTUNE_WITH_MPI
  static const MpiWorld mpi;
  return mpi;
#else
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!size) size = std::getenv("PMI_SIZE");
  if (!size) size = std::getenv("SLURM_STEP_NUM_TASKS");  // srun --mpi=pmix sets no size of its own
  if (size && std::string_view(size) == "1") return single_process();
  throw InputError(fmt::format("started by an MPI launcher ({} processes) but this rltune was built without MPI: each "
                               "process would do the whole run alone; install libopenmpi-dev and rebuild",
                               size ? size : "several"));
#endif
}

}  // namespace rltune
