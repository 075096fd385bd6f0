// `rltune experiment` and `rltune report`: config parsing, pairing, determinism across --jobs, resume,
// failed runs, the paired bootstrap, and the report files (checked by content).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>
#include <variant>

#include "core/error.h"
#include "core/file.h"
#include "core/parallel.h"
#include "experiment/config.h"
#include "experiment/profile_settings.h"
#include "experiment/runner.h"
#include "experiment/stats.h"
#include "helpers.h"
#include "sim/runtime_fit.h"
#include "policy/registry.h"
#include "report/experiment_report.h"
#include "rl/rl_policy.h"

namespace rltune {
namespace {

namespace fs = std::filesystem;
using experiment::Config;
using testing::TempDir;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Two small generated workloads, three heuristics and one with backfilling; 4 windows of 64 jobs.
const char* kConfig = R"(name: tiny
description: a small test experiment
seed: 3
windows: {count: 4, length: 64, split: all}
policies: [fcfs, sjf, {name: f1-bf, priority: f1, backfill: true}]
baselines: [fcfs, sjf]
timeseries_windows: 2
bootstrap: 200
workloads:
  - cluster: helios
    trace: {generate: {like: helios, jobs: 600, load: 0.9}}
  - cluster: philly
    trace: {generate: {jobs: 600, load: 8}}
    windows: {count: 3}
    policies: [uni@defrag]
)";

Config parse(const std::string& text, const std::string& file = "/tmp/exp/test.yaml") {
  policy::register_builtins();
  rl::register_rl_policy();
  return experiment::parse_config(text, file);
}

// The InputError message of parsing `text`.
std::string config_error(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ExperimentConfig, ParsesPoliciesWorkloadsAndDefaults) {
  const Config c = parse(kConfig);
  EXPECT_EQ(c.name, "tiny");
  EXPECT_EQ(c.seed, 3u);
  ASSERT_EQ(c.workloads.size(), 2u);
  const auto& h = c.workloads[0];
  EXPECT_EQ(h.cluster_label, "helios");
  EXPECT_EQ(h.trace.label, "generated-helios");
  EXPECT_EQ(h.trace.jobs, 600);
  EXPECT_EQ(h.trace.seed, 3u);  // the config's seed
  EXPECT_EQ(h.windows.count, 4);
  EXPECT_EQ(h.windows.length, 64);
  EXPECT_EQ(h.windows.seed, 3u);  // the config's seed
  ASSERT_EQ(h.policies.size(), 3u);
  EXPECT_EQ(h.policies[2].label, "f1-bf");
  EXPECT_EQ(h.policies[2].profile.priority, "f1");
  EXPECT_TRUE(h.policies[2].profile.backfill);
  const auto& p = c.workloads[1];
  EXPECT_EQ(p.windows.count, 3);   // its own key
  EXPECT_EQ(p.windows.length, 64);  // the config's
  ASSERT_EQ(p.policies.size(), 4u);
  EXPECT_EQ(p.policies[3].label, "uni@defrag");
  EXPECT_EQ(p.policies[3].profile.placement, "defrag");
  EXPECT_EQ((std::vector<std::string>{"fcfs", "sjf"}), c.baselines);
  EXPECT_EQ(c.effective["workloads"][1]["policies"][3]["placement"], "defrag");
}

TEST(ExperimentConfig, ResolvesPathsAgainstTheConfigFolder) {
  TempDir dir;
  std::ofstream(fs::path(dir.path) / "jobs.csv") << "job_id,submit_time,duration,num_gpus\n1,0,100,1\n2,5,50,2\n";
  const Config c = parse("workloads: [{cluster: helios, trace: {files: jobs.csv}}]\npolicies: [fcfs]\n",
                         (fs::path(dir.path) / "exp.yaml").string());
  ASSERT_EQ(c.workloads[0].trace.files.size(), 1u);
  EXPECT_EQ(c.workloads[0].trace.files[0], (fs::path(dir.path) / "jobs.csv").string());
  EXPECT_EQ(c.workloads[0].trace.label, "jobs");
  EXPECT_EQ(c.baselines, std::vector<std::string>{"fcfs"});  // default: the first policy
}

TEST(ExperimentConfig, ModelsResolveAgainstTheConfigFolderAndSampledOnesTakeTheSeed) {
  TempDir dir;
  fs::create_directories(fs::path(dir.path) / "m");
  write_file((fs::path(dir.path) / "m" / "policy.json").string(),
             rl::policy_file(rl::PolicyNet::shaped(rl::Arch::mlp, rl::kFeatures), rl::EnvOptions{}, 1).dump());
  const Config c = parse("seed: 9\npolicies: [\"rl:m\", \"rl-sampled:m@milp\"]\nworkloads: [{cluster: helios, trace: {generate: {}}}]\n",
                         (fs::path(dir.path) / "exp.yaml").string());
  const auto& p = c.workloads[0].policies;
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].label, "rl:m");
  EXPECT_EQ(p[0].profile.priority, "rl:" + (fs::path(dir.path) / "m").string());
  EXPECT_EQ(p[1].label, "rl-sampled:m@milp");
  EXPECT_EQ(p[1].profile.priority, "rl-sampled:" + (fs::path(dir.path) / "m").string());
  EXPECT_EQ(p[1].profile.priority_options.seed, 9u);
  const std::string e = config_error("policies: [\"rl-sampled:\"]\nworkloads: [{cluster: helios, trace: {generate: {}}}]\n");
  EXPECT_NE(e.find("rl-sampled: needs a model"), std::string::npos) << e;
}

// Seeds span what the CLI's --seed takes: every 64-bit unsigned integer, and nothing else.
TEST(ExperimentConfig, SeedsTakeEverySixtyFourBitValue) {
  const std::string rest = "policies: [fcfs]\nworkloads: [{cluster: helios, trace: {generate: {seed: 18446744073709551614}}}]\n";
  const Config c = parse("seed: 18446744073709551615\n" + rest);
  EXPECT_EQ(c.seed, UINT64_MAX);
  EXPECT_EQ(c.workloads[0].trace.seed, UINT64_MAX - 1);
  EXPECT_EQ(parse("seed: 0x2A\n" + rest).seed, 42u);  // as yaml-cpp reads integers
  EXPECT_EQ(parse("seed: +5\n" + rest).seed, 5u);
  for (const auto& [seed, why] : {std::pair{"18446744073709551616", "must be an integer between 0 and 18446744073709551615 (got 1844"},
                                  {"-1", "(got -1)"}, {"2.5", "(got 2.5)"}, {"07", "leading zero"}, {"[1]", "must be an integer"}}) {
    const std::string e = config_error(std::string("seed: ") + seed + "\n" + rest);
    EXPECT_NE(e.find("seed"), std::string::npos) << e;
    EXPECT_NE(e.find(why), std::string::npos) << seed << ": " << e;
  }
}

TEST(ExperimentConfig, ErrorsNameTheLineAndKeyPath) {
  const std::string base = "policies: [fcfs]\nworkloads:\n  - cluster: helios\n";
  const std::string helios = "workloads: [{cluster: helios, trace: {generate: {}}}]\n";
  struct Case {
    std::string yaml;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {base + "    trace: {generat: {jobs: 10}}\n", {"test.yaml:4", "workloads[0].trace.generat", "unknown key"}},
      {"policies: [fcfs, nosuch]\n" + helios, {"test.yaml:1", "policies[1]", "nosuch"}},
      {"policies: [fcfs@nowhere]\n" + helios, {"policies[0]", "nowhere"}},
      {"policies: [fcfs]\nbaselines: [sjf]\n" + helios, {"baselines[0]"}},
      {"policies: [fcfs, fcfs]\n" + helios, {"appears twice"}},
      {"policies: [\"rl:no/such/model\"]\n" + helios, {"test.yaml:1", "policies[0]"}},
      // Said as a config's key, not as the CLI's --cluster, with the file it looked for.
      {"policies: [fcfs]\nworkloads: [{cluster: nocluster, trace: {generate: {}}}]\n",
       {"'workloads[0].cluster': 'nocluster': neither a preset (alibaba, helios, philly) nor a file (",
        "nocluster does not exist; paths are relative to the config's folder)"}},
      {"policies: [fcfs]\nwindows: {count: 0}\n" + helios, {"windows.count"}},
      {"policies: [fcfs]\nworkloads: [{cluster: helios}]\n", {"needs a trace"}},
      {"policies: [{priority: sjf, placement: milp, milp: {alpha: x}}]\n" + helios, {"policies[0].milp.alpha"}},
      // A line break in a name would break summary.md's table and report's figures.
      {"policies: [fcfs, {name: \"a\\nb\", priority: sjf}]\n" + helios, {"'policies[1].name': must not hold a control character"}},
      // As the CLI: a setting that would be ignored is an error, in a policy entry or in defaults.
      {"policies: [{priority: sjf, multifactor: {age_weight: 7}}]\n" + helios,
       {"'policies[0].multifactor': applies only to the multifactor policy"}},
      {"policies: [{priority: sjf, milp: {alpha: 5}}]\n" + helios, {"'policies[0].milp': applies only to placement milp (placement is greedy)"}},
      {"defaults: {milp: {gamma: 2}}\npolicies: [fcfs]\n" + helios, {"'defaults.milp': applies only to placement milp, and no policy places with it"}},
      {"defaults: {multifactor: {age_weight: 5}}\npolicies: [fcfs]\n" + helios, {"'defaults.multifactor': applies only to the multifactor policy"}},
      {"policies: [fcfs, sjf]\nbaselines: [fcfs, sjf, fcfs]\n" + helios, {"'baselines[2]': 'fcfs' is given twice"}},
      {"policies: [fcfs]\nbaselines: []\n" + helios, {"'baselines': is empty"}},
  };
  for (const Case& c : cases) {
    const std::string e = config_error(c.yaml);
    for (const std::string& part : c.parts) EXPECT_NE(e.find(part), std::string::npos) << e << " / " << part;
  }
}

TEST(ExperimentRunner, BadTraceOrWindowFailsBeforeAnyRun) {
  TempDir dir;
  // A missing trace file: the message names the workload's line.
  {
    const Config c = parse("policies: [fcfs]\nworkloads:\n  - cluster: helios\n    trace: {files: missing.csv}\n",
                           (fs::path(dir.path) / "exp.yaml").string());
    try {
      experiment::run_experiment(c, dir.path + "/out1", {});
      FAIL() << "no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("exp.yaml:3"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("missing.csv"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir.path + "/out1/runs"));
  }
  // Windows longer than the trace's split.
  {
    const Config c = parse("policies: [fcfs]\nwindows: {length: 5000}\nworkloads: [{cluster: helios, trace: {generate: {jobs: 300}}}]\n",
                           (fs::path(dir.path) / "exp.yaml").string());
    try {
      experiment::run_experiment(c, dir.path + "/out2", {});
      FAIL() << "no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("exp.yaml:2"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir.path + "/out2/runs"));
  }
}

const char* kOutputs[] = {"runs.csv", "summary.csv", "summary.md", "cdf.csv", "timeseries.csv", "config.json"};

TEST(ExperimentRunner, PairedWindowsAndTheSameResultsWhateverJobs) {
  const Config c = parse(kConfig);
  TempDir one("one"), three("three");
  const auto o1 = experiment::run_experiment(c, one.path, {.jobs = 1, .progress = false});
  const auto o3 = experiment::run_experiment(c, three.path, {.jobs = 3, .progress = false});
  EXPECT_EQ(o1.runs, 4u * 3 + 3u * 4);
  EXPECT_EQ(o1.failed, 0u);
  EXPECT_EQ(o3.runs, o1.runs);
  for (const char* f : kOutputs) EXPECT_EQ(read(fs::path(one.path) / f), read(fs::path(three.path) / f)) << f;

  // Pairing: every policy of a workload ran the same windows with the same jobs; the fcfs row is what
  // a direct simulation of that window gives.
  const auto runs = report::CsvTable::read(one.path + "/runs.csv");
  const std::size_t cc = runs.column("cluster"), wc = runs.column("window"), pc = runs.column("policy"),
                    tc = runs.column("jobs_total"), ac = runs.column("avg_wait_s");
  std::map<std::string, std::map<std::string, std::vector<std::string>>> windows;  // cluster -> policy -> windows
  for (const auto& r : runs.rows) {
    windows[r[cc]][r[pc]].push_back(r[wc]);
    EXPECT_EQ(r[tc], "64");
  }
  for (const auto& [cluster, by_policy] : windows)
    for (const auto& [policy, list] : by_policy) EXPECT_EQ(list, by_policy.begin()->second) << cluster << " " << policy;
  EXPECT_EQ(windows["helios"]["fcfs"].size(), 4u);
  EXPECT_EQ(windows["philly-paper"]["uni@defrag"].size(), 3u);

  testing::GeneratedWorkload g("helios", 600, 0.9, 3);
  const std::string first = windows["helios"]["fcfs"][0];
  const std::size_t start = std::stoul(first.substr(0, first.find(':')));
  auto fcfs = policy::make_profile({});
  const auto direct = metrics::summarize(experiment::run_window(g.cluster, sim::warm_window(g.trace.jobs, start, 64, 0), {}, *fcfs, first));
  for (const auto& r : runs.rows)
    if (r[cc] == "helios" && r[pc] == "fcfs" && r[wc] == first) {
      EXPECT_DOUBLE_EQ(std::stod(r[ac]), direct.avg_wait_s);
    }

  // Time series for the first two windows of each workload, per policy.
  const auto series = report::CsvTable::read(one.path + "/timeseries.csv");
  std::set<std::string> seen;
  for (const auto& r : series.rows) seen.insert(r[0] + "|" + r[2] + "|" + r[3]);
  EXPECT_EQ(seen.size(), 2u * 3 + 2u * 4);
}

// run_paired (what `rltune evaluate` runs on): the runs of the experiment's first workload, by window
// and policy, whatever the thread count.
TEST(ExperimentRunner, RunPairedGivesTheExperimentsRunsOnAnyThreadCount) {
  const Config c = parse(kConfig);
  const experiment::Workload& w = c.workloads[0];
  const experiment::LoadedWorkload loaded = experiment::load_workload(w);
  ASSERT_EQ(loaded.starts.size(), 4u);
  const auto one = experiment::run_paired(w, loaded, {}, 1);
  const auto two = experiment::run_paired(w, loaded, {}, 2);
  TempDir dir;
  experiment::run_experiment(c, dir.path, {.jobs = 1, .progress = false});
  const auto runs = report::CsvTable::read(dir.path + "/runs.csv");
  const std::size_t cc = runs.column("cluster"), wc = runs.column("window"), pc = runs.column("policy"),
                    bc = runs.column("avg_bsld");
  ASSERT_EQ(one.size(), 4u);
  std::size_t compared = 0;
  for (std::size_t k = 0; k < one.size(); ++k) {
    ASSERT_EQ(one[k].size(), w.policies.size());
    for (std::size_t p = 0; p < w.policies.size(); ++p) {
      const auto a = metrics::summarize(one[k][p]), b = metrics::summarize(two[k][p]);
      EXPECT_EQ(one[k][p].window, fmt::format("{}:64", loaded.starts[k]));
      EXPECT_EQ(a.avg_bsld, b.avg_bsld);
      EXPECT_EQ(a.avg_wait_s, b.avg_wait_s);
      for (const auto& r : runs.rows)
        if (r[cc] == "helios" && r[wc] == one[k][p].window && r[pc] == w.policies[p].label) {
          EXPECT_DOUBLE_EQ(std::stod(r[bc]), a.avg_bsld) << r[wc] << " " << r[pc];
          ++compared;
        }
    }
  }
  EXPECT_EQ(compared, 4u * 3);
}

// Runs n tasks through `run_all` on `threads` workers and checks that each ran once, on a worker of
// its own (never two at once on one worker) with an index below `threads`.
using RunAll = std::function<void(std::size_t n, const std::function<void(std::size_t, int)>& task)>;
void expect_each_task_once(const RunAll& run_all, std::size_t n, int threads) {
  std::vector<std::atomic<int>> calls(n);
  std::vector<std::atomic<int>> busy(8);
  std::atomic<bool> overlap{false}, out_of_range{false};
  run_all(n, [&](std::size_t i, int worker) {
    if (worker < 0 || worker >= threads) {
      out_of_range = true;
      return;
    }
    if (++busy[static_cast<std::size_t>(worker)] != 1) overlap = true;
    ++calls[i];
    --busy[static_cast<std::size_t>(worker)];
  });
  for (const auto& c : calls) EXPECT_EQ(c.load(), 1) << threads;
  EXPECT_FALSE(overlap) << threads;
  EXPECT_FALSE(out_of_range) << threads;
}

TEST(Parallel, EachTaskRunsOnceOnAWorkerOfItsOwnAndTheFirstErrorIsRethrown) {
  for (const int threads : {1, 2, 8})
    expect_each_task_once([&](std::size_t n, const auto& task) { for_each_parallel(n, threads, task); }, 100, threads);
  std::atomic<int> started{0};
  EXPECT_THROW(for_each_parallel(1000, 1,
                                 [&](std::size_t i, int) {
                                   ++started;
                                   if (i == 3) throw InputError("run 3 failed");
                                 }),
               InputError);
  EXPECT_EQ(started.load(), 4);  // on one thread nothing starts after the failure
  for_each_parallel(0, 4, [](std::size_t, int) { FAIL() << "nothing to run"; });
}

// A team serves many calls in a row (a vectorised environment's steps) with the same contract, and
// stays usable after a task throws.
TEST(Parallel, AThreadTeamKeepsTheContractOverManyCalls) {
  for (const int threads : {1, 2, 4}) {
    ThreadTeam team(threads);
    EXPECT_EQ(team.threads(), threads);
    const RunAll run_all = [&](std::size_t n, const auto& task) { team.for_each(n, task); };
    for (std::size_t round = 0; round < 300; ++round) expect_each_task_once(run_all, round % 9, threads);
    std::atomic<int> started{0};
    EXPECT_THROW(team.for_each(1000,
                               [&](std::size_t i, int) {
                                 ++started;
                                 if (i == 3) throw InputError("task 3 failed");
                               }),
                 InputError);
    if (threads == 1) {
      EXPECT_EQ(started.load(), 4);  // nothing starts after the failure (with more threads others may race past it)
    }
    expect_each_task_once(run_all, 50, threads);
  }
}

// Pinned, task i runs on worker i % threads at every call (what it works on stays in one core's caches),
// with the same contract otherwise.
TEST(Parallel, APinnedTeamRunsEachTaskOnItsOwnWorker) {
  for (const int threads : {1, 2, 3}) {
    ThreadTeam team(threads);
    for (std::size_t round = 0; round < 200; ++round) {
      const std::size_t n = round % 7;
      std::vector<int> worker(n, -1), runs(n, 0);
      team.for_each(n, [&](std::size_t i, int w) { worker[i] = w, ++runs[i]; }, /*pinned=*/true);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(runs[i], 1) << "task " << i;
        ASSERT_EQ(worker[i], static_cast<int>(i % static_cast<std::size_t>(threads))) << "task " << i << " of " << n;
      }
    }
    EXPECT_THROW(team.for_each(6, [&](std::size_t i, int) { if (i == 1) throw InputError("task 1 failed"); }, true), InputError);
    std::vector<int> runs(4, 0);
    team.for_each(4, [&](std::size_t i, int) { ++runs[i]; }, true);  // usable after the failure
    EXPECT_EQ(runs, std::vector<int>(4, 1));
  }
}

TEST(ExperimentRunner, ResumeReusesFinishedRunsAndGivesTheSameOutputs) {
  const Config c = parse(kConfig);
  TempDir full("full"), part("part");
  experiment::run_experiment(c, full.path, {.jobs = 2, .progress = false});
  experiment::run_experiment(c, part.path, {.jobs = 2, .progress = false});
  // An interrupted run: some run files never written, no outputs yet.
  std::size_t removed = 0;
  for (const auto& entry : fs::directory_iterator(part.path + "/runs"))
    if (entry.path().filename().string().find("k0001") != std::string::npos) fs::remove(entry.path()), ++removed;
  for (const char* f : {"runs.csv", "summary.csv", "summary.md", "cdf.csv", "timeseries.csv"}) fs::remove(fs::path(part.path) / f);
  ASSERT_GT(removed, 0u);

  // Without --resume the folder is refused.
  EXPECT_THROW(experiment::run_experiment(c, part.path, {.jobs = 2, .progress = false}), InputError);
  const auto o = experiment::run_experiment(c, part.path, {.jobs = 1, .resume = true, .progress = false});
  EXPECT_EQ(o.reused, o.runs - removed);
  for (const char* f : kOutputs) EXPECT_EQ(read(fs::path(full.path) / f), read(fs::path(part.path) / f)) << f;

  // The same config named by another path resumes (nothing to redo).
  const auto again = experiment::run_experiment(parse(kConfig, "/tmp/exp/./test.yaml"), part.path,
                                                {.resume = true, .progress = false});
  EXPECT_EQ(again.reused, again.runs);
  // A different config may not resume into it.
  Config other = parse(std::string(kConfig).replace(std::string(kConfig).find("seed: 3"), 7, "seed: 4"));
  EXPECT_THROW(experiment::run_experiment(other, part.path, {.resume = true, .progress = false}), InputError);
}

// What only the outputs read (name, description, baselines, bootstrap) may change behind --resume: every
// run is reused, and the outputs are those of a fresh run with the new config.
TEST(ExperimentRunner, ResumeWithNewBaselinesReusesEveryRun) {
  std::string text = kConfig;
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"name: tiny", "name: tiny2"}, {"a small", "a renamed"}, {"[fcfs, sjf]", "[sjf]"}, {"bootstrap: 200", "bootstrap: 300"}})
    text.replace(text.find(from), from.size(), to);
  TempDir first("first"), fresh("fresh");
  experiment::run_experiment(parse(kConfig), first.path, {.jobs = 2, .progress = false});
  const std::string before = read(fs::path(first.path) / "summary.csv");
  const auto o = experiment::run_experiment(parse(text), first.path, {.jobs = 2, .resume = true, .progress = false});
  EXPECT_EQ(o.reused, o.runs);
  EXPECT_NE(read(fs::path(first.path) / "summary.csv"), before);  // the vs_fcfs columns are gone
  experiment::run_experiment(parse(text), fresh.path, {.jobs = 2, .progress = false});
  for (const char* f : kOutputs) EXPECT_EQ(read(fs::path(fresh.path) / f), read(fs::path(first.path) / f)) << f;
}

// A trace file that changes behind the same config: --resume refuses, naming the file.
TEST(ExperimentRunner, ResumeRefusesWhenAnInputFileChanged) {
  TempDir dir;
  const std::string trace = dir.path + "/jobs.csv";
  std::string rows = "job_id,submit_time,duration,num_gpus,vc\n";
  for (int k = 0; k < 40; ++k) rows += fmt::format("j{},{},{},{},{}\n", k, 60 * k, 600 + 37 * k, 1 << (k % 4), k % 5);
  write_file(trace, rows);
  const std::string text = "windows: {count: 2, length: 20}\npolicies: [fcfs, sjf]\nworkloads: [{cluster: helios, trace: {files: [jobs.csv]}}]\n";
  const Config c = parse(text, dir.path + "/exp.yaml");
  const std::string out = dir.path + "/out";
  experiment::run_experiment(c, out, {.jobs = 1, .progress = false});
  EXPECT_NE(read(fs::path(out) / "config.json").find("fnv1a64:"), std::string::npos);
  EXPECT_EQ(experiment::run_experiment(c, out, {.resume = true, .progress = false}).reused, 4u);  // unchanged: all reused
  write_file(trace, rows + "j40,2400,100,1,0\n");
  try {
    experiment::run_experiment(c, out, {.resume = true, .progress = false});
    ADD_FAILURE() << "resumed over a changed trace";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(trace + " has changed"), std::string::npos) << e.what();
  }
}

// A runtime model file is an input like a trace: --resume refuses when it changed.
TEST(ExperimentRunner, ResumeRefusesWhenARuntimeModelChanged) {
  if (!sim::can_fit_runtime_models()) GTEST_SKIP() << "built without XGBoost";
  TempDir dir;
  std::string rows = "job_id,submit_time,duration,num_gpus,vc\n";
  std::vector<trace::JobSpec> jobs;
  for (int k = 0; k < 40; ++k) {
    rows += fmt::format("j{},{},{},{},{}\n", k, 60 * k, 600 + 37 * k, 1 << (k % 4), k % 5);
    jobs.push_back(testing::job(fmt::format("j{}", k), 60 * k, 600 + 37 * k, 1 << (k % 4), std::to_string(k % 5)));
  }
  write_file(dir.path + "/jobs.csv", rows);
  const std::string model = dir.path + "/model.json";
  write_file(model, sim::fit_runtime_model(jobs, 2, "the test's jobs").to_json());
  const std::string text =
      "windows: {count: 2, length: 20}\npolicies: [fcfs, {name: sjf-learned, priority: sjf, runtime: 'predicted:learned', "
      "runtime_model: model.json}]\nworkloads: [{cluster: helios, trace: {files: [jobs.csv]}}]\n";
  const Config c = parse(text, dir.path + "/exp.yaml");
  const std::string out = dir.path + "/out";
  experiment::run_experiment(c, out, {.jobs = 1, .progress = false});
  EXPECT_NE(read(fs::path(out) / "config.json").find(model), std::string::npos);
  write_file(model, *read_file(model) + "\n");
  try {
    experiment::run_experiment(c, out, {.resume = true, .progress = false});
    ADD_FAILURE() << "resumed over a changed runtime model";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(model + " has changed"), std::string::npos) << e.what();
  }
}

// A priority policy that throws in the middle of a run.
class Exploding final : public policy::PriorityPolicy {
 public:
  std::span<const JobIndex> prefix(const sim::View& view, std::span<const JobIndex> queue, std::size_t) override {
    if (view.now() > 0) throw std::runtime_error("boom at t>0");
    order_.assign(queue.begin(), queue.end());
    return order_;
  }

 private:
  std::vector<JobIndex> order_;
};

// Every numeric setting's bounds are accepted and one step beyond refused, alike by the YAML reader and
// validation (the CLI flags check the same records; tests/cli_test.sh tries some): no way in accepts
// what another refuses.
template <typename Options>
void expect_one_set_of_bounds(std::span<const NumberSetting<Options>> settings, const char* group, const char* policy,
                              const std::function<const Options&(const Config&)>& options_of) {
  for (const NumberSetting<Options>& s : settings) {
    SCOPED_TRACE(s.key);
    const auto yaml = [&](double v) {
      return fmt::format("defaults: {{placement: milp, {}: {{{}: {}}}}}\npolicies: [{}]\n"
                         "workloads: [{{cluster: helios, trace: {{generate: {{}}}}}}]\n", group, s.key, v, policy);
    };
    for (const double ok : {s.min, s.max}) {
      EXPECT_EQ(s.get(options_of(parse(yaml(ok)))), ok);
      Options o;
      s.set(o, ok);
      EXPECT_NO_THROW(policy::validate(o));
    }
    for (const double bad : {s.min - 1, s.max * 2 + 1}) {
      try {
        parse(yaml(bad));
        ADD_FAILURE() << bad << " accepted";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(fmt::format("defaults.{}.{}", group, s.key)), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(fmt::format("between {} and {}", s.min, s.max)), std::string::npos) << e.what();
      }
      Options o;
      s.set(o, bad);
      EXPECT_THROW(policy::validate(o), InputError);
    }
  }
}

TEST(ExperimentConfig, EachSettingHasOneSetOfBoundsInYamlAndValidation) {
  expect_one_set_of_bounds<policy::MilpOptions>(policy::milp_settings(), "milp", "fcfs", [](const Config& c) -> const auto& {
    return c.workloads[0].policies[0].profile.milp;
  });
  expect_one_set_of_bounds<policy::MultifactorOptions>(
      policy::multifactor_settings(), "multifactor", "multifactor",
      [](const Config& c) -> const auto& { return c.workloads[0].policies[0].profile.priority_options.multifactor; });
}

// Every choice record (semantics, placement, ..., multifactor.favor_small) gives the same options from
// experiment YAML as from ProfileSettings (which the CLI's flags and Python's keywords fill), and refuses
// an unknown value with the same message.
TEST(ExperimentConfig, EachChoiceIsOneSettingInYamlAndTheCli) {
  policy::register_builtins();
  // A value other than the default for each record: a new record fails here until it has one.
  const std::map<std::string, std::string> values{{"semantics", "helios"}, {"placement", "balance"}, {"milp.model", "ways"},
                                                  {"blocking", "pool"},     {"backfill", "true"},     {"runtime", "predicted"},
                                                  {"multifactor.favor_small", "true"}, {"runtime_model", "/models/runtime-model.json"},
                                                  {"backfill_limits", "true"}};
  ASSERT_EQ(values.size(), experiment::choice_settings().size());
  const auto described = [](const policy::ProfileOptions& p, const sim::EngineOptions& e) {
    return fmt::format("{} {} {} {} {} {} {} {}", p.name(), p.semantics, p.placement, policy::to_string(p.blocking), p.backfill,
                       p.milp.model, p.milp.alpha, p.priority_options.multifactor.favor_small) +
           " " + sim::to_string(e.runtime) + " " + e.runtime_model_file + " " + (e.backfill_on_limits ? "limits" : "estimates");
  };
  const auto yaml = [](const std::string& key, const std::string& value) {
    const auto dot = key.find('.');
    std::string setting = dot == std::string::npos ? fmt::format("{}: {}", key, value)
                                                   : fmt::format("{}: {{{}: {}}}", key.substr(0, dot), key.substr(dot + 1), value);
    if (key == "runtime_model") setting += ", runtime: predicted:learned";  // it applies only there
    if (key == "backfill_limits") setting += ", backfill: true";            // it plans backfilling
    if (key == "milp.model") setting += ", placement: milp";                // it applies only there
    return fmt::format("defaults: {{{}}}\npolicies: [multifactor]\nworkloads: [{{cluster: helios, trace: {{generate: {{}}}}}}]\n", setting);
  };
  for (const experiment::ChoiceSetting& c : experiment::choice_settings()) {
    SCOPED_TRACE(c.key);
    ASSERT_EQ(values.count(c.key), 1u);
    const std::string value = values.at(c.key);
    experiment::ProfileSettings settings;
    if (std::string_view(c.key) == "runtime_model") settings.runtime = "predicted:learned";
    if (std::string_view(c.key) == "backfill_limits") settings.backfill = true;
    if (std::string_view(c.key) == "milp.model") settings.placement = "milp";
    std::visit([&](auto field) {
      if constexpr (std::is_same_v<decltype(field), bool experiment::ProfileSettings::*>) settings.*field = value == "true";
      else settings.*field = value;
    }, c.field);
    const policy::ProfileOptions from_settings = settings.profile("multifactor");
    const experiment::PolicySpec from_yaml = parse(yaml(c.key, value)).workloads[0].policies[0];
    EXPECT_EQ(described(from_yaml.profile, from_yaml.engine), described(from_settings, settings.engine()));
    EXPECT_NE(described(from_settings, settings.engine()), described(experiment::ProfileSettings{}.profile("multifactor"), {}))
        << "the value changed nothing";
    if (c.is_switch() || std::string_view(c.value_name) == "FILE") continue;  // a file is checked when it is read
    std::visit([&](auto field) {
      if constexpr (std::is_same_v<decltype(field), std::string experiment::ProfileSettings::*>) settings.*field = "no-such-value";
    }, c.field);
    std::string cli_error;
    try {
      settings.profile("multifactor");
    } catch (const InputError& e) {
      cli_error = e.what();
    }
    const std::string yaml_error = config_error(yaml(c.key, "no-such-value"));
    EXPECT_NE(cli_error, "") << "accepted";
    EXPECT_TRUE(yaml_error.ends_with(cli_error)) << yaml_error << " | " << cli_error;
  }
}

// The sampled policies' temperature: a key in defaults (for the sampled policies there) or in a
// sampled policy's entry, within the CLI's bounds; on another policy's entry it would be ignored, so
// it is an error, as the CLI's --temperature is without a sampled policy (tests/cli_test.sh).
TEST(ExperimentConfig, TheTemperatureAppliesToSampledPoliciesOnly) {
  rl::register_rl_policy();
  const std::string workloads = "workloads: [{cluster: helios, trace: {generate: {}}}]\n";
  const Config c = parse("defaults: {temperature: 3}\npolicies: [fcfs, sjf-sampled, {name: hot, priority: sjf-sampled, temperature: 0.5}]\n" +
                         workloads);
  const auto& p = c.workloads[0].policies;
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[1].profile.priority_options.temperature, 3);
  EXPECT_EQ(p[2].profile.priority_options.temperature, 0.5);
  const std::string wrong = config_error("policies: [{name: s, priority: sjf, temperature: 2}]\n" + workloads);
  EXPECT_NE(wrong.find("policies[0].temperature"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find("applies only to sampled policies"), std::string::npos) << wrong;
  const std::string cold = config_error("policies: [{name: s, priority: sjf-sampled, temperature: 0}]\n" + workloads);
  EXPECT_NE(cold.find("between 0.01 and 100"), std::string::npos) << cold;
  // The CLI's and Python's way in gives the same options, and config.json records it when set.
  experiment::ProfileSettings settings;
  settings.set("sampling", "temperature", 0.5);
  const policy::ProfileOptions from_settings = settings.profile("sjf-sampled");
  EXPECT_EQ(from_settings.priority_options.temperature, 0.5);
  experiment::Json described;
  settings.describe(described, from_settings);
  EXPECT_EQ(described.value("temperature", 0.0), 0.5);
  experiment::Json plain;
  experiment::ProfileSettings{}.describe(plain, experiment::ProfileSettings{}.profile("sjf-sampled"));
  EXPECT_FALSE(plain.contains("temperature"));
  EXPECT_THROW(settings.set("sampling", "temperature", 200), InputError);
  // Which policies sample is the registry's to say, with or without an argument or a placement.
  EXPECT_TRUE(policy::is_sampled("sjf-sampled@milp"));
  EXPECT_TRUE(policy::is_sampled("rl-sampled:models/m@milp"));
  EXPECT_FALSE(policy::is_sampled("rl:models/m"));
  EXPECT_FALSE(policy::is_sampled("sjf"));
  EXPECT_EQ(policy::only_for_sampled(), "applies only to sampled policies (sjf-sampled, rl-sampled)");
}

// The window settings: YAML's `windows:` keys take exactly the records' bounds (the flags of train,
// evaluate and simulate check the same records; tests/cli_test.sh tries some).
TEST(ExperimentConfig, WindowSettingsHaveOneSetOfBounds) {
  for (const sim::WindowSetting& s : sim::window_settings()) {
    SCOPED_TRACE(s.key);
    const auto yaml = [&](double v) {
      return fmt::format("windows: {{{}: {}}}\npolicies: [fcfs]\nworkloads: [{{cluster: helios, trace: {{generate: {{}}}}}}]\n", s.key, v);
    };
    for (const double ok : {s.min, s.max}) EXPECT_EQ(s.get(parse(yaml(ok)).workloads[0].windows), ok);
    for (const double bad : {s.min - 1, s.max * 2 + 1}) {
      const std::string e = config_error(yaml(bad));
      EXPECT_NE(e.find(fmt::format("windows.{}", s.key)), std::string::npos) << e;
      EXPECT_NE(e.find(fmt::format("between {} and {}", s.min, s.max)), std::string::npos) << e;
    }
  }
}

TEST(ExperimentRunner, AFailedRunIsRecordedAndTheOthersComplete) {
  policy::register_builtins();
  static bool registered = false;
  if (!registered) {
    policy::register_priority({"test-exploding", "throws during a run",
                               [](const std::string&, const policy::PriorityOptions&) { return policy::make_order_picker([] { return std::make_unique<Exploding>(); }); }});
    registered = true;
  }
  const Config c = parse("seed: 2\nwindows: {count: 2, length: 32}\npolicies: [fcfs, test-exploding]\n"
                         "workloads: [{cluster: helios, trace: {generate: {jobs: 300}}}]\n");
  TempDir out;
  const auto o = experiment::run_experiment(c, out.path, {.jobs = 2, .progress = false});
  EXPECT_EQ(o.runs, 4u);
  EXPECT_EQ(o.failed, 2u);
  const auto runs = report::CsvTable::read(out.path + "/runs.csv");
  const std::size_t pc = runs.column("policy"), sc = runs.column("status"), ec = runs.column("error");
  for (const auto& r : runs.rows) {
    EXPECT_EQ(r[sc], r[pc] == "fcfs" ? "completed" : "failed");
    if (r[pc] != "fcfs") {
      EXPECT_NE(r[ec].find("boom"), std::string::npos);
    }
  }
  // The summary counts only completed windows; no pair exists for the failed policy.
  const auto summary = report::CsvTable::read(out.path + "/summary.csv");
  for (const auto& r : summary.rows)
    if (r[summary.column("policy")] == "test-exploding") {
      EXPECT_EQ(r[summary.column("windows")], "0");
    }
}

TEST(PairedBootstrap, HandComputedCases) {
  // Two windows: resamples are {1,1} (+50%), {1,2} or {2,1} (+16.7%), {2,2} (0%), each end with
  // probability 1/4 > 2.5%: the interval is exactly [0, 50].
  const std::vector<double> base{10, 20}, pol{5, 20};
  const auto i = experiment::paired_improvement(base, pol, true, 2000, 1);
  EXPECT_TRUE(i.defined);
  EXPECT_EQ(i.windows, 2u);
  EXPECT_NEAR(i.pct, 100.0 * 5 / 30, 1e-12);
  EXPECT_DOUBLE_EQ(i.ci_low, 0);
  EXPECT_DOUBLE_EQ(i.ci_high, 50);
  // A constant ratio: every resample gives it.
  const auto c = experiment::paired_improvement(std::vector<double>{10, 20, 40}, std::vector<double>{5, 10, 20}, true, 500, 7);
  EXPECT_DOUBLE_EQ(c.pct, 50);
  EXPECT_DOUBLE_EQ(c.ci_low, 50);
  EXPECT_DOUBLE_EQ(c.ci_high, 50);
  // Higher is better (utilisation): 0.5 -> 0.6 is +20%.
  const auto u = experiment::paired_improvement(std::vector<double>{0.5}, std::vector<double>{0.6}, false, 100, 1);
  EXPECT_NEAR(u.pct, 20, 1e-12);
  // Undefined against a zero baseline, zero when both are zero.
  EXPECT_FALSE(experiment::paired_improvement(std::vector<double>{0, 0}, std::vector<double>{1, 0}, true, 100, 1).defined);
  const auto z = experiment::paired_improvement(std::vector<double>{0}, std::vector<double>{0}, true, 100, 1);
  EXPECT_TRUE(z.defined);
  EXPECT_EQ(z.pct, 0);
  // Seeded: the same interval twice.
  const std::vector<double> b{3, 9, 4, 7, 12}, p{2, 8, 5, 3, 6};
  const auto a1 = experiment::paired_improvement(b, p, true, 1000, 5), a2 = experiment::paired_improvement(b, p, true, 1000, 5);
  EXPECT_EQ(a1.ci_low, a2.ci_low);
  EXPECT_EQ(a1.ci_high, a2.ci_high);
  EXPECT_LT(a1.ci_low, a1.pct);
  EXPECT_GT(a1.ci_high, a1.pct);
}

TEST(ExperimentRunner, ARunIntoAFolderAnotherProcessWritesIsRefused) {
  const Config c = parse(kConfig);
  TempDir out;
  {
    // flock locks belong to the open file: a second lock from this process conflicts as another process's would.
    const FolderLock other(out.path, "the other run");
    try {
      experiment::run_experiment(c, out.path, {.jobs = 2, .progress = false});
      ADD_FAILURE() << "ran into a folder another run holds";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("another rltune process is writing there"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(fs::path(out.path) / "config.json"));
    EXPECT_THROW(FolderLock(out.path, "a third"), InputError);
  }
  EXPECT_FALSE(fs::exists(fs::path(out.path) / ".lock"));  // released, and the file removed
  experiment::run_experiment(c, out.path, {.jobs = 2, .progress = false});
  EXPECT_TRUE(fs::exists(fs::path(out.path) / "runs.csv"));
  EXPECT_FALSE(fs::exists(fs::path(out.path) / ".lock"));
}

bool have_gnuplot() { return std::system("gnuplot --version >/dev/null 2>&1") == 0; }

TEST(ExperimentReport, WritesValidFiguresAndPages) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed (scripts/install-deps.sh installs gnuplot-nox)";
  const Config c = parse(kConfig);
  TempDir out;
  experiment::run_experiment(c, out.path, {.jobs = 2, .progress = false});
  const auto r = report::make_report(out.path);
  // Per workload: boxes, improvement over each of 2 baselines, CDF, utilisation and queue timelines.
  ASSERT_EQ(r.figures.size(), 2u * 6);
  const fs::path figures = fs::path(out.path) / "figures";
  for (const auto& name : r.figures) {
    const std::string png = read(figures / (name + ".png"));
    ASSERT_GT(png.size(), 1000u) << name;
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << name;
    EXPECT_EQ(png.substr(12, 4), "IHDR") << name;
    const auto be32 = [&](std::size_t at) {
      return (static_cast<unsigned char>(png[at]) << 24) | (static_cast<unsigned char>(png[at + 1]) << 16) |
             (static_cast<unsigned char>(png[at + 2]) << 8) | static_cast<unsigned char>(png[at + 3]);
    };
    EXPECT_GE(be32(16), 800u) << name;  // width
    EXPECT_GE(be32(20), 400u) << name;  // height
    EXPECT_NE(png.find("IEND"), std::string::npos) << name;
    const std::string svg = read(figures / (name + ".svg"));
    EXPECT_NE(svg.find("<svg"), std::string::npos) << name;
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << name;
    EXPECT_NE(svg.find("<path"), std::string::npos) << name;
    EXPECT_NE(svg.find("fcfs"), std::string::npos) << name;  // the policies are labelled
  }
  const std::string html = read(fs::path(out.path) / "report.html");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_NE(html.find("<table>"), std::string::npos);
  EXPECT_NE(html.find("<td>f1-bf</td>"), std::string::npos);
  std::size_t images = 0;
  for (std::size_t at = html.find("data:image/svg+xml;base64,"); at != std::string::npos;
       at = html.find("data:image/svg+xml;base64,", at + 1))
    ++images;
  EXPECT_EQ(images, r.figures.size());
  EXPECT_EQ(html.find("src=\"figures/"), std::string::npos);  // self-contained: no external files
  const std::string md = read(fs::path(out.path) / "report.md");
  EXPECT_NE(md.find("| f1-bf |"), std::string::npos);
  EXPECT_NE(md.find("](figures/boxes-helios-generated-helios.png)"), std::string::npos);
  EXPECT_NE(md.find("Improvement over sjf"), std::string::npos);
  // Legends outside the data: below the CDFs; timelines are small multiples, one panel per policy.
  const std::string gp = read(figures / "figures.gp");
  EXPECT_NE(gp.find("set key below"), std::string::npos);
  EXPECT_EQ(gp.find("set key top left"), std::string::npos);
  EXPECT_NE(gp.find("set multiplot layout 1,3 title 'helios / generated-helios, window"), std::string::npos) << gp.substr(0, 400);
}

// Sixteen policies (an experiment of six heuristics, twice, and models) keep sixteen distinct styles;
// the thirty linetypes of figures.gp are distinct too.
TEST(ExperimentReport, AMissingOrFailingGnuplotIsAClearError) {
  const Config c = parse(kConfig);
  TempDir out;
  experiment::run_experiment(c, out.path, {.jobs = 2, .progress = false});
  const auto error = [&](const std::string& gnuplot) {
    try {
      report::make_report(out.path, {.gnuplot = gnuplot});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error("rltune-no-such-gnuplot"), "rltune-no-such-gnuplot not found: install gnuplot (Debian: apt-get install gnuplot-nox)");
  const std::string failed = error("false");
  EXPECT_EQ(failed.rfind("gnuplot failed on " + out.path + "/figures/figures.gp (see " + out.path +
                             "/figures/gnuplot.log; the earlier figures were kept)",
                         0),
            0u)
      << failed;
  EXPECT_TRUE(fs::exists(fs::path(out.path) / "figures" / "gnuplot.log"));
  EXPECT_TRUE(fs::exists(fs::path(out.path) / "figures" / "figures.gp"));  // the script that failed, to read
  EXPECT_FALSE(fs::exists(fs::path(out.path) / "figures" / ".drawing"));
  EXPECT_FALSE(fs::exists(fs::path(out.path) / "report.html"));
}

TEST(CsvTable, ToCsvReadsBackAsTheSameTable) {
  report::CsvTable t;
  t.header = {"policy", "metric", "mean"};
  t.rows = {{"sjf", "avg_bsld", "1.5"}, {"a,b", "say \"hi\"", ""}, {"two\nlines", "x", "1e+06"}};
  const std::string text = t.to_csv();
  EXPECT_EQ(text, "policy,metric,mean\nsjf,avg_bsld,1.5\n\"a,b\",\"say \"\"hi\"\"\",\n\"two\nlines\",x,1e+06\n");
  const report::CsvTable back = report::CsvTable::parse(text, "t.csv");
  EXPECT_EQ(back.header, t.header);
  EXPECT_EQ(back.rows, t.rows);
  // As an editor may save it: a byte-order mark, CRLF line ends and a blank line at the end.
  std::string edited = "\xEF\xBB\xBF";
  for (const char c : text) edited += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const report::CsvTable saved = report::CsvTable::parse(edited + "\r\n", "t.csv");
  EXPECT_EQ(saved.header, t.header);
  EXPECT_EQ(saved.rows.size(), t.rows.size());
  // Cut inside a quoted field: an error at its line, not a table one record short.
  try {
    report::CsvTable::parse(text.substr(0, text.size() - 12), "t.csv");
    ADD_FAILURE() << "a record cut inside its quotes was dropped silently";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv:4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("inside a quoted field"), std::string::npos) << e.what();
  }
}

TEST(ExperimentReport, SeriesStylesStayDistinctForManyPolicies) {
  std::set<std::string> styles;
  for (std::size_t i = 0; i < 30; ++i) styles.insert(report::series_style(i));
  EXPECT_EQ(styles.size(), 30u);
  EXPECT_NE(report::series_style(0), report::series_style(10)) << "fcfs and the eleventh policy shared a colour";
  EXPECT_EQ(report::series_style(0), "lc rgb '#4e79a7' dt 1");
  EXPECT_EQ(report::series_style(10), "lc rgb '#4e79a7' dt 2");
}

// One extreme interval (-940% on a real trace) is cut at the bound, and says so; others are untouched.
TEST(ExperimentReport, ExtremeImprovementsAreCutAndMarked) {
  const auto extreme = report::clip_interval(-120, -940, 12, 100);
  EXPECT_TRUE(extreme.clipped);
  EXPECT_EQ(extreme.pct, -100);
  EXPECT_EQ(extreme.low, -100);
  EXPECT_EQ(extreme.high, 12);
  const auto usual = report::clip_interval(35, 20, 48, 100);
  EXPECT_FALSE(usual.clipped);
  EXPECT_EQ(usual.low, 20);
  EXPECT_TRUE(report::clip_interval(50, 10, 180, 100).clipped);
}

TEST(ExperimentReport, RefusesAFolderThatIsNotAnExperiment) {
  TempDir out;
  EXPECT_THROW(report::make_report(out.path), InputError);
}

}  // namespace
}  // namespace rltune
