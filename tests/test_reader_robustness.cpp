// Randomized robustness test of every trace reader and config parser (the in-CI counterpart of
// fuzz/fuzz_inputs.cpp): valid inputs are mutated (byte flips, inserted tokens, deleted spans,
// truncation) with a fixed seed, and each must be read or refused with InputError, never crash or throw
// anything else; what a reader reads keeps the trace invariants. The fuzz seeds and crash reproducers
// are replayed too. Runs under ASan/UBSan in `make test`.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <typeinfo>

#include "core/error.h"
#include "core/rng.h"
#include "fuzz_input.h"
#include "trace/reader.h"

namespace rltune::trace {
namespace {

struct Fixture {
  const char* format;
  std::string text;
  std::string task_table;  // pai only
};

const std::vector<Fixture>& fixtures() {
  static const std::vector<Fixture> all = {
      {"canonical", "job_id,submit_time,duration,num_gpus,vc,gpu_type,user,num_cpus,memory_mib,requested_time,status,"
                    "gpu_demand,censored\na,0,100,1,v,T4|P100,u,4,2048,300,ok,0.5,1\nb,5,10,2,,,,,,,,,\n", ""},
      {"rltune", "1,0,0,100,2,-1,-1,4,200,1024,1,3,1,-1,0,-1,-1,0,2\n2,5,0,50,1,-1,-1,2,100,512,1,4,1,-1,0,-1,-1,1,3\n", ""},
      {"helios", "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
                 "j1,u1,vcA,1,4,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:10,2020-04-01 00:10:10,600,10\n"
                 "j2,u2,vcB,8,32,1,FAILED,2020-04-01 00:01:40,2020-04-01 00:02:00,2020-04-01 01:02:00,,20\n", ""},
      {"openb", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
                "scheduled_time\np1,6000,12288,1,460,,LS,Running,100,5000,150\np2,8000,1024,8,1000,V100M16|T4,BE,"
                "Succeeded,200,1200,250\np3,1,1,1,1000,,BE,Pending,1,2,\n", ""},
      {"swf", "; Version: 2.2\n1 0 10 3600 4 -1 -1 4 7200 -1 1 7 1 -1 2 -1 -1 -1\n2 60 0 -1 2 -1 -1 2 600 -1 5 8 1 -1 1 -1 -1 -1\n", ""},
      {"gavel", "A\tcmd\t-s\t1\t10\t0.000000\t1\nB\tcmd\t-s\t1\t10\t6.4\t8\n", ""},
      {"philly", R"([{"status": "Pass", "vc": "v1", "jobid": "application_1", "user": "u1",
  "submitted_time": "2017-10-03 12:06:25", "attempts": [{"start_time": "2017-10-03 12:06:27",
  "end_time": "2017-10-03 13:06:27", "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}]}]},
 {"status": "Killed", "vc": "v2", "jobid": "application_2", "user": "u2", "submitted_time": "2017-10-03 12:10:00",
  "attempts": [{"start_time": "None", "end_time": null, "detail": []}]}])", ""},
      {"pai", "j1,inst1,u1,Terminated,100,500\nj2,inst2,u2,Failed,200,300\n",
       "j1,worker,2,Terminated,110,500,600,29.3,50,T4\nj1,ps,1,Terminated,105,480,200,10,0,\nj2,worker,1,Failed,210,300,100,2,100,V100\n"},
  };
  return all;
}

const std::array<const char*, 16> kTokens = {",", "\n", "\t", " ", "\"", "-1", "1e30", "None", "null", "[", "]", "{", "}",
                                             "99999999999999999999", "2020-13-45 99:99:99", "|"};

std::string mutate(const std::string& text, Rng& rng) {
  std::string s = text;
  const int edits = static_cast<int>(rng.uniform_int(1, 4));
  for (int e = 0; e < edits && !s.empty(); ++e) {
    const auto at = static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(s.size()) - 1));
    switch (rng.uniform_int(0, 4)) {
      case 0: s[at] = static_cast<char>(rng.uniform_int(0, 255)); break;
      case 1: s.insert(at, kTokens[static_cast<std::size_t>(rng.uniform_int(0, kTokens.size() - 1))]); break;
      case 2: s.erase(at, static_cast<std::size_t>(rng.uniform_int(1, 20))); break;
      case 3: s.resize(at); break;
      default: s.insert(at, s.substr(at, static_cast<std::size_t>(rng.uniform_int(1, 40)))); break;  // repeat a span
    }
  }
  return s;
}

TEST(ReaderRobustness, MutatedInputsReadOrFailCleanly) {
  const auto dir = std::filesystem::temp_directory_path() / ("rltune-robustness-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "durations.csv") << "duration_s,num_gpus\n100,1\n3600,8\n";
  Rng rng(2026);
  constexpr int kRounds = 1500;
  for (const auto& f : fixtures()) {
    std::size_t read_ok = 0, rejected = 0;
    for (int round = 0; round < kRounds; ++round) {
      ReadOptions options;
      options.format = round % 5 == 0 ? "auto" : f.format;
      options.skip_invalid = round % 2 == 1;
      options.duration_source = (dir / "durations.csv").string();
      const bool mutate_tasks = !f.task_table.empty() && round % 3 == 0;
      std::ofstream(dir / "tasks.csv") << (mutate_tasks ? mutate(f.task_table, rng) : f.task_table);
      options.pai_task_table = (dir / "tasks.csv").string();
      const std::string input = mutate_tasks ? f.text : mutate(f.text, rng);
      std::istringstream in(input);
      try {
        const Trace t = read_trace(in, "fuzz.txt", options);
        ++read_ok;
        for (std::size_t i = 0; i < t.jobs.size(); ++i) {
          ASSERT_FALSE(t.jobs[i].id.empty()) << f.format << "\n" << input;
          ASSERT_GE(t.jobs[i].submit, 0) << f.format << "\n" << input;
          if (i > 0) {
            ASSERT_LE(t.jobs[i - 1].submit, t.jobs[i].submit) << f.format << "\n" << input;
          }
        }
      } catch (const InputError& e) {
        ++rejected;
        ASSERT_GT(std::string(e.what()).size(), 0u);
      } catch (const std::exception& e) {
        FAIL() << f.format << ": unexpected " << typeid(e).name() << ": " << e.what() << "\ninput:\n" << input;
      }
    }
    EXPECT_EQ(read_ok + rejected, static_cast<std::size_t>(kRounds)) << f.format;
    EXPECT_GT(rejected, 0u) << f.format << ": mutations should break some inputs";
  }
  std::filesystem::remove_all(dir);
}

// A header (or first row) followed by megabytes of NUL bytes, or by one huge line: every line-based
// reader stops within the line-length cap with an error that says why, instead of reading it all.
TEST(ReaderRobustness, BinaryOrOverlongInputStopsAtTheCap) {
  const auto dir = std::filesystem::temp_directory_path() / ("rltune-overlong-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "durations.csv") << "duration_s,num_gpus\n100,1\n3600,8\n";
  for (const auto& f : fixtures()) {
    if (std::string_view(f.format) == "philly") continue;  // one JSON document, not lines
    std::ofstream(dir / "tasks.csv") << f.task_table;
    // The fixture's lines up to its first data row (SWF starts with a comment).
    std::size_t end = 0;
    long lines = 0;
    for (bool comment = true; comment; ++lines) {
      comment = f.text[end] == ';';
      end = f.text.find('\n', end) + 1;
    }
    const std::string start = f.text.substr(0, end);
    const std::string where = "big.txt:" + std::to_string(lines + 1) + ": ";
    for (const char* format : {f.format, "auto"}) {
      ReadOptions options;
      options.format = format;
      options.duration_source = (dir / "durations.csv").string();
      options.pai_task_table = (dir / "tasks.csv").string();
      const auto error = [&](const std::string& text) -> std::pair<std::string, std::streamoff> {
        std::istringstream in(text);
        try {
          read_trace(in, "big.txt", options);
        } catch (const InputError& e) {
          return {e.what(), static_cast<std::streamoff>(in.tellg())};
        }
        return {"", 0};
      };
      const auto [nul, nul_at] = error(start + std::string(4 << 20, '\0') + "\n");
      EXPECT_NE(nul.find(where + "holds a NUL byte"), std::string::npos) << f.format << " as " << format << ": " << nul;
      EXPECT_LT(nul_at, 2 << 20) << f.format << " as " << format << " read past the cap";
      const std::string huge(3 << 20, 'x');
      const auto [overlong, overlong_at] = error(start + huge + "\n" + f.text);
      EXPECT_NE(overlong.find(where + "the line is longer than 1048576 bytes"), std::string::npos)
          << f.format << " as " << format << ": " << overlong;
      EXPECT_LT(overlong_at, 2 << 20) << f.format << " as " << format << " read past the cap";
      options.max_line_bytes = 4 << 20;  // a raised cap reads the line (and rejects its content, if at all)
      EXPECT_EQ(error(start + huge + "\n" + f.text).first.find("longer than"), std::string::npos) << f.format;
    }
  }
  std::filesystem::remove_all(dir);
  // Auto-detection refuses binary data in the first line, whatever follows.
  std::istringstream nul(std::string("\xFF\xFE") + std::string("j\0o\0b\0", 6) + "\n");
  try {
    read_trace(nul, "utf16.csv", ReadOptions{});
    ADD_FAILURE() << "read NUL bytes as a trace";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("utf16.csv: holds NUL bytes"), std::string::npos) << e.what();
  }
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every seed names its kind and is read by it (a seed fed to the wrong reader is refused: this failed
// when sacct was inserted into the readers and byte-numbered seeds shifted); every crash reproducer
// found by the fuzzer is read or refused, never a bug.
TEST(FuzzInputs, SeedsAreReadAndCrashReproducersRefused) {
  const std::filesystem::path dir = RLTUNE_FUZZ_DIR;
  std::vector<std::string> kinds;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "seeds")) {
    const std::string data = slurp(entry.path());
    const auto verdict = fuzz::check_input(data);
    EXPECT_EQ(verdict.outcome, fuzz::Outcome::read) << entry.path() << ": " << verdict.detail;
    kinds.push_back(data.substr(0, data.find('\n')));
  }
  for (const auto& r : readers())
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), r.name), kinds.end()) << "no fuzz seed for the " << r.name << " reader";
  for (const char* kind : {"cluster", "workload", "experiment", "policy"})
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), kind), kinds.end()) << "no fuzz seed for " << kind;
  if (std::filesystem::is_directory(dir / "crashes"))
    for (const auto& entry : std::filesystem::directory_iterator(dir / "crashes")) {
      const auto verdict = fuzz::check_input(slurp(entry.path()));
      EXPECT_NE(verdict.outcome, fuzz::Outcome::bug) << entry.path() << ": " << verdict.detail;
    }
  EXPECT_EQ(fuzz::check_input("nonsense\nx").outcome, fuzz::Outcome::unknown_kind);
}

TEST(FuzzInputs, MutatedConfigsAndPoliciesReadOrFailCleanly) {
  Rng rng(2027);
  const std::filesystem::path seeds = std::filesystem::path(RLTUNE_FUZZ_DIR) / "seeds";
  for (const char* kind : {"cluster", "workload", "experiment", "policy"}) {
    const std::string seed = slurp(seeds / kind);
    const std::string head = seed.substr(0, seed.find('\n') + 1), body = seed.substr(head.size());
    std::size_t read_ok = 0, refused = 0;
    for (int round = 0; round < 400; ++round) {
      const std::string input = head + mutate(body, rng);
      const auto verdict = fuzz::check_input(input);
      ASSERT_NE(verdict.outcome, fuzz::Outcome::bug) << kind << ": " << verdict.detail << "\ninput:\n" << input.substr(0, 3000);
      ++(verdict.outcome == fuzz::Outcome::read ? read_ok : refused);
    }
    EXPECT_GT(refused, 0u) << kind << ": mutations should break some inputs";
    EXPECT_GT(read_ok, 0u) << kind << ": some mutations should still read";
  }
}

}  // namespace
}  // namespace rltune::trace
