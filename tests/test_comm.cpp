// The single-process side of core/comm.h; tests/mpi_test.sh runs the same code on MPI ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstring>
#include <random>

#include "core/comm.h"
#include "core/error.h"

namespace rltune {
namespace {

TEST(Comm, BlocksCoverTheItemsInRankOrder) {
  for (const std::size_t count : {0u, 1u, 5u, 6u, 100u})
    for (const int ranks : {1, 2, 3, 7}) {
      std::size_t next = 0;
      for (int r = 0; r < ranks; ++r) {
        const Block b = block_of(count, r, ranks);
        EXPECT_EQ(b.first, next) << count << " items, rank " << r << " of " << ranks;
        EXPECT_LE(b.last - b.first, count / static_cast<std::size_t>(ranks) + 1);
        next = b.last;
      }
      EXPECT_EQ(next, count);
    }
}

// The totals are the same bits whatever the order of the terms: what makes a model the same on any
// number of ranks. A float sum in another order differs.
TEST(Comm, ExactSumDoesNotDependOnTheOrder) {
  std::mt19937 gen(5);
  std::normal_distribution<float> normal(0, 1);
  std::vector<std::vector<float>> terms(40, std::vector<float>(33));
  for (std::size_t k = 0; k < terms.size(); ++k)
    for (float& v : terms[k]) v = normal(gen) * std::pow(10.0f, static_cast<float>(k % 7) - 3);
  double max_abs = 0;
  for (const auto& t : terms)
    for (const float v : t) max_abs = std::max(max_abs, static_cast<double>(std::abs(v)));
  const auto total = [&](const std::vector<std::size_t>& order) {
    ExactSum sum({33}, std::span(&max_abs, 1), terms.size());
    for (const std::size_t k : order) sum.add(0, terms[k]);
    return sum.total(single_process())[0];
  };
  std::vector<std::size_t> order(terms.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  const std::vector<float> forward = total(order);
  std::reverse(order.begin(), order.end());
  EXPECT_EQ(forward, total(order));
  std::shuffle(order.begin(), order.end(), gen);
  EXPECT_EQ(forward, total(order));
  bool float_sums_differ = false;
  for (std::size_t i = 0; i < 33; ++i) {
    double exact = 0;
    float up = 0, down = 0;
    for (std::size_t k = 0; k < terms.size(); ++k) {
      exact += terms[k][i];
      up += terms[k][i];
      down += terms[terms.size() - 1 - k][i];
    }
    float_sums_differ = float_sums_differ || up != down;
    EXPECT_NEAR(forward[i], exact, 1e-6 * max_abs) << i;
  }
  EXPECT_TRUE(float_sums_differ) << "the terms should show that float addition depends on the order";
}

TEST(Comm, ExactSumKeepsSegmentsApartAndRefusesInfinity) {
  const double bounds[] = {1e-20, 1e20};
  ExactSum sum({2, 1}, bounds, 3);
  for (int k = 0; k < 3; ++k) {
    sum.add(0, std::vector<float>{1e-20f, -5e-21f});
    sum.add(1, std::vector<float>{1e20f});
  }
  const auto totals = sum.total(single_process());
  EXPECT_FLOAT_EQ(totals[0][0], 3e-20f);  // a tiny segment keeps its precision beside a huge one
  EXPECT_FLOAT_EQ(totals[0][1], -1.5e-20f);
  EXPECT_FLOAT_EQ(totals[1][0], 3e20f);
  EXPECT_THROW(ExactSum({1}, std::vector<double>{INFINITY}, 1), InputError);
  const double zero = 0;
  ExactSum zeros({1}, std::span(&zero, 1), 1);
  zeros.add(0, std::vector<float>{0.0f});
  EXPECT_EQ(zeros.total(single_process())[0][0], 0.0f);
}

TEST(Comm, OneProcessGathersItselfAndRethrowsItsOwnErrors) {
  const Comm& one = single_process();
  EXPECT_EQ(one.rank(), 0);
  EXPECT_EQ(one.size(), 1);
  EXPECT_EQ(one.all_gather("abc"), std::vector<std::string>{"abc"});
  const double values[] = {1.5, -2};
  EXPECT_EQ(gather_doubles(one, values), (std::vector<double>{1.5, -2}));
  EXPECT_THROW(together(one, [] { throw InputError("bad"); }), InputError);
  EXPECT_THROW(together(one, [] { throw std::runtime_error("broken"); }), std::runtime_error);
  EXPECT_THROW(together(one, [] { throw std::out_of_range("its own type"); }), std::out_of_range);
  int ran = 0;
  together(one, [&] { ++ran; });
  EXPECT_EQ(ran, 1);
}

// Rank 0 of three whose other ranks' outcomes are given: what together() learns from a gather.
class ThreeRanks final : public Comm {
 public:
  explicit ThreeRanks(std::vector<std::string> others) : others_(std::move(others)) {}
  int rank() const override { return 0; }
  int size() const override { return 3; }
  std::vector<std::string> all_gather(std::string_view mine) const override {
    std::vector<std::string> all{std::string(mine)};
    all.insert(all.end(), others_.begin(), others_.end());
    return all;
  }
  std::vector<std::string> gather_to_root(std::string_view mine) const override { return all_gather(mine); }
  void sum(std::span<std::int64_t>) const override {}
  [[noreturn]] void abort(int) const override { throw std::logic_error("abort"); }

 private:
  std::vector<std::string> others_;
};

// The message every rank throws (RanksFailed) when `mine` is rank 0's outcome.
std::string failure(const ThreeRanks& comm, const std::function<void()>& mine, bool& input) {
  try {
    together(comm, mine);
  } catch (const RanksFailed& e) {
    input = e.input;
    return e.what();
  }
  return "";
}

TEST(Comm, TogetherNamesTheFirstFailingRankUnlessAllFailedAlike) {
  bool input = false;
  const auto ok = [] {};
  EXPECT_EQ(failure(ThreeRanks({"", ""}), ok, input), "");
  EXPECT_EQ(failure(ThreeRanks({"", "Edisk full"}), ok, input), "rank 2: disk full");
  EXPECT_FALSE(input);
  EXPECT_EQ(failure(ThreeRanks({"Ibad window", "Edisk full"}), ok, input), "rank 1: bad window");
  EXPECT_TRUE(input);
  // Rank 0's own failure comes first; the same error on every rank is said without a rank.
  EXPECT_EQ(failure(ThreeRanks({"", ""}), [] { throw InputError("no such file"); }, input), "rank 0: no such file");
  EXPECT_EQ(failure(ThreeRanks({"Ino such file", "Ino such file"}), [] { throw InputError("no such file"); }, input), "no such file");
  EXPECT_TRUE(input);
  // A failure every rank already knows of passes through without another gather.
  EXPECT_EQ(failure(ThreeRanks({"Ix", "Ix"}), [] { throw RanksFailed("known", false); }, input), "known");
  EXPECT_THROW(fail_on_every_rank(ThreeRanks({}), "diverged"), RanksFailed);
  EXPECT_THROW(fail_on_every_rank(single_process(), "diverged"), InputError);
}

TEST(Comm, DefaultThreadsIsAtLeastOne) { EXPECT_GE(default_threads(), 1); }

TEST(Comm, EachRankTakesItsOwnCoresOrItsShare) {
  EXPECT_EQ(threads_per_rank(16, 16, 1), 16);  // alone
  EXPECT_EQ(threads_per_rank(16, 16, 4), 4);   // four unbound ranks
  EXPECT_EQ(threads_per_rank(16, 4, 4), 4);    // four ranks bound to 4 cores each: all of their own
  EXPECT_EQ(threads_per_rank(16, 2, 4), 2);    // bound to fewer than its share
  EXPECT_EQ(threads_per_rank(16, 8, 4), 4);    // two ranks per 8-core socket
  EXPECT_EQ(threads_per_rank(2, 2, 4), 1);     // more ranks than cores
  EXPECT_EQ(threads_per_rank(8, 6, 1), 6);     // a Slurm job's 6 CPUs
}

}  // namespace
}  // namespace rltune
