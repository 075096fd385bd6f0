#pragma once
// Small builders shared by the tests.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "core/error.h"
#include "metrics/metrics.h"
#include "policy/registry.h"
#include "sim/engine.h"
#include "trace/job_spec.h"
#include "workload/generator.h"

namespace rltune::testing {

// A file in a fresh temporary folder, removed at the end of the test.
struct TempFile {
  std::filesystem::path path;
  TempFile(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("rltune-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir);
    path = dir / name;
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

// A workload generated like a preset's family on that preset, with the built-in policies registered.
struct GeneratedWorkload {
  cluster::ClusterSpec cluster;
  trace::Trace trace;
  GeneratedWorkload(const std::string& preset, int jobs, double load, std::uint64_t seed)
      : cluster(cluster::load_cluster(preset)) {
    policy::register_builtins();
    trace = workload::generate(workload::load_model(preset), cluster, {.jobs = jobs, .load = load, .seed = seed});
  }
};

// A fresh empty directory per test (and per `tag`), removed afterwards.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string& tag = "dir") {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("rltune-test-" + std::to_string(getpid()) + "-" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" + tag);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    path = dir.string();
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// How many rows a read skipped for `reason`.
inline std::size_t skipped(const trace::Trace& t, const std::string& reason) {
  for (const auto& [r, n] : t.skipped.by_reason)
    if (r == reason) return n;
  return 0;
}

inline trace::JobSpec job(const std::string& id, Seconds submit, Seconds duration, int gpus, const std::string& vc = "",
                          Seconds requested = -1) {
  trace::JobSpec j;
  j.id = id;
  j.submit = submit;
  j.duration = duration;
  j.gpus = gpus;
  j.vc = vc;
  j.requested_time = requested;
  return j;
}

// A job of `user`, as in traces that name their users.
inline trace::JobSpec user_job(const std::string& id, Seconds submit, Seconds duration, int gpus, const std::string& user,
                               const std::string& vc = "", Seconds requested = -1) {
  trace::JobSpec j = job(id, submit, duration, gpus, vc, requested);
  j.user = user;
  return j;
}

inline cluster::ClusterSpec cluster_from(const std::string& yaml) { return cluster::parse_cluster(yaml, "test.yaml"); }

// Runs `f`, which must throw InputError with `part` in its message.
template <typename F>
void expect_input_error(F f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one saying: " << part;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

struct Outcome {
  metrics::RunMetrics run;
  const metrics::JobRecord& operator[](const std::string& id) const {
    for (const auto& r : run.jobs)
      if (r.job_id == id) return r;
    throw std::runtime_error("no job " + id);
  }
};

inline Outcome simulate(const cluster::ClusterSpec& cluster, const std::vector<trace::JobSpec>& jobs,
                        policy::ProfileOptions profile, sim::EngineOptions engine_options = {}) {
  policy::register_builtins();
  auto scheduler = policy::make_profile(profile);
  sim::Engine engine(cluster, jobs, engine_options);
  return {metrics::run_and_measure(engine, *scheduler, "all")};
}

inline policy::ProfileOptions profile(const std::string& priority, policy::Blocking blocking = policy::Blocking::global,
                                      bool backfill = false, const std::string& placement = "greedy") {
  policy::ProfileOptions p;
  p.priority = priority;
  p.blocking = blocking;
  p.backfill = backfill;
  p.placement = placement;
  return p;
}

// For a value the engine sets on each job when it arrives (a runtime estimate, a doubt), which must
// depend only on jobs that finished before then: replays `jobs` by fcfs (pool blocking, backfill) under
// `options`, then again with the durations of every job that ends after job `pivot` arrives altered.
// `changed_before` counts the jobs arriving by then whose value changed (causal: 0), `changed_after`
// the later ones' (the alteration shows: > 0); `deterministic` says whether a second replay of
// `jobs` gave the same values; `values` are the first replay's.
struct ArrivalValueCheck {
  int changed_before = 0, changed_after = 0;
  bool deterministic = false;
  std::vector<double> values;
  std::size_t arrived_by_pivot = 0;  // jobs [0, arrived_by_pivot) arrived by job `pivot`
};
template <typename Read>
ArrivalValueCheck check_arrival_values(const cluster::ClusterSpec& cluster, const std::vector<trace::JobSpec>& jobs,
                                       const sim::EngineOptions& options, std::size_t pivot, Read read) {
  const auto p = profile("fcfs", policy::Blocking::pool, true);
  const auto values = [&](const std::vector<trace::JobSpec>& js) {
    sim::Engine engine(cluster, js, options);
    engine.run(*policy::make_profile(p));
    std::vector<double> out;
    for (JobIndex j = 0; j < static_cast<JobIndex>(js.size()); ++j) out.push_back(read(engine.job(j)));
    return out;
  };
  const auto first = values(jobs);
  const auto run = simulate(cluster, jobs, p, options);
  const Seconds t = jobs[pivot].submit;
  std::vector<trace::JobSpec> altered = jobs;
  for (std::size_t i = 0; i < altered.size(); ++i)
    if (run.run.jobs[i].end > t) altered[i].duration = altered[i].duration * 3 + 7;
  const auto second = values(altered);
  ArrivalValueCheck c;
  for (std::size_t i = 0; i < altered.size(); ++i) {
    (altered[i].submit <= t ? c.changed_before : c.changed_after) += first[i] != second[i];
    c.arrived_by_pivot += altered[i].submit <= t;
  }
  c.deterministic = values(jobs) == first;
  c.values = first;
  return c;
}

}  // namespace rltune::testing
