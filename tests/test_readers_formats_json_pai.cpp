// Readers of the Microsoft Philly cluster_job_log (JSON, streamed) and the Alibaba PAI 2020 job + task
// tables, on hand-written fixtures (written from the schemas in traces/README.md) with exact expected jobs,
// skip counts by reason, and errors naming the file, the position and the field.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/datetime.h"
#include "core/error.h"
#include "helpers.h"
#include "trace/reader.h"

namespace rltune::trace {
namespace {

using testing::skipped;
using testing::TempFile;

Trace read(const std::string& text, const std::string& format, ReadOptions options = {},
           const std::string& name = "t.json") {
  std::istringstream in(text);
  options.format = format;
  return read_trace(in, name, options);
}

std::string error_of(const std::string& text, const std::string& format, ReadOptions options = {},
                     const std::string& name = "t.json") {
  try {
    read(text, format, options, name);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// Every part must occur in the message.
void expect_parts(const std::string& message, const std::vector<std::string>& parts) {
  for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message << "\n  lacks: " << part;
}

// ---------------------------------------------------------------------------------------------- Philly

// One attempt of a Philly job, as the trace writes it.
std::string attempt(const std::string& start, const std::string& end, const std::string& detail) {
  return "{\"start_time\": " + start + ", \"end_time\": " + end + ", \"detail\": " + detail + "}";
}

// A JSON list of the given items.
std::string list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

// A Philly job with the given submitted_time and attempts (JSON text).
std::string philly_job(const std::string& id, const std::string& submitted, const std::string& attempts) {
  return "{\"jobid\": \"" + id + "\", \"user\": \"u\", \"vc\": \"v\", \"status\": \"Pass\", \"submitted_time\": " +
         submitted + ", \"attempts\": " + attempts + "}";
}

const std::string kOneGpu = "[{\"ip\": \"m1\", \"gpus\": [\"gpu0\"]}]";
const std::string kGoodAttempts = list({attempt("\"2017-10-03 09:00:10\"", "\"2017-10-03 09:01:10\"", kOneGpu)});

// Strings are read as every CSV field is, without spaces at either end: the converted trace reads back
// the same jobs ("app_1" and "app_1 " were two jobs here and one, a duplicate, after convert).
TEST(PhillyReader, StringsAreTrimmedAsCsvFieldsAre) {
  const Trace t = read(list({philly_job(" a1 ", "\"2017-10-03 09:00:00\"", kGoodAttempts)}), "philly");
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].id, "a1");
  try {
    read(list({philly_job("a1", "\"2017-10-03 09:00:00\"", kGoodAttempts), philly_job("a1 ", "\"2017-10-03 09:00:00\"", kGoodAttempts)}),
         "philly");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("duplicate"), std::string::npos) << e.what();
  }
}

TEST(PhillyReader, ReadsJobsWithExactFields) {
  // Pretty-printed like the published file; key order differs between jobs; unknown keys are ignored.
  const std::string text = R"([
  {
    "status": "Pass",
    "vc": "vc1",
    "jobid": "application_1",
    "attempts": [
      {
        "start_time": "2017-10-03 10:00:00",
        "end_time": "2017-10-03 10:30:00",
        "detail": [{"ip": "m1", "gpus": ["gpu0"]}]
      },
      {
        "start_time": "2017-10-03 11:00:00",
        "end_time": "2017-10-03 12:00:00",
        "detail": [{"ip": "m2", "gpus": ["gpu0", "gpu1"]}, {"ip": "m3", "gpus": ["gpu0", "gpu1"]}]
      }
    ],
    "submitted_time": "2017-10-03 09:59:00",
    "user": "alice",
    "extra": {"nested": [1, {"x": null}], "flag": true}
  },
  {
    "jobid": "application_2",
    "user": null,
    "vc": "vc2",
    "status": "Killed",
    "submitted_time": "2017-10-03 09:00:00",
    "attempts": [
      {"start_time": "None", "end_time": null, "detail": []},
      {"start_time": "2017-10-03 09:10:00", "end_time": "2017-10-03 09:10:30",
       "detail": [{"ip": "m9", "gpus": ["gpu7"]}]}
    ]
  },
{"jobid":"application_3","user":"bob","vc":"vc1","status":"Failed","submitted_time":"2017-10-04 09:00:00","attempts":[{"start_time":"2017-10-04 09:00:05","end_time":"2017-10-04 09:00:05","detail":[{"ip":"m4","gpus":["gpu0","gpu1","gpu2","gpu3","gpu4","gpu5","gpu6","gpu7"]}]}]}
]
)";
  const Trace t = read(text, "auto");
  EXPECT_EQ(t.format, "philly");
  EXPECT_EQ(t.skipped.skipped, 0u);
  ASSERT_EQ(t.jobs.size(), 3u);

  const JobSpec& second = t.jobs[0];  // sorted by submit: the earliest submitted_time is application_2's
  EXPECT_EQ(second.id, "application_2");
  EXPECT_EQ(second.submit, 0);
  EXPECT_EQ(second.duration, 30);  // the first attempt never ran
  EXPECT_EQ(second.gpus, 1);
  EXPECT_EQ(second.user, "");  // null
  EXPECT_EQ(second.vc, "vc2");
  EXPECT_EQ(second.status, "Killed");
  EXPECT_EQ(second.source_line, 22);  // the line of its opening brace

  const JobSpec& first = t.jobs[1];
  EXPECT_EQ(first.id, "application_1");
  EXPECT_EQ(first.submit, 59 * 60);
  EXPECT_EQ(first.duration, 30 * 60 + 60 * 60);  // attempts only: the 30 min re-queue gap is waiting
  EXPECT_EQ(first.gpus, 4);                       // the last attempt: 2 machines x 2 GPUs
  EXPECT_EQ(first.vc, "vc1");
  EXPECT_EQ(first.user, "alice");
  EXPECT_EQ(first.status, "Pass");
  EXPECT_EQ(first.source_line, 2);
  EXPECT_TRUE(first.gpu_types.empty());
  EXPECT_EQ(first.cpus, -1);
  EXPECT_EQ(first.memory_mib, -1);
  EXPECT_EQ(first.requested_time, -1);
  EXPECT_EQ(first.gpu_demand, -1);
  EXPECT_FALSE(first.censored);

  const JobSpec& third = t.jobs[2];
  EXPECT_EQ(third.id, "application_3");
  EXPECT_EQ(third.submit, 86400);
  EXPECT_EQ(third.duration, 0);
  EXPECT_EQ(third.gpus, 8);
  EXPECT_EQ(third.user, "bob");
  EXPECT_EQ(third.status, "Failed");
  EXPECT_EQ(third.source_line, 34);
}

TEST(PhillyReader, SkipsJobsWithoutUsableTimesByReason) {
  const std::string when = "\"2017-10-03 09:00:00\"";
  const std::string start = "\"2017-10-03 09:00:10\"", end = "\"2017-10-03 09:01:10\"";
  const std::vector<std::string> jobs = {
      philly_job("s1", "null", kGoodAttempts),
      philly_job("s2", "\"None\"", kGoodAttempts),
      philly_job("s3", when, "[]"),
      philly_job("s4", when, "null"),
      philly_job("s5", when, list({attempt(start, "null", kOneGpu)})),
      philly_job("s6", when, list({attempt(start, end, kOneGpu), attempt(start, "\"None\"", kOneGpu)})),
      philly_job("s7", when, list({attempt("\"None\"", end, kOneGpu)})),
      philly_job("s8", when, list({attempt(start, end, "[]")})),
      philly_job("s9", when, list({attempt(start, end, "[{\"ip\": \"m1\", \"gpus\": []}]")})),
      philly_job("s10", when, list({attempt(start, end, "null")})),
      philly_job("s11", when, list({attempt(start, end, "[{\"ip\": \"m1\", \"gpus\": null}]")})),
      philly_job("kept", "\"2017-10-03 09:00:05\"", kGoodAttempts),
  };
  std::string text = "[\n";
  for (std::size_t i = 0; i < jobs.size(); ++i) text += jobs[i] + (i + 1 < jobs.size() ? ",\n" : "\n");
  text += "]\n";
  const Trace t = read(text, "philly");
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].id, "kept");
  EXPECT_EQ(t.jobs[0].submit, 0);  // the earliest of the jobs kept
  EXPECT_EQ(t.jobs[0].duration, 60);
  EXPECT_EQ(t.skipped.skipped, 11u);
  EXPECT_EQ(skipped(t, "no submitted_time"), 2u);
  EXPECT_EQ(skipped(t, "no attempts"), 2u);
  EXPECT_EQ(skipped(t, "last attempt has no end_time (still running)"), 2u);
  EXPECT_EQ(skipped(t, "last attempt has no start_time"), 1u);
  EXPECT_EQ(skipped(t, "no GPUs in the last attempt"), 4u);
  ASSERT_FALSE(t.skipped.examples.empty());
  EXPECT_EQ(t.skipped.examples[0], "t.json:2: no submitted_time");
}

TEST(PhillyReader, ErrorsNameFilePositionAndField) {
  struct Case {
    std::string text;
    std::vector<std::string> parts;
  };
  const std::string when = "\"2017-10-03 09:00:00\"";
  // The job on line 2, its attempts on line 3.
  const auto one_job = [&](const std::string& submitted, const std::string& attempts, const std::string& id = "\"a\"") {
    return "[\n{\"jobid\": " + id + ", \"submitted_time\": " + submitted + ",\n \"attempts\": " + attempts + "}\n]\n";
  };
  const std::string start = "\"2017-10-03 09:00:10\"", end = "\"2017-10-03 09:01:10\"";
  const std::string truncated = "[\n{\"jobid\": \"a\",\n \"attempts\": [";  // ends on line 3
  const std::vector<Case> cases = {
      // Invalid JSON: always the file, the line and the byte.
      {"", {"t.json:1:", "invalid JSON at byte 1", "unexpected end of input"}},
      {truncated, {"t.json:3:", "invalid JSON at byte " + std::to_string(truncated.size() + 1), "end of input"}},
      {std::string("[\n") + philly_job("a", when, kGoodAttempts) + "\n" + philly_job("b", when, kGoodAttempts) + "]",
       {"t.json:3:", "invalid JSON at byte", "expected ']'"}},
      {"[\n{\"jobid\": \"a\", \"user\": 'x'}]", {"t.json:2:", "invalid JSON at byte 26", "column 24"}},
      {"\"just a string\"", {"t.json:1:", "must be a JSON array of Philly jobs"}},
      // Wrong JSON types.
      {one_job(when, kGoodAttempts, "42"),
       {"t.json:2:", "field 'jobid'", "value '42'", "must be a string", "job 1 of the array", "near byte 15"}},
      {one_job("1507021200", kGoodAttempts), {"t.json:2:", "field 'submitted_time'", "value '1507021200'", "date"}},
      {one_job("{\"t\": 1}", kGoodAttempts), {"t.json:2:", "field 'submitted_time'", "value '{...}'"}},
      {one_job(when, "\"none\""), {"t.json:3:", "field 'attempts'", "value 'none'", "must be a list of attempts"}},
      {one_job(when, list({attempt(start, end, "[{\"ip\": \"m\", \"gpus\": [\"gpu0\", 1]}]")})),
       {"t.json:3:", "field 'attempts[0].detail[0].gpus[1]'", "value '1'", "must be a GPU id string"}},
      // A repeated key (nlohmann keeps the last, other readers the first) and a GPU listed twice.
      {one_job(when, kGoodAttempts, "\"a\", \"jobid\": \"b\""), {"t.json:2:", "field 'jobid'", "appears twice in one object"}},
      {one_job(when, list({attempt(start, end, "[{\"ip\": \"m\", \"gpus\": [\"gpu0\", \"gpu0\"]}]")})),
       {"t.json:3:", "field 'attempts[0].detail[0].gpus[1]'", "value 'gpu0'", "names a GPU twice"}},
      {one_job(when, list({attempt(start, end, "[{\"ip\": \"m\", \"gpus\": [\"gpu0\"]}, {\"gpus\": [\"gpu1\", \"gpu0\"], \"ip\": \"m\"}]")})),
       {"t.json:3:", "field 'attempts[0].detail[1].gpus[1]'", "value 'gpu0'", "names a GPU of machine m that an earlier detail entry names"}},
      {one_job(when, list({attempt(start, end, kOneGpu), attempt("7", end, kOneGpu)})),
       {"t.json:3:", "field 'attempts[1].start_time'", "value '7'"}},
      {one_job(when, list({attempt(start, end, "{\"ip\": \"m\"}")})),
       {"t.json:3:", "field 'attempts[0].detail'", "value '{...}'", "must be a list"}},
      {"[\n 1, " + philly_job("a", when, kGoodAttempts) + "]", {"t.json:2:", "field 'job'", "must be a job object"}},
      // Bad dates, huge dates, negative durations.
      {one_job("\"2017-13-03 09:00:00\"", kGoodAttempts),
       {"t.json:2:", "field 'submitted_time'", "'2017-13-03 09:00:00'", "is not a date"}},
      {one_job(when, list({attempt("\"99999-01-01 00:00:00\"", end, kOneGpu)})),
       {"t.json:3:", "field 'attempts[0].start_time'", "'99999-01-01 00:00:00'", "is not a date"}},
      {one_job(when, list({attempt(end, start, kOneGpu)})),
       {"t.json:3:", "field 'attempts[0].end_time'", "'2017-10-03 09:00:10'", "is before",
        "start_time '2017-10-03 09:01:10'"}},
  };
  for (const auto& c : cases) expect_parts(error_of(c.text, "philly"), c.parts);
  // The same GPU id on two machines, or a detail entry without an ip, is two GPUs.
  const Trace two = read(one_job(when, list({attempt(start, end, "[{\"ip\": \"m\", \"gpus\": [\"gpu0\"]}, {\"ip\": \"n\", \"gpus\": [\"gpu0\"]}, "
                                                                 "{\"gpus\": [\"gpu0\"]}, {\"gpus\": [\"gpu0\"]}]")})),
                         "philly");
  ASSERT_EQ(two.jobs.size(), 1u);
  EXPECT_EQ(two.jobs[0].gpus, 4);
  // Without --format, an empty file has no format to detect.
  expect_parts(error_of("", "auto"), {"t.json", "no jobs"});
  expect_parts(error_of("[]", "philly"), {"t.json", "no jobs"});
}

TEST(PhillyReader, HugeTimesStayExactOrAreRejectedWithoutOverflow) {
  const std::string first = "\"0001-01-01 00:00:00\"", last = "\"9999-12-31 23:59:59\"";
  const Seconds span = *parse_datetime("9999-12-31 23:59:59") - *parse_datetime("0001-01-01 00:00:00");
  // One attempt over ten millennia: about 3.2e11 s, within range and exact.
  const Trace t =
      read(list({philly_job("a", first, list({attempt(first, last, kOneGpu)})), philly_job("b", last, kGoodAttempts)}),
           "philly");
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].duration, span);
  EXPECT_EQ(t.jobs[1].submit, span);
  // Four such attempts sum beyond 1e12 s: rejected by the sink, not wrapped around.
  const std::string four = attempt(first, last, kOneGpu);
  expect_parts(error_of(list({philly_job("a", first, list({four, four, four, four}))}),
                        "philly"),
               {"t.json:1:", "field 'duration'", "out of range"});
}

TEST(PhillyReader, SkipInvalidCountsBadJobsButNotBadJson) {
  ReadOptions options;
  options.skip_invalid = true;
  const std::string when = "\"2017-10-03 09:00:00\"";
  const std::string text = std::string("[\n") + philly_job("good", when, kGoodAttempts) + ",\n" +
                           philly_job("bad-date", "\"yesterday\"", kGoodAttempts) + ",\n" +
                           philly_job("bad-date-2", "\"tomorrow\"", kGoodAttempts) + ",\n" +
                           philly_job("bad-type", when, list({attempt("5", "6", kOneGpu)})) + ",\n" +
                           philly_job("negative", when,
                                      list({attempt("\"2017-10-03 09:00:10\"", "\"2017-10-03 09:00:00\"", kOneGpu)})) +
                           ",\n" + philly_job("no-time", "null", kGoodAttempts) + "\n]\n";
  const Trace t = read(text, "philly", options);
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].id, "good");
  EXPECT_EQ(t.skipped.skipped, 5u);
  EXPECT_EQ(skipped(t, "submitted_time: is not a date and time (YYYY-MM-DD HH:MM:SS)"), 2u);
  EXPECT_EQ(skipped(t, "attempts[].start_time: must be a date string \"YYYY-MM-DD HH:MM:SS\", null or \"None\""), 1u);
  EXPECT_EQ(skipped(t, "attempts[].end_time: is before the attempt's start_time"), 1u);
  EXPECT_EQ(skipped(t, "no submitted_time"), 1u);
  expect_parts(t.skipped.examples[0], {"t.json:3:", "'yesterday'"});
  // Broken syntax stays an error: nothing after it can be trusted.
  expect_parts(error_of(text.substr(0, text.size() - 3), "philly", options), {"t.json:7:", "invalid JSON at byte"});
}

TEST(PhillyReader, AutoDetection) {
  const std::string job = philly_job("a", "\"2017-10-03 09:00:00\"", kGoodAttempts);
  EXPECT_EQ(read("\n  \n[" + job + "]", "auto").format, "philly");
  EXPECT_EQ(read("[\n" + job + "\n]", "auto").format, "philly");
  EXPECT_EQ(read("\xEF\xBB\xBF[" + job + "]", "auto").format, "philly");
  const Trace single = read(job, "auto");  // one job object
  EXPECT_EQ(single.format, "philly");
  ASSERT_EQ(single.jobs.size(), 1u);
  EXPECT_EQ(single.jobs[0].id, "a");
  EXPECT_EQ(read("job_id,submit_time,duration,num_gpus\na,1,1,1\n", "auto").format, "canonical");
}

// "\"2017-10-DD HH:MM:SS\"" as a JSON string.
std::string fmt_time(int day, int hour, int minute, int second = 0) {
  char text[32];
  std::snprintf(text, sizeof text, "\"2017-10-%02d %02d:%02d:%02d\"", day, hour, minute, second);
  return text;
}

TEST(PhillyReader, StreamsTwentyThousandJobs) {
  constexpr int kJobs = 20'000;
  std::string text = "[";
  for (int i = 0; i < kJobs; ++i) {
    const int minute = i % 60, hour = (i / 60) % 24, day = 1 + i / 1440;
    const std::string when = fmt_time(day, hour, minute);
    text += i ? ",\n" : "\n";
    text += philly_job("job" + std::to_string(i), when,
                                            list({attempt(when, fmt_time(day, hour, minute, 30), kOneGpu)}));
  }
  text += "\n]\n";
  const Trace t = read(text, "philly");
  ASSERT_EQ(t.jobs.size(), static_cast<std::size_t>(kJobs));
  EXPECT_EQ(t.jobs.front().id, "job0");
  EXPECT_EQ(t.jobs.back().id, "job19999");
  EXPECT_EQ(t.jobs.back().submit, 19'999 * 60);
  EXPECT_EQ(t.jobs.back().source_line, kJobs + 1);
  for (const auto& j : t.jobs) ASSERT_EQ(j.duration, 30);
}

// ------------------------------------------------------------------------------------------------- PAI

// Reads a job table (named jobs.csv in messages) with the given task table.
Trace read_pai(const std::string& jobs, const TempFile& tasks, ReadOptions options = {},
               const std::string& format = "pai") {
  options.pai_task_table = tasks.path.string();
  return read(jobs, format, options, "jobs.csv");
}

std::string pai_error(const std::string& jobs, const std::string& tasks, ReadOptions options = {}) {
  const TempFile file("tasks.csv", tasks);
  options.pai_task_table = file.path.string();
  return error_of(jobs, "pai", options, "jobs.csv");
}

TEST(PaiReader, JoinsJobsAndTasksWithExactFields) {
  const TempFile tasks("tasks.csv",
                       "j1,ps,1,Terminated,1010,4000,600,2,,\n"
                       "j1,worker,4,Terminated,1020,4100,800,29.5,50,V100\n"
                       "j1,evaluator,1,Terminated,1050,4200,100,1.5,100,V100M32\n"
                       "j2,worker,3,Terminated,1150,1900,400,10,33.3333334,T4\n"
                       "j3,worker,1,Terminated,1300,1400,50,0.25,25,T4\n"
                       "j3,worker2,1,Terminated,1350.0,1500.0,,,25,P100\n"
                       "j4,tensorflow,2,Terminated,3100,3200,0,0,100.000005,MISC\n");
  const Trace t = read_pai(
      "j1,inst1,alice,Terminated,1000,5000\n"
      "j2,,bob,Failed,1100.0,2000\n"
      "j3,inst3,carol,Terminated,1200,9000\n"
      "j4,inst4,dave,Terminated,3000,4000\n",
      tasks);
  EXPECT_EQ(t.format, "pai");
  EXPECT_EQ(t.skipped.skipped, 0u);
  ASSERT_EQ(t.jobs.size(), 4u);

  const JobSpec& j1 = t.jobs[0];
  EXPECT_EQ(j1.id, "inst1");
  EXPECT_EQ(j1.submit, 0);         // the earliest job start_time is subtracted
  EXPECT_EQ(j1.duration, 3190);    // earliest task start 1010 to latest task end 4200
  EXPECT_EQ(j1.gpus, 3);           // 4 x 50% + 1 x 100%; the ps asks for none
  EXPECT_DOUBLE_EQ(j1.gpu_demand, 3.0);
  EXPECT_EQ(j1.gpu_types, (std::vector<std::string>{"V100", "V100M32"}));  // not the CPU-only ps's
  EXPECT_EQ(j1.cpus, 39);                                                  // (600 + 4 x 800 + 100) / 100
  EXPECT_EQ(j1.memory_mib, 124416);                                        // (2 + 4 x 29.5 + 1.5) GB
  EXPECT_EQ(j1.user, "alice");
  EXPECT_EQ(j1.status, "Terminated");
  EXPECT_EQ(j1.vc, "");
  EXPECT_EQ(j1.requested_time, -1);
  EXPECT_EQ(j1.source_line, 1);

  const JobSpec& j2 = t.jobs[1];
  EXPECT_EQ(j2.id, "j2");  // no inst_id: the job name
  EXPECT_EQ(j2.submit, 100);
  EXPECT_EQ(j2.duration, 750);
  EXPECT_EQ(j2.gpus, 1);  // 3 x 33.3333334% = 1.000000002 GPUs: float noise, not a second GPU
  EXPECT_DOUBLE_EQ(j2.gpu_demand, 3 * 33.3333334 / 100);
  EXPECT_EQ(j2.gpu_types, std::vector<std::string>{"T4"});
  EXPECT_EQ(j2.cpus, 12);
  EXPECT_EQ(j2.memory_mib, 30720);
  EXPECT_EQ(j2.user, "bob");
  EXPECT_EQ(j2.status, "Failed");

  const JobSpec& j3 = t.jobs[2];
  EXPECT_EQ(j3.id, "inst3");
  EXPECT_EQ(j3.submit, 200);
  EXPECT_EQ(j3.duration, 200);
  EXPECT_EQ(j3.gpus, 1);  // half a GPU
  EXPECT_DOUBLE_EQ(j3.gpu_demand, 0.5);
  EXPECT_EQ(j3.gpu_types, (std::vector<std::string>{"T4", "P100"}));
  EXPECT_EQ(j3.cpus, 1);           // 0.5 cores round up; the task without plan_cpu adds nothing
  EXPECT_EQ(j3.memory_mib, 256);   // 0.25 GB

  const JobSpec& j4 = t.jobs[3];
  EXPECT_EQ(j4.submit, 2000);
  EXPECT_EQ(j4.duration, 100);
  EXPECT_EQ(j4.gpus, 2);  // 2.0000001 stays 2
  EXPECT_DOUBLE_EQ(j4.gpu_demand, 2 * 100.000005 / 100);
  EXPECT_EQ(j4.gpu_types, std::vector<std::string>{"MISC"});
  EXPECT_EQ(j4.cpus, 0);
  EXPECT_EQ(j4.memory_mib, 0);

  // No task states plan_cpu or plan_mem: unspecified, not zero.
  const TempFile bare("tasks.csv", "j1,worker,1,Terminated,1,2,,,100,\n");
  const Trace b = read_pai("j1,i1,u,Terminated,0,2\n", bare);
  ASSERT_EQ(b.jobs.size(), 1u);
  EXPECT_EQ(b.jobs[0].cpus, -1);
  EXPECT_EQ(b.jobs[0].memory_mib, -1);
  EXPECT_TRUE(b.jobs[0].gpu_types.empty());
}

TEST(PaiReader, SkipsJobsByReason) {
  const TempFile tasks("tasks.csv",
                       "k1,worker,1,Terminated,10,20,100,1,100,T4\n"
                       "n3,ps,1,Terminated,12,20,100,1,,\n"
                       "n4,worker,1,Terminated,13,20,100,1,0,T4\n"
                       "n5,worker,1,Running,14,,100,1,100,T4\n"
                       "n6,worker,1,Waiting,,,100,1,100,T4\n"
                       "n7,worker,1,Terminated,16,20,100,1,100,T4\n"
                       "n7,worker2,1,Running,17,,100,1,100,T4\n"
                       "orphan,worker,1,Terminated,1,2,100,1,100,T4\n");
  const Trace t = read_pai(
      "k1,ik1,u,Terminated,10,20\n"
      "n1,in1,u,Waiting,,\n"
      "n2,in2,u,Terminated,11,20\n"
      "n3,in3,u,Terminated,12,20\n"
      "n4,in4,u,Terminated,13,20\n"
      "n5,in5,u,Running,14,\n"
      "n6,in6,u,Waiting,15,\n"
      "n7,in7,u,Running,16,\n",
      tasks);
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].id, "ik1");
  EXPECT_EQ(t.skipped.skipped, 7u);
  EXPECT_EQ(skipped(t, "no start_time"), 1u);
  EXPECT_EQ(skipped(t, "no tasks in the task table"), 1u);
  EXPECT_EQ(skipped(t, "no GPU"), 2u);
  EXPECT_EQ(skipped(t, "a task has no start_time or end_time (running or waiting)"), 3u);
  EXPECT_EQ(t.skipped.examples[0], "jobs.csv:2: no start_time");
}

TEST(PaiReader, ErrorsNameTheTableLineAndField) {
  const std::string job = "j1,i1,u,Terminated,100,200\n";
  const std::string task = "j1,worker,1,Terminated,100,200,100,1,100,T4\n";
  struct Case {
    std::string jobs, tasks;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      // Job table.
      {"j1,i1,u,Terminated,noon,200\n", task, {"jobs.csv:1:", "field 'start_time'", "value 'noon'", "not a number"}},
      {job + "j2,i2,u,Terminated,100,later\n", task, {"jobs.csv:2:", "field 'end_time'", "value 'later'"}},
      {"j1,i1,u,Terminated,100\n", task, {"jobs.csv:1:", "has 5 columns, expected 6"}},
      {",i1,u,Terminated,100,200\n", task, {"jobs.csv:1:", "field 'job_name'", "is empty"}},
      {job + "j1,i1,u,Terminated,100,200\n", task, {"jobs.csv:2:", "job_id", "'i1'", "duplicate"}},
      // Task table.
      {job, "j1,worker,1,Terminated,100,200,100,1,lots,T4\n",
       {"tasks.csv:1:", "field 'plan_gpu'", "value 'lots'", "not a number"}},
      {job, task + "j1,ps,one,Terminated,100,200,100,1,,\n", {"tasks.csv:2:", "field 'inst_num'", "value 'one'"}},
      {job, "j1,worker,1,Terminated,abc,200,100,1,100,T4\n", {"tasks.csv:1:", "field 'start_time'", "value 'abc'"}},
      {job, "j1,worker,1,Terminated,100,200,100,1,100\n", {"tasks.csv:1:", "has 9 columns, expected 10"}},
      // The tables have no header row: the message must not speak of one.
      {job, "j1,worker,1,Terminated,100,200,100,1,100,T4,x\n", {"tasks.csv:1:", "has 11 fields, more than the format's 10 columns"}},
      {job, "j1,worker,1,Terminated,100,200,100,1,-50,T4\n", {"tasks.csv:1:", "field 'plan_gpu'", "must be >= 0"}},
      {job, "j1,worker,-2,Terminated,100,200,100,1,50,T4\n", {"tasks.csv:1:", "field 'inst_num'", "'-2'"}},
      {job, "j1,worker,1,Terminated,300,200,100,1,100,T4\n",
       {"tasks.csv:1:", "field 'end_time'", "value '200'", "is before start_time"}},
      // Huge values: rejected, never overflowing.
      {job, "j1,worker,1,Terminated,100,200,100,1,1e30,T4\n",
       {"tasks.csv:1:", "field 'plan_gpu'", "value '1e30'", "more than 1e6 GPUs"}},
      {job, "j1,worker,1e30,Terminated,100,200,100,1,100,T4\n",
       {"tasks.csv:1:", "field 'inst_num'", "between 0 and 1e6"}},
      {job, "j1,worker,1,Terminated,100,200,1e30,1,100,T4\n", {"tasks.csv:1:", "field 'plan_cpu'", "1e6 CPUs"}},
      {job, "j1,worker,1,Terminated,100,200,100,1e30,100,T4\n", {"tasks.csv:1:", "field 'plan_mem'", "1e12 MiB"}},
      {job, "j1,a,1000000,Terminated,100,200,100,1,100,T4\nj1,b,1000000,Terminated,100,200,100,1,100,T4\n",
       {"jobs.csv:1:", "field 'gpu_demand'", "value '2000000'", "beyond 1e6 GPUs"}},
      {job, "j1,worker,1,Terminated,100,1e30,100,1,100,T4\n", {"tasks.csv:1:", "field 'end_time'", "'1e30'"}},
      {"j0,i0,u,Terminated,0,1\nj1,i1,u,Terminated,900000000000000,900000000000001\n",
       "j0,w,1,Terminated,0,1,100,1,100,T4\nj1,w,1,Terminated,900000000000000,900000000000001,100,1,100,T4\n",
       {"jobs.csv:2:", "field 'submit_time'", "out of range"}},
      {job, "j1,worker,1,Terminated,0,900000000000000,100,1,100,T4\n",
       {"jobs.csv:1:", "field 'duration'", "out of range"}},
      // Files.
      {job, "", {"tasks.csv", "the PAI task table is empty"}},
      {"", task, {"jobs.csv", "no jobs"}},
  };
  for (const auto& c : cases) expect_parts(pai_error(c.jobs, c.tasks), c.parts);
  expect_parts(error_of(job, "pai", {}, "jobs.csv"), {"jobs.csv", "--pai-task-table"});
  ReadOptions missing;
  missing.pai_task_table = "/nonexistent/pai_task_table.csv";
  expect_parts(error_of(job, "pai", missing, "jobs.csv"), {"/nonexistent/pai_task_table.csv", "cannot open"});
}

TEST(PaiReader, SkipInvalidCountsBadRowsOfBothTables) {
  const TempFile tasks("tasks.csv",
                       "good,worker,1,Terminated,10,20,100,1,100,T4\n"
                       "bad-task,worker,1,Terminated,10,20,100,1,100,T4\n"
                       "bad-task,ps,1,Terminated,10,20,100,1,x,\n"
                       "bad-time,worker,1,Terminated,10,20,100,1,100,T4\n");
  ReadOptions options;
  options.skip_invalid = true;
  const Trace t = read_pai(
      "good,i1,u,Terminated,10,20\n"
      "bad-task,i2,u,Terminated,10,20\n"
      "bad-time,i3,u,Terminated,noon,20\n",
      tasks, options);
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].id, "i1");
  EXPECT_EQ(t.skipped.skipped, 3u);
  EXPECT_EQ(skipped(t, "task table: plan_gpu: is not a number"), 1u);
  EXPECT_EQ(skipped(t, "a task row of the job is invalid"), 1u);  // its GPU demand would be understated
  EXPECT_EQ(skipped(t, "start_time: is not a number"), 1u);
}

TEST(PaiReader, AutoDetection) {
  const TempFile tasks("tasks.csv", "j1,worker,1,Terminated,100,200,100,1,100,T4\n");
  EXPECT_EQ(read_pai("j1,i1,u,Terminated,100,200\n", tasks, {}, "auto").format, "pai");
  EXPECT_EQ(read_pai("\nj1,i1,u,Failed,100,200\n", tasks, {}, "auto").format, "pai");
  // Other statuses or column counts are not PAI job rows.
  EXPECT_NE(error_of("j1,i1,u,Done,100,200\n", "auto").find("cannot tell the trace format"), std::string::npos);
  EXPECT_NE(error_of("j1,i1,u,Terminated,100,200,7\n", "auto").find("cannot tell the trace format"),
            std::string::npos);
}

}  // namespace
}  // namespace rltune::trace
