// Tests on the real traces in ../shared/traces; they skip when that folder is absent (fresh clones).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "helpers.h"
#include "trace/reader.h"

namespace rltune {
namespace {

const std::string kSynthetic = std::string(RLTUNE_SHARED_TRACES) + "/rltune/synthetic_trace.csv";

TEST(SharedTraces, ReferenceSyntheticTraceOnHelios) {
  if (!std::filesystem::exists(kSynthetic)) GTEST_SKIP() << "no " << kSynthetic << " (../shared/traces is absent)";
  trace::ReadOptions options;
  options.vc_column = 18;  // the reference Helios loader reads the VC from column 18
  options.gpu_type_column = -1;
  const trace::Trace t = trace::read_trace(kSynthetic, options);
  ASSERT_EQ(t.jobs.size(), 960u);  // SPEC 1.4
  EXPECT_EQ(t.jobs.front().submit, 1201);
  EXPECT_EQ(t.jobs.back().submit, 259127);
  std::map<int, int> by_gpus;
  for (const auto& j : t.jobs) ++by_gpus[j.gpus];
  EXPECT_EQ(by_gpus[1], 441);
  EXPECT_EQ(by_gpus[16], 42);

  const auto helios = cluster::load_cluster("helios");
  for (const char* policy : {"fcfs", "sjf", "f1"}) {
    const auto out = testing::simulate(helios, t.jobs, testing::profile(policy));
    const auto s = metrics::summarize(out.run);
    EXPECT_EQ(s.jobs_total, 960u);
    EXPECT_EQ(s.jobs_rejected, 0u);  // VCs 0/1 have 48 and 32 GPUs: every request fits
    EXPECT_GT(s.gpu_utilization, 0.0);
    EXPECT_LE(s.gpu_utilization, 1.0);
  }
}

}  // namespace
}  // namespace rltune
