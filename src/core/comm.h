#pragma once
// The processes of one run: this process alone, or the ranks of an MPI job (`mpirun -np N rltune ...`).
// Collective calls must be made by every rank in the same order. Work split between ranks gives the same
// result as in one process because each piece has its own seeded stream and every sum is taken in a fixed
// order (all_gather) or exactly (ExactSum). Only src/core/comm_world.cpp includes MPI.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rltune {

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's bytes, in rank order.
  virtual std::vector<std::string> all_gather(std::string_view mine) const = 0;
  // The same on rank 0 only; the other ranks get an empty vector. For results only rank 0 writes.
  virtual std::vector<std::string> gather_to_root(std::string_view mine) const = 0;
  // Element-wise sums over the ranks, in place (integers: exact in any order).
  virtual void sum(std::span<std::int64_t> values) const = 0;
  // Ends every rank at once with exit code `code`: for a failure on one rank, which the others would
  // otherwise wait for forever. The caller has said why.
  [[noreturn]] virtual void abort(int code) const = 0;
};

// This process alone.
const Comm& single_process();

// The MPI job this process belongs to when an MPI launcher started it (mpirun, or srun with PMIx or
// PMI2); otherwise single_process(). Initialises MPI on first use (and finalises it at exit). An
// InputError when a launcher started several processes but this build has no MPI, or srun started
// several tasks without an MPI plugin: each would do the whole run alone and overwrite the others' files.
const Comm& world();
// Whether an MPI launcher started this process, read from the environment the launchers set.
bool started_by_mpi_launcher();
// The cores this process may use by default: threads_per_rank of the machine's cores, those it may
// run on (its CPU affinity: a Slurm job's CPUs, or the cores mpirun bound it to) and the ranks the
// launcher started on this machine (1 without a launcher).
int default_threads();
// Of `mine` cores this rank may run on, on a machine of `machine` cores shared by `local_ranks`
// ranks: all of them when they are no more than its share of the machine (ranks bound to their own
// cores), else its share (ranks that all may run everywhere, or several bound to one socket).
// At least 1.
int threads_per_rank(int machine, int mine, int local_ranks);

// [first, last) of the `count` items that rank `rank` of `ranks` takes: contiguous blocks in rank order,
// so that concatenating the ranks' results in rank order gives the items' order.
struct Block {
  std::size_t first = 0, last = 0;
};
Block block_of(std::size_t count, int rank, int ranks);

// What together() throws on every rank when some rank failed (with several ranks): every rank knows, so
// the program can end normally everywhere, rank 0 saying why.
class RanksFailed : public std::runtime_error {
 public:
  RanksFailed(const std::string& message, bool input) : std::runtime_error(message), input(input) {}
  bool input;  // bad input (an InputError), not an internal error
};

// Runs `f` on this rank, then tells every rank whether any rank's `f` threw: if one did, every rank
// throws RanksFailed with the error of the first that did, prefixed with "rank R: " unless every rank
// failed with the same error. In one process, f's own exception passes through. For work that may
// fail on some ranks only, such as writing files on rank 0, so that the others do not wait forever at
// their next collective call.
void together(const Comm& comm, const std::function<void()>& f);
// For an error that every rank meets at the same point of the same computation (a value every rank
// holds alike): an InputError (or, not `input`, a runtime_error) in one process, RanksFailed with
// several ranks, so that it is said once and every rank ends normally.
[[noreturn]] void fail_on_every_rank(const Comm& comm, const std::string& message, bool input = true);

// For tests of failures (tests/mpi_test.sh): when the environment has RLTUNE_TEST_FAIL="RANK:STEP:HOW",
// rank RANK fails at step STEP (an epoch of training, a run of an experiment): HOW = throw (an error
// naming `what`) or die (killed by SIGKILL, as by the kernel's OOM killer). Otherwise nothing.
void fail_here_for_tests(const Comm& comm, long step, const std::string& what);

// all_gather of a vector of doubles: every rank's values, concatenated in rank order.
std::vector<double> gather_doubles(const Comm& comm, std::span<const double> mine);

// Sums float vectors (segments, each of its own length) so that the totals are the same bits whatever
// the order of the additions and however the terms are split between threads and ranks; floating-point
// addition is not associative, so a plain sum would change with the rank count. Each term is rounded to
// a fixed-point grid of its segment, 2^-(62 - e - b) where 2^e bounds the segment's largest |value| over
// every term and 2^b >= the number of terms, and the integers are summed exactly. Values below
// 2^-(62 - b) of the segment's largest are lost (2^-54 with 256 terms): far below a float's own
// precision for any value within 2^20 of the largest.
class ExactSum {
 public:
  // `sizes`: the segments' lengths; `max_abs`: each segment's largest |value| over all terms on all
  // ranks; `terms`: how many terms all ranks add in all (an upper bound). A bound that is not finite
  // (a gradient that overflowed or is NaN) is an InputError: nothing sensible can be added.
  ExactSum(std::vector<std::size_t> sizes, std::span<const double> max_abs, std::size_t terms);
  void add(std::size_t segment, std::span<const float> values);
  // The totals over every rank (a collective call), segment after segment.
  std::vector<std::vector<float>> total(const Comm& comm);

 private:
  std::vector<std::size_t> sizes_, offsets_;
  std::vector<int> shifts_;  // value x 2^shift is the integer added
  std::vector<std::int64_t> sums_;
};

}  // namespace rltune
