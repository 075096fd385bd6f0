#include <gtest/gtest.h>

#include <sstream>

#include "core/error.h"
#include "trace/reader.h"

namespace rltune::trace {
namespace {

Trace read(const std::string& text, ReadOptions options = {}) {
  std::istringstream in(text);
  return read_trace(in, "t.csv", options);
}

ReadOptions format(const std::string& name) {
  ReadOptions o;
  o.format = name;
  return o;
}

std::string error_of(const std::string& text, ReadOptions options = {}) {
  try {
    read(text, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// What rltune and SWF traces record of each job's wait (the reference multifactor reads it) survives a
// conversion to the canonical format; a trace without it gets no such column.
TEST(CanonicalReader, RecordedWaitsRoundTrip) {
  const Trace swf = read("; SWF\n1 0 10 3600 4 -1 -1 4 7200 -1 1 7 1 -1 2 -1 -1 -1\n2 60 0 -1 2 -1 -1 2 600 -1 5 8 1 -1 1 -1 -1 -1\n",
                         format("swf"));
  std::ostringstream text;
  write_canonical(text, swf.jobs);
  EXPECT_NE(text.str().find(",censored,recorded_wait\n"), std::string::npos) << text.str();
  const Trace back = read(text.str());
  ASSERT_EQ(back.jobs.size(), swf.jobs.size());
  for (std::size_t i = 0; i < back.jobs.size(); ++i) EXPECT_EQ(back.jobs[i].recorded_wait, swf.jobs[i].recorded_wait) << i;
  EXPECT_EQ(back.jobs[0].recorded_wait, 10);
  std::ostringstream plain;
  write_canonical(plain, read("job_id,submit_time,duration,num_gpus\na,0,10,1\n").jobs);
  EXPECT_EQ(plain.str().find("recorded_wait"), std::string::npos) << plain.str();
}

// Lines ending in CR alone read as one line: said so in every format, not "no jobs" or "91 columns".
TEST(Readers, CrOnlyLineEndingsAreNamedInEveryFormat) {
  for (const char* name : {"auto", "swf", "rltune", "canonical"})
    EXPECT_NE(error_of("; SWF\r1 0 10 3600 4 -1 -1 4 7200 -1 1 7 1 -1 2 -1 -1 -1\r", format(name)).find("ends its lines with CR only"),
              std::string::npos)
        << name;
}

// An optional column whose name differs only in case would be ignored: an error, in helios as in canonical.
TEST(HeliosReader, AColumnNamedInAnotherCaseIsAnError) {
  EXPECT_NE(error_of("job_id,gpu_num,submit_time,Duration\nj1,1,2020-04-01 00:00:00,60\n", format("helios"))
                .find("field 'Duration': would be ignored: the column is named 'duration'"),
            std::string::npos);
}

TEST(CanonicalReader, ReadsRequiredAndOptionalColumnsInAnyOrder) {
  const Trace t = read(
      "num_gpus,job_id,extra,submit_time,duration,gpu_type,vc,requested_time,num_cpus,memory_mib,user,status\n"
      "2,b,zzz,20,100,V100|P100,vc1,300,8,1024,alice,done\n"
      "1,a,zzz,10,50,,,,,,,\n");
  ASSERT_EQ(t.format, "canonical");
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].id, "a");  // sorted by submit time
  const JobSpec& b = t.jobs[1];
  EXPECT_EQ(b.submit, 20);
  EXPECT_EQ(b.duration, 100);
  EXPECT_EQ(b.gpus, 2);
  EXPECT_EQ(b.vc, "vc1");
  EXPECT_EQ(b.gpu_types, (std::vector<std::string>{"V100", "P100"}));
  EXPECT_EQ(b.requested_time, 300);
  EXPECT_EQ(b.cpus, 8);
  EXPECT_EQ(b.memory_mib, 1024);
  EXPECT_EQ(b.user, "alice");
  EXPECT_EQ(b.status, "done");
  EXPECT_EQ(t.jobs[0].requested_time, -1);
  EXPECT_TRUE(t.jobs[0].gpu_types.empty());
}

TEST(CanonicalReader, AcceptsAUtf8ByteOrderMark) {
  const Trace t = read("\xEF\xBB\xBFjob_id,submit_time,duration,num_gpus\na,1,1,1\n");
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].id, "a");
}

// A negative duration is the engine's to reject (DESIGN.md); rounding -0.4 to 0 would make it a valid job.
// What the readers of PAI, openb and SWF write reads back: a tiny demand on 1 GPU, one a rounding away
// from a whole number.
TEST(CanonicalReader, ADemandRoundedUpAsTheReadersRoundItReadsBack) {
  const Trace t = read("job_id,submit_time,duration,num_gpus,gpu_demand\na,1,1,1,1e-7\nb,1,1,1,1.0000004\nc,1,1,2,1.0000004\n"
                       "d,1,1,3,2.5\ne,1,1,0,0\n");
  EXPECT_EQ(t.jobs.size(), 5u);
}

TEST(CanonicalReader, ANegativeDurationStaysNegativeWhenRounded) {
  const Trace t = read("job_id,submit_time,duration,num_gpus\na,1,-0.4,1\nb,1,-0,1\nc,1,0.4,1\n");
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_LT(t.jobs[0].duration, 0);
  EXPECT_EQ(t.jobs[1].duration, 0);
  EXPECT_EQ(t.jobs[2].duration, 0);
}

// A byte-order mark is stepped over in every format: here an SWF file, detected and read with clean ids.
TEST(Readers, AByteOrderMarkIsNotPartOfAnyFormat) {
  const std::string row = "7 0 5 100 4 -1 -1 4 200 -1 1 3 -1 -1 2 -1 -1 -1\n";
  const Trace t = read("\xEF\xBB\xBF" + row);
  EXPECT_EQ(t.format, "swf");
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].id, "7");
  EXPECT_EQ(read("\xEF\xBB\xBF; a comment\n" + row).jobs.at(0).id, "7");
}

TEST(Readers, AFolderIsNotATrace) {
  try {
    read_trace(std::string("."), {});
    FAIL() << "a folder was read as a trace";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a folder, not a trace file"), std::string::npos) << e.what();
  }
}

TEST(CanonicalReader, KeepsTraceOrderForEqualSubmitTimes) {
  const Trace t = read("job_id,submit_time,duration,num_gpus\nz,5,1,1\ny,5,1,1\nx,1,1,1\n");
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.jobs[0].id, "x");
  EXPECT_EQ(t.jobs[1].id, "z");
  EXPECT_EQ(t.jobs[2].id, "y");
}

TEST(CanonicalReader, ErrorsNameFileLineFieldAndValue) {
  struct Case {
    std::string text;
    std::vector<std::string> expected_parts;
  };
  const std::string header = "job_id,submit_time,duration,num_gpus\n";
  const std::vector<Case> cases = {
      {header + "a,1,abc,1\n", {"t.csv:2", "duration", "'abc'", "not a number"}},
      {header + "a,1,1,1\nb,2,3,x\n", {"t.csv:3", "num_gpus", "'x'"}},
      {header + "a,1,1,1\na,2,3,1\n", {"t.csv:3", "job_id", "'a'", "duplicate", "line 2"}},
      {header + "a,-5,1,1\n", {"t.csv:2", "submit_time", "'-5'", ">= 0"}},
      {header + "a,-0.5,1,1\n", {"t.csv:2", "submit_time", "'-0.5'", ">= 0"}},  // the text, not its rounding (-1)
      {"job_id,submit_time,duration,num_gpus,gpu_demand\na,1,1,1,6.5\n", {"t.csv:2", "gpu_demand", "'6.5'", "round up to num_gpus 1"}},
      {"job_id,submit_time,duration,num_gpus,gpu_demand\na,1,1,8,0.25\n", {"t.csv:2", "gpu_demand", "'0.25'", "round up to num_gpus 8"}},
      {"job_id,submit_time,duration,num_gpus,gpu_demand\na,1,1,0,0.25\n", {"t.csv:2", "gpu_demand", "'0.25'", "round up to num_gpus 0"}},
      // -1 means unknown; -1.4 must not round into it, nor 1.5 CPUs into 2.
      {"job_id,submit_time,duration,num_gpus,num_cpus\na,1,1,1,-1.4\n", {"t.csv:2", "num_cpus", "'-1.4'", "-1 or empty: unknown"}},
      {"job_id,submit_time,duration,num_gpus,num_cpus\na,1,1,1,1.5\n", {"t.csv:2", "num_cpus", "'1.5'", "whole number of CPUs"}},
      {"job_id,submit_time,duration,num_gpus,memory_mib\na,1,1,1,-0.5\n", {"t.csv:2", "memory_mib", "'-0.5'", ">= 0"}},
      {"job_id,submit_time,duration,num_gpus,requested_time\na,1,1,1,-3\n", {"t.csv:2", "requested_time", "'-3'", ">= 0"}},
      {"job_id,submit_time,duration,num_gpus,gpu_demand\na,1,1,1,-7\n", {"t.csv:2", "gpu_demand", "'-7'", "between 0 and 1e6"}},
      // Every CSV written from the trace would break at a control character (rltune's own reader too).
      {"job_id,submit_time,duration,num_gpus,user\na,1,1,1,\"u\tx\"\n", {"t.csv:2", "user", "'u\\x09x'", "has a control character"}},
      {"job_id,submit_time,duration,num_gpus,gpu_type\na,1,1,1,V100|T\x7f\n", {"t.csv:2", "gpu_type", "control character"}},
      {header + ",1,1,1\n", {"t.csv:2", "job_id", "empty"}},
      {header + "a,1,1,-2\n", {"t.csv:2", "num_gpus"}},
      {header + "a,1,,2\n", {"t.csv:2", "duration", "empty"}},
      {"job_id,submit_time,num_gpus\na,1,1\n", {"t.csv:1", "duration", "header"}},
      {header, {"no jobs"}},
      {header + "a,9223372036854775807,10,1\n", {"t.csv:2", "submit_time", "out of range"}},
      {header + "a,1,99999999999999,1\n", {"t.csv:2", "duration", "out of range"}},
      {header + "a,1,1e300,1\n", {"t.csv:2", "duration", "'1e300'", "is out of range"}},
      {header + "a,1,10,2.5\n", {"t.csv:2", "num_gpus", "'2.5'", "whole number of GPUs"}},
      {header + "a,1,10,0.4\n", {"t.csv:2", "num_gpus", "'0.4'", "whole number of GPUs"}},
      {header + "a,1,1e999,1\n", {"t.csv:2", "duration", "is out of range"}},
      {header + "\"a,1,1,1\n", {"t.csv:2", "quote", "never closed"}},
      {header + "a,1,1,1,5\n", {"t.csv:2", "5 fields, more than the header row's 4"}},
      {"job_id,submit_time,duration,num_gpus,job_id\na,1,1,1,b\n", {"t.csv:1", "job_id", "appears twice in the header"}},
      // Ignored as an unknown column, VC would leave every job without one.
      {"job_id,submit_time,duration,num_gpus,VC\na,1,1,1,b\n", {"t.csv:1", "field 'VC'", "would be ignored: the column is named 'vc'"}},
      {"job_id,Submit_Time,duration,num_gpus\na,1,1,1\n", {"t.csv:1", "field 'Submit_Time'", "named 'submit_time'"}},
      // Auto-detection reads a header in other letter case as its format's, whose reader names the column.
      {"Job_ID,submit_time,duration,num_gpus\na,1,1,1\n", {"t.csv:1", "field 'Job_ID'", "named 'job_id'"}},
  };
  for (const auto& c : cases) {
    const std::string message = error_of(c.text);
    for (const auto& part : c.expected_parts) EXPECT_NE(message.find(part), std::string::npos) << message << " / " << part;
  }
}

// An ignored column may repeat: which copy holds it does not matter.
TEST(CanonicalReader, IgnoredColumnsMayRepeat) {
  const Trace t = read("job_id,submit_time,duration,num_gpus,note,note\na,1,1,1,x,y\n");
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].gpus, 1);
}

// Every reader keeps to the canonical reader's 1e6 GPUs, so that what convert writes reads back.
TEST(Readers, GpuCountsPastTheCanonicalLimitAreRefused) {
  ReadOptions swf = format("swf");
  swf.gpus_per_proc = 2;
  const std::string row = "1 0 5 100 600000 -1 -1 600000 200 -1 1 3 -1 -1 2 -1 -1 -1\n";
  const std::string message = error_of("; SWF\n" + row, swf);
  for (const char* part : {"t.csv:2", "num_gpus", "'1200000'", "out of range (at most 1e6 GPUs)"})
    EXPECT_NE(message.find(part), std::string::npos) << message << " / " << part;
  swf.gpus_per_proc = 1;
  EXPECT_EQ(read("; SWF\n" + row, swf).jobs.at(0).gpus, 600000);
}

TEST(CanonicalReader, SkipInvalidCountsRowsByReason) {
  ReadOptions options;
  options.skip_invalid = true;
  const Trace t = read("job_id,submit_time,duration,num_gpus\na,1,1,1\nb,x,1,1\nc,y,1,1\na,3,1,1\nd,4,1,2\n", options);
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.skipped.skipped, 3u);
  ASSERT_EQ(t.skipped.by_reason.size(), 2u);
  EXPECT_EQ(t.skipped.by_reason[0].second, 2u);  // two bad submit times
  EXPECT_NE(t.skipped.by_reason[1].first.find("duplicate"), std::string::npos);
  EXPECT_EQ(t.skipped.examples.size(), 3u);
  // Regression (found by the robustness test): dropping a duplicate must keep the other jobs intact.
  EXPECT_EQ(t.jobs[0].id, "a");
  EXPECT_EQ(t.jobs[1].id, "d");
  const Trace u = read("job_id,submit_time,duration,num_gpus\nb,1,1,1\nb,2,1,1\n", options);
  ASSERT_EQ(u.jobs.size(), 1u);
  EXPECT_EQ(u.jobs[0].id, "b");
}

TEST(CanonicalReader, WriterRoundTrips) {
  const Trace t = read(
      "job_id,submit_time,duration,num_gpus,vc,gpu_type,user,num_cpus,memory_mib,requested_time,status\n"
      "\"a,1\",0,10,1,v,T4|P100,u,4,100,20,ok\n"
      "b,5,10,2,,,,,,,\n");
  std::ostringstream out;
  write_canonical(out, t.jobs);
  const Trace again = read(out.str());
  std::ostringstream out2;
  write_canonical(out2, again.jobs);
  EXPECT_EQ(out.str(), out2.str());
  EXPECT_EQ(again.jobs[0].id, "a,1");
  EXPECT_EQ(again.jobs[0].gpu_types.size(), 2u);
}

const char* kRltuneRows =
    "; MaxProcs: 8\n"
    "deepspeech2-0_1,1201,0,25,8,-1,-1,-1,-1,-1,2,2,1,-1,0,-1,-1,-1,0\n"
    "\n"
    "cifar10-1_1,1312,0,34,8,-1,-1,4,60,512,2,4,2,-1,0,-1,-1,3,1\n"
    "bert-2_1,1432,7,-1,1,-1,-1,-1,-1,-1,2,7,2,-1,0,-1,-1,2,4,9\n";

TEST(RltuneReader, ReadsReferenceColumnsWithReadmeLayout) {
  const Trace t = read(kRltuneRows);
  ASSERT_EQ(t.format, "rltune");
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.jobs[0].id, "deepspeech2-0_1");
  EXPECT_EQ(t.jobs[0].submit, 1201);
  EXPECT_EQ(t.jobs[0].duration, 25);
  EXPECT_EQ(t.jobs[0].gpus, 8);
  EXPECT_EQ(t.jobs[0].vc, "");  // column 17 is -1
  EXPECT_EQ(t.jobs[0].gpu_types, std::vector<std::string>{"T4"});
  EXPECT_EQ(t.jobs[0].requested_time, -1);
  EXPECT_EQ(t.jobs[1].vc, "3");
  EXPECT_EQ(t.jobs[1].gpu_types, std::vector<std::string>{"MISC"});
  EXPECT_EQ(t.jobs[1].cpus, 4);
  EXPECT_EQ(t.jobs[1].requested_time, 60);  // kept, not overwritten by the runtime (B2)
  EXPECT_EQ(t.jobs[1].memory_mib, 512);
  EXPECT_EQ(t.jobs[2].duration, 10);  // runtime -1 becomes 10 s as in the reference
  EXPECT_EQ(t.jobs[2].gpu_types, std::vector<std::string>{"V100M32"});
  EXPECT_EQ(t.jobs[2].user, "7");
  EXPECT_EQ(t.jobs[0].recorded_wait, 0);  // column 2, for the published multifactor
  EXPECT_EQ(t.jobs[2].recorded_wait, 7);
}

TEST(RltuneReader, ColumnLayoutIsSelectable) {
  ReadOptions options;
  options.vc_column = 18;  // the reference Helios loader's layout
  options.gpu_type_column = -1;
  const Trace t = read(kRltuneRows, options);
  EXPECT_EQ(t.jobs[0].vc, "0");
  EXPECT_EQ(t.jobs[1].vc, "1");
  EXPECT_TRUE(t.jobs[1].gpu_types.empty());
  // Column 19 exists in one row only: read there. In a file of 19-column rows it would give every job
  // "no VC" silently.
  options.vc_column = 19;
  EXPECT_EQ(read(kRltuneRows, options).jobs[2].vc, "9");
  const std::string beyond = error_of("a,1,0,25,8,-1,-1,-1,-1,-1,2,2,1,-1,0,-1,-1,-1,0\n", options);
  EXPECT_NE(beyond.find("vc_column 19 is beyond every row, whose columns are numbered 0 to 18"), std::string::npos) << beyond;
}

TEST(RltuneReader, OneColumnCannotBeBothTheVcAndTheGpuType) {
  ReadOptions options;
  options.vc_column = 18;  // the GPU-type column's default: each value would be read as both
  const std::string both = error_of(kRltuneRows, options);
  EXPECT_NE(both.find("vc_column and gpu_type_column (--vc-column, --gpu-type-column) are both column 18"), std::string::npos) << both;
  options.gpu_type_column = -1;
  EXPECT_EQ(read(kRltuneRows, options).jobs.size(), 3u);
}

TEST(RltuneReader, RejectsBadRowsWithPosition) {
  EXPECT_NE(error_of("a,1,0,25,8,-1\n", format("rltune")).find("t.csv:1"), std::string::npos);
  EXPECT_NE(error_of("a,1,0,25,8,-1\n", format("rltune")).find("expected 19 or 20"), std::string::npos);
  const std::string bad_type = error_of("a,1,0,25,8,-1,-1,-1,-1,-1,2,2,1,-1,0,-1,-1,-1,7\n");
  EXPECT_NE(bad_type.find("gpu_type"), std::string::npos) << bad_type;
  EXPECT_NE(bad_type.find("'7'"), std::string::npos) << bad_type;
  const std::string bad_gpus = error_of("a,1,0,25,eight,-1,-1,-1,-1,-1,2,2,1,-1,0,-1,-1,-1,0\n", format("rltune"));
  EXPECT_NE(bad_gpus.find("num_gpus"), std::string::npos) << bad_gpus;
  // Lines ended by CR alone are one line: said so, not "a field appears twice in the header".
  const std::string cr_only = error_of("job_id,submit_time,duration,num_gpus\ra,1,10,2\rb,2,10,2\r", format("canonical"));
  EXPECT_NE(cr_only.find("CR only"), std::string::npos) << cr_only;
  // A CPU count past an int's range must not wrap into a small request (2^32 + 1 read as 1).
  const std::string bad_cpus = error_of("a,1,0,25,1,-1,-1,4294967297,-1,-1,2,2,1,-1,0,-1,-1,-1,0\n", format("rltune"));
  EXPECT_NE(bad_cpus.find("request_cpus"), std::string::npos) << bad_cpus;
  EXPECT_NE(bad_cpus.find("out of range"), std::string::npos) << bad_cpus;
}

// Decimals are tolerated in this format; a GPU count is rounded up with its fraction kept, as every
// reader keeps one (1.4 GPUs is 2 held, not 1), and -1 alone means none.
TEST(RltuneReader, AFractionalGpuCountIsRoundedUpAndKept) {
  const Trace t = read("a,1,0,25,0.5,-1,-1,-1,-1,-1,2,2,1,-1,0,-1,-1,-1,0\n"
                       "b,2,0,25,1.4,-1,-1,-1,-1,-1,2,2,1,-1,0,-1,-1,-1,0\n"
                       "c,3,0,25,2.0,-1,-1,-1,-1,-1,2,2,1,-1,0,-1,-1,-1,0\n"
                       "d,4,0,25,-1,-1,-1,-1,-1,-1,2,2,1,-1,0,-1,-1,-1,0\n",
                       format("rltune"));
  ASSERT_EQ(t.jobs.size(), 4u);
  EXPECT_EQ(t.jobs[0].gpus, 1);
  EXPECT_DOUBLE_EQ(t.jobs[0].gpu_demand, 0.5);
  EXPECT_EQ(t.jobs[1].gpus, 2);
  EXPECT_DOUBLE_EQ(t.jobs[1].gpu_demand, 1.4);
  EXPECT_EQ(t.jobs[2].gpus, 2);
  EXPECT_EQ(t.jobs[2].gpu_demand, -1);  // a whole number: no fraction to keep
  EXPECT_EQ(t.jobs[3].gpus, 0);
  const std::string negative = error_of("a,1,0,25,-0.5,-1,-1,-1,-1,-1,2,2,1,-1,0,-1,-1,-1,0\n", format("rltune"));
  EXPECT_NE(negative.find("field 'column 4 (num_gpus)': value '-0.5' is out of range"), std::string::npos) << negative;
}

TEST(HeliosReader, AFractionalGpuCountIsRoundedUpAndKept) {
  const Trace t = read(
      "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
      "a,u,v,1.4,4,1,COMPLETED,2020-04-01 00:00:00,,,600,0\n",
      format("helios"));
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].gpus, 2);
  EXPECT_DOUBLE_EQ(t.jobs[0].gpu_demand, 1.4);
}

TEST(HeliosReader, AnEndBeforeTheStartIsNamedAsSuch) {
  const std::string error = error_of(
      "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
      "a,u,v,1,4,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 01:00:00,2020-04-01 00:30:00,,0\n",
      format("helios"));
  EXPECT_NE(error.find("field 'end_time': value '2020-04-01 00:30:00' is before start_time (no duration given)"), std::string::npos) << error;
}

TEST(Readers, AutoDetectionAndUnknownFormat) {
  EXPECT_EQ(read("job_id,submit_time,duration,num_gpus\na,1,1,1\n").format, "canonical");
  EXPECT_EQ(read(kRltuneRows).format, "rltune");
  EXPECT_NE(error_of("hello world\n").find("cannot tell the trace format"), std::string::npos);
  const std::string unknown = error_of("x", format("parquet"));
  EXPECT_NE(unknown.find("unknown trace format 'parquet'"), std::string::npos);
  EXPECT_NE(unknown.find("canonical"), std::string::npos);
  EXPECT_THROW(read_trace("/nonexistent/trace.csv", {}), InputError);
}

}  // namespace
}  // namespace rltune::trace
