#include "core/comm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <exception>
#include <stdexcept>
#include <thread>

#include "core/error.h"

namespace rltune {

namespace {

class SingleProcess final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> all_gather(std::string_view mine) const override { return {std::string(mine)}; }
  std::vector<std::string> gather_to_root(std::string_view mine) const override { return {std::string(mine)}; }
  void sum(std::span<std::int64_t>) const override {}
  [[noreturn]] void abort(int code) const override { std::exit(code); }
};

}  // namespace

const Comm& single_process() {
  static const SingleProcess one;
  return one;
}

bool started_by_mpi_launcher() {
  // Open MPI's mpirun, PMIx (Open MPI 4+, srun --mpi=pmix), PMI-1/PMI-2 (srun --mpi=pmi2, MPICH).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(name)) return true;
  return false;
}

int default_threads() {
  cpu_set_t mask;
  const int machine = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int mine = sched_getaffinity(0, sizeof(mask), &mask) == 0 ? CPU_COUNT(&mask) : machine;
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char* value = std::getenv(name)) {
      const int ranks = std::atoi(value);
      if (ranks >= 1) return threads_per_rank(machine, mine, ranks);
    }
  return threads_per_rank(machine, mine, 1);
}

int threads_per_rank(int machine, int mine, int local_ranks) {
  // A rank cannot tell how many others may run on its cores; its share of the machine is the most it
  // can take without crowding them, and it is all of its cores when they are its own.
  const int share = std::max(1, machine / std::max(1, local_ranks));
  return std::max(1, std::min(mine, share));
}

Block block_of(std::size_t count, int rank, int ranks) {
  const auto r = static_cast<std::size_t>(rank), n = static_cast<std::size_t>(ranks);
  return {count * r / n, count * (r + 1) / n};
}

void fail_on_every_rank(const Comm& comm, const std::string& message, bool input) {
  if (comm.size() > 1) throw RanksFailed(message, input);
  if (input) throw InputError(message);
  throw std::runtime_error(message);
}

void together(const Comm& comm, const std::function<void()>& f) {
  std::string failure;  // "" when f returned; else the kind (I: input, E: other) and the message
  std::exception_ptr error;
  try {
    f();
  } catch (const RanksFailed&) {
    throw;  // every rank knows already
  } catch (const InputError& e) {
    failure = std::string("I") + e.what();
    error = std::current_exception();
  } catch (const std::exception& e) {
    failure = std::string("E") + e.what();
    error = std::current_exception();
  }
  if (comm.size() == 1) {
    if (error) std::rethrow_exception(error);
    return;
  }
  const auto all = comm.all_gather(failure);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty()) continue;
    // The same error on every rank (a bad argument) needs no rank.
    const bool everywhere = std::all_of(all.begin(), all.end(), [&](const std::string& f) { return f == all[r]; });
    throw RanksFailed(everywhere ? all[r].substr(1) : fmt::format("rank {}: {}", r, all[r].substr(1)), all[r][0] == 'I');
  }
}

void fail_here_for_tests(const Comm& comm, long step, const std::string& what) {
  const char* spec = std::getenv("RLTUNE_TEST_FAIL");
  if (!spec) return;
  int rank = -1;
  long at = -1;
  char how[8] = {};
  if (std::sscanf(spec, "%d:%ld:%7s", &rank, &at, how) != 3 || rank != comm.rank() || at != step) return;
  if (std::string_view(how) == "die") std::raise(SIGKILL);
  throw std::runtime_error(fmt::format("failure injected by RLTUNE_TEST_FAIL in {}", what));
}

std::vector<double> gather_doubles(const Comm& comm, std::span<const double> mine) {
  const auto parts = comm.all_gather({reinterpret_cast<const char*>(mine.data()), mine.size_bytes()});
  std::vector<double> all;
  for (const std::string& part : parts) {
    RLTUNE_CHECK(part.size() % sizeof(double) == 0, "a rank sent whole doubles");
    const std::size_t first = all.size();
    all.resize(first + part.size() / sizeof(double));
    std::memcpy(all.data() + first, part.data(), part.size());
  }
  return all;
}

ExactSum::ExactSum(std::vector<std::size_t> sizes, std::span<const double> max_abs, std::size_t terms) : sizes_(std::move(sizes)) {
  RLTUNE_CHECK(max_abs.size() == sizes_.size(), "one bound per segment");
  int b = 0;
  while ((std::size_t{1} << b) < std::max<std::size_t>(terms, 1)) ++b;
  std::size_t offset = 0;
  for (std::size_t s = 0; s < sizes_.size(); ++s) {
    if (!std::isfinite(max_abs[s])) throw InputError(fmt::format("a gradient is not finite ({}): training diverged", max_abs[s]));
    int e = 0;
    std::frexp(max_abs[s], &e);  // max_abs < 2^e (e = 0 for 0)
    shifts_.push_back(62 - e - b);  // |value| x 2^shift <= 2^(62 - b): terms of them sum below 2^62
    offsets_.push_back(offset);
    offset += sizes_[s];
  }
  sums_.assign(offset, 0);
}

void ExactSum::add(std::size_t segment, std::span<const float> values) {
  RLTUNE_CHECK(segment < sizes_.size() && values.size() == sizes_[segment], "a term of its segment's length");
  std::int64_t* sum = sums_.data() + offsets_[segment];
  const int shift = shifts_[segment];
  for (std::size_t i = 0; i < values.size(); ++i) sum[i] += std::llround(std::ldexp(static_cast<double>(values[i]), shift));
}

std::vector<std::vector<float>> ExactSum::total(const Comm& comm) {
  comm.sum(sums_);
  std::vector<std::vector<float>> out;
  for (std::size_t s = 0; s < sizes_.size(); ++s) {
    std::vector<float>& values = out.emplace_back(sizes_[s]);
    for (std::size_t i = 0; i < sizes_[s]; ++i)
      values[i] = static_cast<float>(std::ldexp(static_cast<double>(sums_[offsets_[s] + i]), -shifts_[s]));
  }
  return out;
}

}  // namespace rltune
