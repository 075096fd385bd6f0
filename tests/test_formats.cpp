// Readers of the published trace formats (helios, openb, swf, gavel), timestamps and GPU-type names, on
// hand-written fixtures with exact expected jobs; and on the real files in ../shared/traces when present.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/datetime.h"
#include "core/error.h"
#include "trace/gpu_types.h"
#include "helpers.h"
#include "trace/reader.h"

namespace rltune::trace {
namespace {

using testing::skipped;
using testing::TempFile;

const std::string kShared = RLTUNE_SHARED_TRACES;

Trace read(const std::string& text, const std::string& format, ReadOptions options = {}, const std::string& name = "t.csv") {
  std::istringstream in(text);
  options.format = format;
  return read_trace(in, name, options);
}

std::string error_of(const std::string& text, const std::string& format, ReadOptions options = {}) {
  try {
    read(text, format, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Datetime, ParsesCalendarTimesAsUtc) {
  EXPECT_EQ(parse_datetime("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(parse_datetime("2017-10-03 12:06:27"), 1507032387);
  EXPECT_EQ(parse_datetime("2020-02-29T23:59:59.25"), 1583020799);
  EXPECT_EQ(parse_datetime(" 2000-03-01 00:00:00\r"), 951868800);
  // A fraction rounds to the nearest second (half up), as the README says every time does.
  EXPECT_EQ(parse_datetime("2017-10-03 12:06:27.499"), 1507032387);
  EXPECT_EQ(parse_datetime("2017-10-03 12:06:27.5"), 1507032388);
  EXPECT_EQ(parse_datetime("2020-02-29T23:59:59.9"), 1583020800);  // into March 1st
  for (const char* bad : {"", "None", "2017-13-01 00:00:00", "2019-02-29 00:00:00", "2017-10-03 24:00:00",
                          "2017-10-03", "2017/10/03 12:06:27", "2017-10-03 12:06:27x", "99999-01-01 00:00:00",
                          "2017-10-03 12:06:27.", "2017-10-03 12:06:27.5x", "2017-10-03 12:06:27,5"})
    EXPECT_FALSE(parse_datetime(bad)) << bad;
}

TEST(GpuTypes, AliasesMapToOneName) {
  EXPECT_EQ(normalize_gpu_type("V100M16"), "V100");
  EXPECT_EQ(normalize_gpu_type("Tesla V100-SXM2-16GB"), "V100");
  EXPECT_EQ(normalize_gpu_type("v100m32"), "V100M32");
  EXPECT_EQ(normalize_gpu_type(" NVIDIA T4 "), "T4");
  EXPECT_EQ(normalize_gpu_type("K80"), "MISC");
  // The 40 GB and 80 GB A100s stay apart: a pool of one must not take jobs that asked for the other.
  EXPECT_EQ(normalize_gpu_type("A100-SXM4-40GB"), "A100");
  EXPECT_EQ(normalize_gpu_type("NVIDIA A100-SXM4-80GB"), "A100-80G");
  EXPECT_EQ(normalize_gpu_type("a100-80g"), "A100-80G");
  EXPECT_EQ(normalize_gpu_type("G2"), "G2");
  EXPECT_EQ(normalize_gpu_type("MyGPU"), "MyGPU");  // unknown names are kept
  // Readers apply the table and drop repeats: "V100M16|V100M32|V100M32" -> V100, V100M32.
  const Trace t = read("job_id,submit_time,duration,num_gpus,gpu_type\na,0,1,1,V100M16|V100M32|v100m32\n", "canonical");
  EXPECT_EQ(t.jobs[0].gpu_types, (std::vector<std::string>{"V100", "V100M32"}));
}

TEST(CanonicalReader, FractionalDemandAndCensoringRoundTrip) {
  const std::string text =
      "job_id,submit_time,duration,num_gpus,vc,gpu_type,user,num_cpus,memory_mib,requested_time,status,"
      "gpu_demand,censored\n"
      "p1,0,100,1,,T4|P100,,4,2048,,Running,0.46,1\n"
      "p2,5,10,2,v,,u,,,60,ok,,\n";
  const Trace t = read(text, "canonical");
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_DOUBLE_EQ(t.jobs[0].gpu_demand, 0.46);
  EXPECT_TRUE(t.jobs[0].censored);
  EXPECT_EQ(t.jobs[1].gpu_demand, -1);
  EXPECT_FALSE(t.jobs[1].censored);
  std::ostringstream out;
  write_canonical(out, t.jobs);
  EXPECT_EQ(out.str(), text);
  EXPECT_NE(error_of("job_id,submit_time,duration,num_gpus,censored\na,0,1,1,2\n", "canonical").find("censored"),
            std::string::npos);
}

TEST(HeliosReader, ReadsClusterLogRows) {
  const Trace t = read(
      "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
      "j2,u2,vcB,8,32,1,FAILED,2020-04-01 00:01:40,2020-04-01 00:02:00,2020-04-01 01:02:00,,20\n"
      "j1,u1,vcA,1,4,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:10,2020-04-01 00:10:10,600,10\n"
      "j3,u1,vcA,0,2,1,CANCELLED,2020-04-01 00:03:00,,,,\n",
      "auto");
  EXPECT_EQ(t.format, "helios");
  ASSERT_EQ(t.jobs.size(), 2u);  // j3 never started: no duration, skipped and counted
  const JobSpec& j1 = t.jobs[0];
  EXPECT_EQ(j1.id, "j1");
  EXPECT_EQ(j1.submit, 0);  // seconds since the earliest submit in the file
  EXPECT_EQ(j1.duration, 600);
  EXPECT_EQ(j1.gpus, 1);
  EXPECT_EQ(j1.cpus, 4);
  EXPECT_EQ(j1.vc, "vcA");
  EXPECT_EQ(j1.user, "u1");
  EXPECT_EQ(j1.status, "COMPLETED");
  EXPECT_EQ(t.jobs[1].submit, 100);
  EXPECT_EQ(t.jobs[1].duration, 3600);  // no duration: end - start
  EXPECT_EQ(t.skipped.skipped, 1u);
}

TEST(HeliosReader, JobsWithoutDurationAreSkippedAndCounted) {
  const Trace t = read(
      "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
      "a,u,v,1,1,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:00,2020-04-01 00:01:00,,0\n"
      "b,u,v,1,1,1,RUNNING,2020-04-01 00:00:00,2020-04-01 00:00:05,,,5\n"
      "c,u,v,1,1,1,CANCELLED,2020-04-01 00:00:00,,,,\n",
      "helios");
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].duration, 60);
  EXPECT_EQ(skipped(t, "no duration and no end_time"), 1u);
  EXPECT_EQ(skipped(t, "never started (no duration, no start_time)"), 1u);
  EXPECT_EQ(t.time_origin, 1585699200);  // 2020-04-01 00:00:00 UTC
}

TEST(HeliosReader, BadRowsNameLineAndField) {
  const std::string header = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n";
  const std::string bad_time = error_of(header + "j1,u,v,1,1,1,COMPLETED,yesterday,,,5,0\n", "helios");
  EXPECT_NE(bad_time.find("t.csv:2"), std::string::npos) << bad_time;
  EXPECT_NE(bad_time.find("submit_time"), std::string::npos) << bad_time;
  EXPECT_NE(bad_time.find("yesterday"), std::string::npos) << bad_time;
  EXPECT_NE(error_of(header + "j1,u,v,x,1,1,C,2020-01-01 00:00:00,,,5,0\n", "helios").find("gpu_num"), std::string::npos);
  EXPECT_NE(error_of(header + "j1,u,v,1,1,1,C,2020-01-01 00:00:00,,,-5,0\n", "helios").find("must be >= 0"),
            std::string::npos);
  EXPECT_NE(error_of("job_id,user,vc\n", "helios").find("gpu_num"), std::string::npos);
  EXPECT_NE(error_of("", "helios").find("empty"), std::string::npos);
  ReadOptions skip;
  skip.skip_invalid = true;
  const Trace t = read(header + "j1,u,v,1,1,1,C,2020-01-01 00:00:00,,,5,0\nj2,u,v,1,1,1,C,bad,,,5,0\n", "helios", skip);
  EXPECT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.skipped.skipped, 1u);
}

TEST(OpenbReader, ReadsPodsWithFractionsAlternativesAndCensoring) {
  const Trace t = read(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
      "pod-a,6000,12288,1,460,,LS,Running,100,5000,150\n"
      "pod-b,88000,327680,8,1000,V100M16|V100M32,Burstable,Succeeded,200,1200,250\n"
      "pod-c,4000,8192,0,0,,BE,Succeeded,300,400,300\n"
      "pod-d,4000,8192,1,1000,,BE,Pending,400,450,\n"
      "pod-e,2500,1024,1,1000,G2,BE,Failed,500,530,510\n",
      "auto");
  EXPECT_EQ(t.format, "openb");
  ASSERT_EQ(t.jobs.size(), 3u);
  const JobSpec& a = t.jobs[0];
  EXPECT_EQ(a.id, "pod-a");
  EXPECT_EQ(a.submit, 100);
  EXPECT_EQ(a.duration, 4850);  // deletion - scheduled
  EXPECT_EQ(a.gpus, 1);
  EXPECT_DOUBLE_EQ(a.gpu_demand, 0.46);
  EXPECT_TRUE(a.censored);
  EXPECT_EQ(a.cpus, 6);
  EXPECT_EQ(a.memory_mib, 12288);
  EXPECT_EQ(a.status, "Running");
  const JobSpec& b = t.jobs[1];
  EXPECT_EQ(b.gpus, 8);
  EXPECT_DOUBLE_EQ(b.gpu_demand, 8.0);
  EXPECT_EQ(b.gpu_types, (std::vector<std::string>{"V100", "V100M32"}));
  EXPECT_FALSE(b.censored);
  EXPECT_EQ(t.jobs[2].cpus, 3);  // 2500 milli-CPUs round up
  EXPECT_EQ(t.jobs[2].gpu_types, (std::vector<std::string>{"G2"}));
  EXPECT_EQ(skipped(t, "no GPU"), 1u);
  EXPECT_EQ(skipped(t, "never scheduled"), 1u);
  const std::string header =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";
  EXPECT_NE(error_of(header + "p,1,1,1,1000,,LS,Running,100,50,90\n", "openb").find("deletion_time"), std::string::npos);
  EXPECT_NE(error_of(header + "p,1,1,1,1001,,LS,Running,1,5,1\n", "openb").find("gpu_milli"), std::string::npos);
  EXPECT_NE(error_of(header + "p,1,1,1,1000,,LS,Running,1e30,5,1\n", "openb").find("creation_time"), std::string::npos);
}

TEST(SwfReader, ReadsStandardWorkloadFormat) {
  const std::string text =
      "; Version: 2.2\n"
      "; MaxProcs: 128\n"
      "1 0 10 3600 4 -1 -1 4 7200 -1 1 7 1 -1 2 -1 -1 -1\n"
      "2 60 0 -1 2 -1 -1 2 600 -1 5 8 1 -1 1 -1 -1 -1\n"
      "3 120 5 100 -1 -1 -1 3 -1 -1 0 -1 1 -1 -1 -1 -1 -1\n";
  ReadOptions options;
  options.gpus_per_proc = 0.5;
  const Trace t = read(text, "auto", options);
  EXPECT_EQ(t.format, "swf");
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].id, "1");
  EXPECT_EQ(t.jobs[0].duration, 3600);
  EXPECT_EQ(t.jobs[0].gpus, 2);  // 4 processors x 0.5
  EXPECT_EQ(t.jobs[0].requested_time, 7200);
  EXPECT_EQ(t.jobs[0].user, "7");
  EXPECT_EQ(t.jobs[0].vc, "2");
  EXPECT_EQ(t.jobs[0].status, "completed");
  EXPECT_EQ(t.jobs[1].gpus, 2);  // 3 requested processors x 0.5, rounded up
  EXPECT_EQ(t.jobs[1].gpu_demand, 1.5);  // the fraction kept, as PAI and openb keep theirs
  EXPECT_EQ(t.jobs[0].gpu_demand, -1);   // whole: none
  EXPECT_EQ(t.jobs[1].requested_time, -1);
  EXPECT_EQ(t.jobs[0].recorded_wait, 10);  // read as written, for the published multifactor
  EXPECT_EQ(t.jobs[1].recorded_wait, 5);
  EXPECT_EQ(t.jobs[1].status, "failed");
  EXPECT_EQ(skipped(t, "no run time"), 1u);
  EXPECT_NE(error_of("1 0 10 abc 4 -1 -1 4 7200 -1 1 7 1 -1 2 -1 -1 -1\n", "swf").find("run time"), std::string::npos);
  EXPECT_NE(error_of("1 0 10 3600 4\n", "swf").find("expected 18"), std::string::npos);
}

TEST(GavelReader, DrawsDurationsFromTheSourceByGpuCount) {
  const TempFile source("durations.csv", "duration_s,num_gpus\n100,1\n200,1\n8000,8\n3000,2\n");
  const std::string text = "A\tcmd\t-s\t1\t10\t0.000000\t1\nB\tcmd\t-s\t1\t10\t6.4\t8\nC\tcmd\t-s\t1\t10\t9\t5\n";
  ReadOptions options;
  options.duration_source = source.path.string();
  options.seed = 3;
  const Trace t = read(text, "auto", options, "/data/vc7.trace");
  EXPECT_EQ(t.format, "gavel");
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.jobs[0].id, "vc7-1");
  EXPECT_EQ(t.jobs[0].vc, "vc7");
  EXPECT_EQ(t.jobs[1].submit, 6);
  EXPECT_TRUE(t.jobs[0].duration == 100 || t.jobs[0].duration == 200);
  EXPECT_EQ(t.jobs[1].duration, 8000);  // only 8-GPU source job
  EXPECT_EQ(t.jobs[2].duration, 8000);  // 5 GPUs: 2 and 8 are equally near; the larger wins
  // Same seed and file, same durations; another seed or another VC file, another sequence.
  std::string many;
  for (int i = 0; i < 64; ++i) many += "A\tc\t-s\t1\t1\t" + std::to_string(i) + "\t1\n";
  const auto durations = [&](std::uint64_t seed, const std::string& file) {
    ReadOptions o = options;
    o.seed = seed;
    std::vector<Seconds> d;
    for (const auto& j : read(many, "gavel", o, file).jobs) d.push_back(j.duration);
    return d;
  };
  EXPECT_EQ(durations(3, "v.trace"), durations(3, "v.trace"));
  EXPECT_NE(durations(3, "v.trace"), durations(4, "v.trace"));
  EXPECT_NE(durations(3, "v.trace"), durations(3, "w.trace"));
  ReadOptions none;
  EXPECT_NE(error_of(text, "gavel", none).find("--duration-source"), std::string::npos);
  EXPECT_NE(error_of("A\tc\t-s\t1\t1\tsoon\t1\n", "gavel", options).find("arrival_time_s"), std::string::npos);
  // A column the source is read by, twice: which copy holds the runtimes would be a guess.
  for (const char* header : {"duration_s,num_gpus,duration_s", "duration_s,num_gpus,num_gpus"}) {
    const TempFile twice("twice.csv", std::string(header) + "\n100,1,999\n");
    ReadOptions o = options;
    o.duration_source = twice.path.string();
    EXPECT_NE(error_of(text, "gavel", o).find("appears twice in the header row"), std::string::npos) << header;
  }
}

TEST(Readers, ByteOrderMarkBeforeAnyHeaderIsDetected) {
  const Trace t = read("\xEF\xBB\xBFname,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
                       "deletion_time,scheduled_time\np,1000,1,1,1000,,LS,Succeeded,0,10,0\n",
                       "auto");
  EXPECT_EQ(t.format, "openb");
  ASSERT_EQ(t.jobs.size(), 1u);
}

TEST(Readers, CommentLinesBeforeTheHeader) {
  const Trace t = read("# exported by a script\njob_id,submit_time,duration,num_gpus\na,0,100,1\n", "auto");
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.format, "canonical");
}

TEST(Readers, CalendarFilesShareOneClock) {
  const std::string header = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n";
  const TempFile day1("day1.csv", header + "a,u,v,1,1,1,C,2020-04-01 00:00:00,,,60,0\n");
  const TempFile day2("day2.csv", header + "b,u,v,1,1,1,C,2020-04-02 00:00:10,,,60,0\n");
  const Trace t = read_traces({day2.path.string(), day1.path.string()}, ReadOptions{});
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].id, "a");
  EXPECT_EQ(t.jobs[0].submit, 0);
  EXPECT_EQ(t.jobs[1].submit, 86410);  // a day and ten seconds later, not both at 0
  EXPECT_EQ(t.time_origin, 1585699200);
}

TEST(Readers, SeveralFilesMergeAndKeepIdsUnique) {
  const TempFile a("a.csv", "job_id,submit_time,duration,num_gpus\nx,5,1,1\n");
  const TempFile b("b.csv", "job_id,submit_time,duration,num_gpus\ny,1,1,1\n");
  const TempFile c("c.csv", "job_id,submit_time,duration,num_gpus\nx,2,1,1\n");
  const Trace t = read_traces({a.path.string(), b.path.string()}, ReadOptions{});
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].id, "y");
  try {
    read_traces({a.path.string(), c.path.string()}, ReadOptions{});
    FAIL() << "duplicate ids across files must be an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("also a job of"), std::string::npos) << e.what();
  }
}

TEST(SharedTraces, OpenbPodLists) {
  for (const char* name : {"openb_pod_list_default.csv", "openb_pod_list_gpuspec33.csv"}) {
    const std::string path = kShared + "/alibaba/" + name;
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (../shared/traces is absent)";
    ReadOptions options;
    const Trace t = read_trace(path, options);
    EXPECT_EQ(t.format, "openb");
    // 8,152 pods: 897 never scheduled, 1,052 scheduled without a GPU, the rest kept.
    EXPECT_EQ(t.jobs.size() + t.skipped.skipped, 8152u);
    EXPECT_EQ(skipped(t, "never scheduled"), 897u);
    EXPECT_EQ(skipped(t, "no GPU"), 1052u);
    std::size_t censored = 0, typed = 0;
    for (const auto& j : t.jobs) {
      EXPECT_GE(j.duration, 0);
      EXPECT_GE(j.gpus, 1);
      EXPECT_GT(j.gpu_demand, 0);
      EXPECT_LE(j.gpu_demand, j.gpus);
      censored += j.censored;
      typed += !j.gpu_types.empty();
    }
    EXPECT_GT(censored, t.jobs.size() / 2);  // most pods were still running at the trace's end
    if (std::string(name) == "openb_pod_list_default.csv") EXPECT_EQ(typed, 0u);
    else EXPECT_GT(typed, t.jobs.size() / 4);
  }
}

TEST(SharedTraces, GavelPhillyTracesWithRealDurations) {
  const std::string dir = kShared + "/philly/gavel_vc_traces";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no " << dir << " (../shared/traces is absent)";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 13u);
  ReadOptions options;
  options.duration_source = kShared + "/philly/philly_job_distribution.csv";
  const Trace t = read_traces(files, options);
  ASSERT_EQ(t.jobs.size(), 11264u);
  std::map<int, std::size_t> by_gpus;
  for (const auto& j : t.jobs) {
    ++by_gpus[j.gpus];
    EXPECT_GE(j.duration, 3600);  // that source holds jobs of an hour or more
  }
  EXPECT_EQ(by_gpus[1], 7577u);
  EXPECT_EQ(by_gpus[8], 1360u);
  EXPECT_EQ(by_gpus[64], 1u);
  // Deterministic for a seed.
  const Trace again = read_traces(files, options);
  for (std::size_t i = 0; i < t.jobs.size(); ++i) ASSERT_EQ(t.jobs[i].duration, again.jobs[i].duration);
}

}  // namespace
}  // namespace rltune::trace
