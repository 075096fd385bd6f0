// The Slurm advisor's reading and decision, on answers recorded from a real Slurm 22.05 (4 nodes x 8
// fake V100s; tests/fixtures/slurm): jobs 7-10 running, 11-16 pending, 15 held by an administrator.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <bit>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "core/file.h"
#include "helpers.h"
#include "policy/registry.h"
#include "slurm/advisor.h"
#include "slurm/loop.h"
#include "core/process.h"
#include "core/rng.h"
#include "slurm/state.h"
#include "trace/reader.h"

namespace rltune {
namespace {

using slurm::SlurmError;
using testing::TempDir;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(RLTUNE_FIXTURES) + "/slurm/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr long long kNow = 1796236400;  // a few seconds after the recording

TEST(SlurmState, ExpandsHostLists) {
  EXPECT_EQ(slurm::expand_hostlist("n[1-3,7],gpu[08-10],x"),
            (std::vector<std::string>{"n1", "n2", "n3", "n7", "gpu08", "gpu09", "gpu10", "x"}));
  EXPECT_EQ(slurm::expand_hostlist("n4"), std::vector<std::string>{"n4"});
  EXPECT_TRUE(slurm::expand_hostlist("").empty());
  EXPECT_THROW(slurm::expand_hostlist("n[1-"), SlurmError);
  EXPECT_THROW(slurm::expand_hostlist("n[3-1]"), SlurmError);
  EXPECT_THROW(slurm::expand_hostlist("n[a-b]"), SlurmError);
}

TEST(SlurmState, ParsesGres) {
  EXPECT_EQ(slurm::parse_gres("gpu:v100:8(S:0-1)").count, 8);
  EXPECT_EQ(slurm::parse_gres("gpu:v100:8(S:0-1)").type, "v100");
  EXPECT_EQ(slurm::parse_gres("gres:gpu:2").count, 2);
  EXPECT_EQ(slurm::parse_gres("gres:gpu:2").type, "");
  EXPECT_EQ(slurm::parse_gres("gpu:v100:1(IDX:3)").count, 1);
  EXPECT_EQ(slurm::parse_gres("shard:4,gpu:a100:2(IDX:0-1)").count, 2);
  EXPECT_EQ(slurm::parse_gres("").count, 0);
  EXPECT_EQ(slurm::parse_gres("(null)").count, 0);
  EXPECT_THROW(slurm::parse_gres("gpu:v100:many"), SlurmError);
  // Counts an int cannot hold are refused, not wrapped (2^32 + 8 would read as 8).
  EXPECT_THROW(slurm::parse_gres("gpu:v100:4294967304"), SlurmError);
  EXPECT_THROW(slurm::parse_gres("gres:gpu:-2"), SlurmError);
  // Without a count, one GPU, as Slurm reads --gres=gpu (the job was dropped, or its type stopped every cycle).
  EXPECT_EQ(slurm::parse_gres("gres:gpu").count, 1);
  EXPECT_EQ(slurm::parse_gres("gres:gpu:v100").count, 1);
  EXPECT_EQ(slurm::parse_gres("gres:gpu:v100").type, "v100");
  // Untyped GPUs with device files: Slurm 22.05 writes their used GRES with a "(null)" type.
  EXPECT_EQ(slurm::parse_gres("gpu:(null):2(IDX:0-1)").count, 2);
  EXPECT_EQ(slurm::parse_gres("gpu:(null):2(IDX:0-1)").type, "");
  EXPECT_EQ(slurm::parse_gres("gpu:(null):0(IDX:N/A)").count, 0);
}

// Numbers Slurm never writes are refused or read as what they mean, never wrapped.
TEST(SlurmState, OutOfRangeJobNumbers) {
  const auto job = [](const std::string& fields) {
    return R"J({"jobs": [{"job_id": 1, "job_state": "PENDING", "tres_per_node": "gres:gpu:1", "submit_time": 100,
      "start_time": 0, "partition": "p", "user_name": "u", "priority": 5, "state_reason": "None", "nodes": "", )J" + fields + "}]}";
  };
  EXPECT_THROW(slurm::parse_jobs(job(R"("node_count": 4294967297, "time_limit": 5)")), SlurmError);
  // A limit of 3e17 minutes overflowed to 44 s and put the job first; it is no limit.
  EXPECT_EQ(slurm::parse_jobs(job(R"("node_count": 1, "time_limit": 307445734561825861)"))[0].time_limit_s, -1);
}

TEST(SlurmState, ANodeOrJobListedTwiceIsAnError) {
  // Twice the same node would double its GPUs; twice the same job would get two priorities.
  nlohmann::json nodes = nlohmann::json::parse(fixture("sinfo.json"));
  nodes["nodes"].push_back(nodes["nodes"][0]);
  EXPECT_THROW(slurm::parse_nodes(nodes.dump()), SlurmError);
  nlohmann::json jobs = nlohmann::json::parse(fixture("squeue.json"));
  jobs["jobs"].push_back(jobs["jobs"][0]);
  EXPECT_THROW(slurm::parse_jobs(jobs.dump()), SlurmError);
}

TEST(SlurmState, ReadsRecordedAnswers) {
  const auto nodes = slurm::parse_nodes(fixture("sinfo.json"));
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[0].name, "n1");
  EXPECT_EQ(nodes[0].gpu_type, "v100");
  EXPECT_EQ(nodes[0].gpus, 8);
  EXPECT_EQ(nodes[0].gpus_used, 1);
  EXPECT_EQ(nodes[1].gpus_used, 8);
  EXPECT_EQ(nodes[0].cpus, 32);
  EXPECT_EQ(nodes[0].memory_mib, 256000);
  EXPECT_TRUE(nodes[0].usable());
  EXPECT_EQ(nodes[0].partitions, std::vector<std::string>{"debug"});

  const auto jobs = slurm::parse_jobs(fixture("squeue.json"));
  ASSERT_EQ(jobs.size(), 16u);
  const auto& running = jobs[6];  // job 7: 1 GPU on n1
  EXPECT_EQ(running.id, 7);
  EXPECT_TRUE(running.active());
  EXPECT_EQ(running.node_list, std::vector<std::string>{"n1"});
  EXPECT_EQ(running.gpus_on_node, std::vector<int>{1});
  EXPECT_EQ(running.time_limit_s, 120);
  const auto& multi = jobs[13];  // job 14: 2 nodes x 8 GPUs
  EXPECT_TRUE(multi.pending());
  EXPECT_EQ(multi.gpus, 16);
  EXPECT_EQ(multi.gpus_per_node, 8);
  EXPECT_EQ(multi.nodes, 2);
  EXPECT_TRUE(jobs[14].held());   // job 15
  EXPECT_EQ(jobs[15].gpu_type, "");  // job 16 asked for gpu:2, any type
  EXPECT_EQ(jobs[11].required_nodes, std::vector<std::string>{"n3"});  // job 12
  EXPECT_EQ(jobs[12].priority, 4000);  // job 13
}

// The recorded 22.05 answers rewritten as Slurm 24.11 writes them (data_parser v0.0.42, from its
// parsers.c): numbers as {"set", "infinite", "number"}, states as arrays of words, state_flags gone,
// nodes from `scontrol show nodes --json` while `sinfo --json` lists partitions.
nlohmann::json no_val(const nlohmann::json& v, bool null_is_infinite = false) {
  if (v.is_null()) return {{"set", null_is_infinite}, {"infinite", null_is_infinite}, {"number", 0}};
  return {{"set", true}, {"infinite", false}, {"number", v}};
}

std::string nodes_as_24_11() {
  nlohmann::json doc = nlohmann::json::parse(fixture("sinfo.json"));
  for (auto& n : doc["nodes"]) {
    std::string base = n["state"].get<std::string>();
    std::transform(base.begin(), base.end(), base.begin(), [](unsigned char c) { return std::toupper(c); });
    nlohmann::json state = nlohmann::json::array({base});
    for (const auto& flag : n["state_flags"]) state.push_back(flag);
    n["state"] = state;
    n.erase("state_flags");
  }
  doc["last_update"] = no_val(kNow);
  doc["warnings"] = nlohmann::json::array();
  return doc.dump();
}

std::string jobs_as_24_11() {
  nlohmann::json doc = nlohmann::json::parse(fixture("squeue.json"));
  for (auto& j : doc["jobs"]) {
    for (const char* key : {"node_count", "tasks", "submit_time", "start_time", "priority", "array_job_id", "array_task_id"})
      j[key] = no_val(j[key]);
    j["time_limit"] = no_val(j["time_limit"], /*null_is_infinite=*/true);  // 22.05 writes an infinite limit as null
    const std::string state = j["job_state"].get<std::string>();
    j["job_state"] = state == "COMPLETING" ? nlohmann::json::array({"COMPLETED", "COMPLETING"}) : nlohmann::json::array({state});
    for (const char* key : {"tres_per_node", "tres_per_job", "tres_per_task"})  // 23.11 on: gres/ for gres:
      if (j.contains(key) && j[key].is_string() && j[key].get<std::string>().starts_with("gres:"))
        j[key] = "gres/" + j[key].get<std::string>().substr(5);
  }
  return doc.dump();
}

TEST(SlurmState, ReadsSlurm24AnswersAs22) {
  const auto old_nodes = slurm::parse_nodes(fixture("sinfo.json"));
  const auto new_nodes = slurm::parse_nodes(nodes_as_24_11(), "scontrol show nodes --json");
  ASSERT_EQ(new_nodes.size(), old_nodes.size());
  for (std::size_t i = 0; i < old_nodes.size(); ++i) {
    const auto& [a, b] = std::pair{old_nodes[i], new_nodes[i]};
    EXPECT_EQ(std::tie(a.name, a.gpu_type, a.gpus, a.gpus_used, a.cpus, a.cpus_used, a.memory_mib, a.state, a.partitions),
              std::tie(b.name, b.gpu_type, b.gpus, b.gpus_used, b.cpus, b.cpus_used, b.memory_mib, b.state, b.partitions))
        << a.name;
  }
  const auto old_jobs = slurm::parse_jobs(fixture("squeue.json"));
  const auto new_jobs = slurm::parse_jobs(jobs_as_24_11());
  ASSERT_EQ(new_jobs.size(), old_jobs.size());
  for (std::size_t i = 0; i < old_jobs.size(); ++i) {
    const auto& [a, b] = std::pair{old_jobs[i], new_jobs[i]};
    EXPECT_EQ(std::tie(a.id, a.state, a.gpus, a.gpus_per_node, a.nodes, a.gpu_type, a.submit, a.start, a.time_limit_s, a.partition,
                       a.user, a.priority, a.reason, a.required_nodes, a.node_list, a.gpus_on_node),
              std::tie(b.id, b.state, b.gpus, b.gpus_per_node, b.nodes, b.gpu_type, b.submit, b.start, b.time_limit_s, b.partition,
                       b.user, b.priority, b.reason, b.required_nodes, b.node_list, b.gpus_on_node))
        << a.id;
  }
  // A flag names the state as 22.05 names it; an unset or infinite number is absent; a number of the
  // wrong shape is an error naming the field.
  const auto job = [](const std::string& fields) {
    return R"J({"jobs": [{"job_id": 1, "tres_per_node": "gres/gpu:1", "submit_time": 100, "start_time": 0, "partition": "p",
      "user_name": "u", "state_reason": "None", "nodes": "", "node_count": 1, )J" + fields + "}]}";
  };
  EXPECT_EQ(slurm::parse_jobs(job(R"("job_state": ["RUNNING", "COMPLETING"], "priority": 1, "time_limit": 1)"))[0].state,
            "COMPLETING");
  const auto unset = slurm::parse_jobs(job(R"("job_state": ["PENDING"], "time_limit": {"set": true, "infinite": true, "number": 0},
      "priority": {"set": false, "infinite": false, "number": 0})"))[0];
  EXPECT_EQ(unset.time_limit_s, -1);
  EXPECT_EQ(unset.priority, 0);
  for (const char* bad : {R"("job_state": ["PENDING"], "time_limit": 1, "priority": {"number": 5})",
                          R"("job_state": ["PENDING"], "time_limit": 1, "priority": {"set": true, "number": "5"})",
                          R"("job_state": [], "time_limit": 1, "priority": 1)", R"("job_state": [7], "time_limit": 1, "priority": 1)"})
    EXPECT_THROW(slurm::parse_jobs(job(bad)), SlurmError) << bad;
}

TEST(SlurmState, MalformedAnswersAreErrors) {
  EXPECT_THROW(slurm::parse_nodes("not json"), SlurmError);
  EXPECT_THROW(slurm::parse_nodes(""), SlurmError);
  EXPECT_THROW(slurm::parse_nodes(R"({"meta": {}})"), SlurmError);
  EXPECT_THROW(slurm::parse_jobs(R"({"jobs": [{"job_id": 3}]})"), SlurmError);  // fields missing
  EXPECT_THROW(slurm::parse_jobs(R"({"errors": [{"error": "x"}], "jobs": []})"), SlurmError);
  EXPECT_THROW(slurm::parse_nodes(R"({"nodes": [{"name": "a", "gres": "gpu:2", "gres_used": "gpu:5", "cpus": 1,
      "alloc_cpus": 0, "real_memory": 1, "alloc_memory": 0, "state": "idle", "partitions": []}]})"), SlurmError);
  EXPECT_THROW(slurm::parse_jobs(R"({"jobs": [{"job_id": "seven"}]})"), SlurmError);
}

slurm::AdvisorOptions options(const std::string& policy) {
  policy::register_builtins();
  slurm::AdvisorOptions o;
  o.profile.priority = policy;
  return o;
}

TEST(SlurmAdvisor, OrdersPendingJobsIntoAPriorityBand) {
  const auto nodes = slurm::parse_nodes(fixture("sinfo.json"));
  const auto jobs = slurm::parse_jobs(fixture("squeue.json"));
  const auto d = slurm::decide(nodes, jobs, kNow, options("sjf"));
  // SJF by time limit: 16 (1 min), 12 and 13 (2 min, in arrival order), 14 (3 min), 11 (5 min); 15 is held.
  EXPECT_EQ(d.order, (std::vector<long long>{16, 12, 13, 14, 11}));
  EXPECT_EQ(d.left_alone, 1u);
  EXPECT_EQ(d.cluster, "v100: 4 x 8");
  ASSERT_EQ(d.commands.size(), 5u);
  EXPECT_EQ(d.commands[0].argv, (std::vector<std::string>{"scontrol", "update", "JobId=16", "Priority=683332"}));
  EXPECT_EQ(d.commands[4].argv, (std::vector<std::string>{"scontrol", "update", "JobId=11", "Priority=516668"}));
  // FCFS: arrival order.
  EXPECT_EQ(slurm::decide(nodes, jobs, kNow, options("fcfs")).order, (std::vector<long long>{11, 12, 13, 14, 16}));
}

TEST(SlurmAdvisor, ReapplyingTheSameOrderChangesNothing) {
  const auto nodes = slurm::parse_nodes(fixture("sinfo.json"));
  auto jobs = slurm::parse_jobs(fixture("squeue.json"));
  const auto first = slurm::decide(nodes, jobs, kNow, options("sjf"));
  for (const auto& c : first.commands)
    for (auto& j : jobs)
      if (j.id == c.job) j.priority = std::stoll(c.argv[3].substr(std::string("Priority=").size()));
  const auto again = slurm::decide(nodes, jobs, kNow, options("sjf"));
  EXPECT_EQ(again.order, first.order);
  EXPECT_TRUE(again.commands.empty());
}

// Whether `q` orders its jobs (strictly decreasing) inside the band of `base`.
bool valid_band(const std::vector<long long>& q, long long base) {
  for (std::size_t i = 0; i < q.size(); ++i)
    if (q[i] < base || q[i] >= base + slurm::kBandWidth || (i > 0 && q[i] >= q[i - 1])) return false;
  return true;
}

std::size_t changed(const std::vector<long long>& before, const std::vector<long long>& after) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < before.size(); ++i) n += before[i] != after[i];
  return n;
}

// The fewest priorities an order can be given with, by trying every set of jobs to keep (small n).
std::size_t fewest_changes(const std::vector<long long>& p, long long base) {
  const auto n = static_cast<long long>(p.size());
  std::size_t best = p.size();
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    long long last = -1;  // the last kept job
    bool ok = true;
    for (long long i = 0; i < n && ok; ++i) {
      if (!(mask >> i & 1)) continue;
      const long long v = p[static_cast<std::size_t>(i)];
      ok = v >= base + (n - 1 - i) && v <= base + slurm::kBandWidth - 1 - i && (last < 0 || p[static_cast<std::size_t>(last)] - v >= i - last);
      last = i;
    }
    if (ok) best = std::min(best, p.size() - static_cast<std::size_t>(std::popcount(mask)));
  }
  return best;
}

// Jobs that keep a priority fitting the order are not changed: an arrival or a departure costs about one
// command, where a contiguous band renumbered every job below the change.
TEST(SlurmAdvisor, BandPrioritiesChangeAsFewJobsAsPossible) {
  constexpr long long base = 100000;
  const std::vector<long long> fresh(5, 128);  // Slurm's own priorities, outside the band
  const auto first = slurm::band_priorities(fresh, base);
  EXPECT_EQ(first, (std::vector<long long>{683332, 641666, 600000, 558334, 516668}));  // a stride apart, mid-band
  EXPECT_EQ(slurm::band_priorities(first, base), first);
  auto arrived = first;  // FCFS: a new job at the end, then one in the middle
  arrived.push_back(128);
  auto q = slurm::band_priorities(arrived, base);
  EXPECT_TRUE(valid_band(q, base));
  EXPECT_EQ(changed(arrived, q), 1u);
  q.insert(q.begin() + 2, 5000);
  EXPECT_EQ(changed(q, slurm::band_priorities(q, base)), 1u);
  const std::vector<long long> left(first.begin() + 1, first.end());  // the first job started
  EXPECT_EQ(slurm::band_priorities(left, base), left);
  EXPECT_EQ(slurm::band_priorities({}, base), std::vector<long long>{});
  // No room left for a job to come between two (one apart) or at the band's end: spread out.
  for (const std::vector<long long>& tight : {std::vector<long long>{base + 5, 7, 7, 7, base + 1}, {base + 2, base + 1, base + 1000},
                                              {base + slurm::kBandWidth - 1, base + 10}}) {
    const auto out = slurm::band_priorities(tight, base);
    ASSERT_TRUE(valid_band(out, base));
    for (std::size_t i = 0; i <= out.size(); ++i)
      EXPECT_GE((i == 0 ? base + slurm::kBandWidth : out[i - 1]) - (i == out.size() ? base - 1 : out[i]), 2) << i;
  }

  // Random current priorities, in and around the band: always a valid band. Where nothing gets crowded
  // (priorities outside the band or far apart in it), with the fewest changes.
  Rng rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    const std::size_t n = static_cast<std::size_t>(rng.uniform_int(0, 9));
    const bool sparse = trial % 2 == 0;
    std::vector<long long> p(n);
    for (auto& v : p) {
      const int kind = static_cast<int>(rng.uniform_int(sparse ? 2 : 0, 3));
      v = kind == 0   ? base + static_cast<long long>(rng.uniform_int(0, 12))
          : kind == 1 ? base + slurm::kBandWidth - 1 - static_cast<long long>(rng.uniform_int(0, 12))
          : kind == 2 ? static_cast<long long>(rng.uniform_int(0, 200))
                      : base + static_cast<long long>(rng.uniform_int(0, slurm::kBandWidth - 1));
    }
    const auto out = slurm::band_priorities(p, base);
    ASSERT_TRUE(valid_band(out, base)) << trial;
    if (sparse) {
      ASSERT_EQ(changed(p, out), fewest_changes(p, base)) << trial;
    }
  }

  // Queues of 200 over many cycles: served from the front while jobs arrive at the end (FCFS), at random
  // places (SJF), or always at the same place (a run of equal jobs). A contiguous band renumbers every
  // job below an arrival (200, 100 on average, 100); here an arrival costs fewer than 3 commands on
  // average (1.6, 1.3, 2.8 when written).
  for (const int where : {0, 1, 2}) {
    std::vector<long long> queue(200, 128);
    queue = slurm::band_priorities(queue, base);
    std::size_t commands = 0;
    for (int step = 0; step < 5000; ++step) {
      queue.erase(queue.begin());
      const auto place = where == 0 ? queue.size() : where == 1 ? static_cast<std::size_t>(rng.uniform_int(0, 199)) : 100;
      queue.insert(queue.begin() + static_cast<std::ptrdiff_t>(place), 128);
      const auto next = slurm::band_priorities(queue, base);
      ASSERT_TRUE(valid_band(next, base));
      commands += changed(queue, next);
      queue = next;
    }
    EXPECT_LT(static_cast<double>(commands) / 5000, 3.0) << where << ": " << commands;
  }
  EXPECT_THROW(slurm::band_priorities(std::vector<long long>(slurm::kBandWidth + 1, 0), base), SlurmError);
}

std::vector<std::string> node_list_commands(const slurm::Decision& d) {
  std::vector<std::string> out;
  for (const auto& c : d.commands)
    if (c.argv[3].starts_with("NodeList=")) out.push_back(c.argv[2] + " " + c.argv[3]);
  return out;
}

TEST(SlurmAdvisor, PlacesTheJobsThatStartNow) {
  const auto nodes = slurm::parse_nodes(fixture("sinfo.json"));
  const auto jobs = slurm::parse_jobs(fixture("squeue.json"));
  auto o = options("sjf");
  o.placement = true;
  // n1 has 7 free GPUs: 16 (2), 12 (1) and 13 (1) start there; 14 (16 GPUs) blocks the rest. 12 and 13
  // already ask for nodes (n3, n2) that the advisor did not set: their users chose, they stay.
  const auto d = slurm::decide(nodes, jobs, kNow, o);
  EXPECT_EQ(node_list_commands(d), (std::vector<std::string>{"JobId=16 NodeList=n1"}));
  EXPECT_EQ(d.node_lists_set, (std::map<long long, std::vector<std::string>>{{16, {"n1"}}}));
  // When the advisor itself set 12's n3, it moves it to n1.
  const slurm::Pins ours{{12, {{"n3"}}}};
  o.pins = &ours;
  EXPECT_EQ(node_list_commands(slurm::decide(nodes, jobs, kNow, o)),
            (std::vector<std::string>{"JobId=16 NodeList=n1", "JobId=12 NodeList=n1"}));
}

TEST(SlurmAdvisor, ClearsItsNodeListsWhenAJobIsNotPlacedAnyMore) {
  const auto nodes = slurm::parse_nodes(fixture("sinfo.json"));
  const auto jobs = slurm::parse_jobs(fixture("squeue.json"));
  auto o = options("fcfs");  // 11 (8 GPUs) is first and does not fit: nothing starts now
  o.placement = true;
  const slurm::Pins ours{{12, {{"n3"}}}, {13, {{"n4"}}}};
  o.pins = &ours;
  const auto d = slurm::decide(nodes, jobs, kNow, o);
  // 12 still holds the advisor's n3: cleared. 13 now asks for n2, which someone else set: left alone.
  EXPECT_EQ(node_list_commands(d), (std::vector<std::string>{"JobId=12 NodeList="}));
  EXPECT_TRUE(d.node_lists_set.empty());
  // Held, or pinned by an administrator (AdminComment, or a priority at --respect-admin-priority): left
  // alone, as the README says of such jobs.
  for (const int how : {0, 1, 2}) {
    auto changed = jobs;
    auto pinning = o;
    for (auto& j : changed)
      if (j.id == 12) {
        if (how == 0) j.reason = "JobHeldUser";
        if (how == 1) j.admin_comment = "rltune=skip";
        if (how == 2) j.priority = 3'000'000;
      }
    if (how == 2) pinning.admin_priority = 2'000'000;
    EXPECT_TRUE(node_list_commands(slurm::decide(nodes, changed, kNow, pinning)).empty()) << how;
  }
}

// The pins after a cycle. A refused set leaves the job as it was; a set or a clear without an answer may
// or may not have gone through, so both are kept; a clear that went through is done with. A running job
// keeps its pins (requeued, it comes back with its NodeList); a job gone from squeue, or pending without
// any of its pins, drops them. Before, a timed-out set that went through, or a requeued job, stayed
// pinned for good.
TEST(SlurmAdvisor, PinsAfterACycleKeepEveryNodeListAJobMayHold) {
  const auto job = [](long long id, const char* state, std::vector<std::string> required) {
    slurm::Job j;
    j.id = id;
    j.state = state;
    j.required_nodes = std::move(required);
    return j;
  };
  // 16 placed on n1 (set refused), 17 on n2 (set timed out, had n4), 19 on n5 (set went through, had n6);
  // 12 cleared (went through), 13 cleared (timed out); 14 runs on what we set; 15 pending, changed by
  // someone else; 18 is gone.
  const std::vector<slurm::Job> jobs{job(12, "PENDING", {}), job(13, "PENDING", {"n7"}), job(14, "RUNNING", {"n8"}),
                                     job(15, "PENDING", {"n1"}), job(16, "PENDING", {}), job(17, "PENDING", {"n4"}),
                                     job(19, "PENDING", {"n6"})};
  slurm::Decision d;
  d.node_lists_set = {{16, {"n1"}}, {17, {"n2"}}, {19, {"n5"}}};
  for (const auto& [id, list] : std::vector<std::pair<long long, std::string>>{{16, "n1"}, {17, "n2"}, {19, "n5"}, {12, ""}, {13, ""}})
    d.commands.push_back({id, {"scontrol", "update", fmt::format("JobId={}", id), "NodeList=" + list}, ""});
  const slurm::Pins before{{12, {{"n3"}}}, {13, {{"n7"}}}, {14, {{"n8"}}}, {15, {{"n9"}}}, {17, {{"n4"}}}, {18, {{"n2"}}}, {19, {{"n6"}}}};
  const slurm::Pins after = slurm::pins_after(before, d, jobs, {16}, {13, 17});
  EXPECT_EQ(after, (slurm::Pins{{13, {{"n7"}}}, {14, {{"n8"}}}, {17, {{"n4"}, {"n2"}}}, {19, {{"n5"}}}}));
  // Next cycle 17 holds n2 (the timed-out set went through): still the advisor's to change.
  auto o = options("fcfs");
  o.placement = true;
  EXPECT_EQ(slurm::pins_after(after, {}, {job(17, "PENDING", {"n2"})}, {}, {}), (slurm::Pins{{17, {{"n4"}, {"n2"}}}}));
}

TEST(SlurmAdvisor, MultiNodeJobsOnUnpaddedNodeNames) {
  // n9 and n10 sort as "n10" < "n9"; a job on the host list n[9-10] must still be read.
  const char* sinfo = R"J({"nodes": [
    {"name": "n9", "gres": "gpu:v100:8", "gres_used": "gpu:v100:8(IDX:0-7)", "cpus": 32, "alloc_cpus": 2,
     "real_memory": 1000, "alloc_memory": 0, "state": "allocated", "partitions": ["p"]},
    {"name": "n10", "gres": "gpu:v100:8", "gres_used": "gpu:v100:8(IDX:0-7)", "cpus": 32, "alloc_cpus": 2,
     "real_memory": 1000, "alloc_memory": 0, "state": "allocated", "partitions": ["p"]}]})J";
  const char* squeue = R"J({"jobs": [
    {"job_id": 1, "job_state": "RUNNING", "node_count": 2, "tres_per_node": "gres:gpu:v100:8", "submit_time": 100,
     "start_time": 100, "time_limit": 10, "partition": "p", "user_name": "u", "priority": 5, "state_reason": "None",
     "nodes": "n[9-10]", "gres_detail": ["gpu:v100:8(IDX:0-7)", "gpu:v100:8(IDX:0-7)"]},
    {"job_id": 2, "job_state": "PENDING", "node_count": 1, "tres_per_node": "gres:gpu:1", "submit_time": 110,
     "start_time": 0, "time_limit": 5, "partition": "p", "user_name": "u", "priority": 5, "state_reason": "Resources",
     "nodes": ""}]})J";
  const auto d = slurm::decide(slurm::parse_nodes(sinfo), slurm::parse_jobs(squeue), 200, options("fcfs"));
  EXPECT_EQ(d.order, std::vector<long long>{2});
}

TEST(SlurmAdvisor, LeavesPinnedJobsAndOtherPartitionsAlone) {
  const auto nodes = slurm::parse_nodes(fixture("sinfo.json"));
  auto jobs = slurm::parse_jobs(fixture("squeue.json"));
  jobs[10].admin_comment = "rltune=skip";  // job 11
  jobs[11].partition = "other";             // job 12
  auto o = options("sjf");
  o.partition = "debug";
  const auto d = slurm::decide(nodes, jobs, kNow, o);
  EXPECT_EQ(d.order, (std::vector<long long>{16, 13, 14}));
  EXPECT_EQ(d.left_alone, 3u);
  for (const auto& c : d.commands) EXPECT_TRUE(c.job != 11 && c.job != 12 && c.job != 15);
  // --respect-admin-priority 4000: job 13 (priority 4000) is pinned too.
  o.admin_priority = 4000;
  EXPECT_EQ(slurm::decide(nodes, jobs, kNow, o).order, (std::vector<long long>{16, 14}));
}

// From an audit: what the plan cannot model is left out of it, not planned wrongly.
TEST(SlurmAdvisor, LeavesOutWhatThePlanCannotModel) {
  auto nodes = slurm::parse_nodes(fixture("sinfo.json"));
  auto jobs = slurm::parse_jobs(fixture("squeue.json"));
  jobs[15].reason = "Dependency";                 // job 16: waits on another job
  jobs[10].array_tasks = "0-99";                   // job 11: a pending array's tasks
  jobs[11].mixed_gpu_types = true;                 // job 12: GPUs of two types
  auto o = options("sjf");
  o.placement = true;
  const auto d = slurm::decide(nodes, jobs, kNow, o);
  EXPECT_EQ(d.order, (std::vector<long long>{13, 14}));
  EXPECT_EQ(d.left_alone, 4u);  // and 15, held
  for (const auto& c : d.commands) EXPECT_TRUE(c.job == 13 || c.job == 14) << c.job;
  // A node not responding, or with GPUs of two types, is no place to start a job.
  EXPECT_FALSE(slurm::parse_nodes(R"J({"nodes": [{"name": "a", "gres": "gpu:a100:4,gpu:v100:4", "gres_used": "", "cpus": 1,
      "alloc_cpus": 0, "real_memory": 1, "alloc_memory": 0, "state": "idle", "partitions": []}]})J")[0].usable());
  nodes[0].state = "idle+not_responding";
  EXPECT_FALSE(nodes[0].usable());
  EXPECT_TRUE(slurm::parse_gres("gpu:a100:4,gpu:v100:4").mixed);
  EXPECT_FALSE(slurm::parse_gres("gpu:v100:4(S:0),gpu:v100:4(S:1)").mixed);
}

// Hand-made sinfo and squeue answers: 8-GPU V100 nodes; pending jobs asking for GPUs per node.
std::string node_json(const std::string& name, int gpus_used, const std::string& partitions) {
  return fmt::format(R"J({{"name": "{}", "gres": "gpu:v100:8", "gres_used": "gpu:v100:{}", "cpus": 32, "alloc_cpus": 0,
    "real_memory": 1000, "alloc_memory": 0, "state": "{}", "partitions": [{}]}})J",
                     name, gpus_used, gpus_used > 0 ? "allocated" : "idle", partitions);
}
std::string pending_json(long long id, int nodes, int gpus_per_node, int limit_min, const std::string& partition) {
  return fmt::format(R"J({{"job_id": {}, "job_state": "PENDING", "node_count": {}, "tres_per_node": "gres:gpu:{}",
    "submit_time": {}, "start_time": 0, "time_limit": {}, "partition": "{}", "user_name": "u", "priority": 5,
    "state_reason": "Resources", "nodes": ""}})J",
                     id, nodes, gpus_per_node, 100 + id, limit_min, partition);
}

// Without a cluster map, nodes of partitions that share no node form different pools: a job is placed
// only in its own partition (it was placed on a free node of another, which Slurm refuses). Partitions
// that share a node stay one pool, so a job may still span their nodes.
TEST(SlurmAdvisor, PlacesJobsOnlyInTheirPartition) {
  const std::string sinfo = "{\"nodes\": [" + node_json("n1", 8, "\"a\"") + ", " + node_json("n2", 0, "\"b\"") + "]}";
  const std::string running = R"J({"job_id": 1, "job_state": "RUNNING", "node_count": 1, "tres_per_node": "gres:gpu:v100:8",
    "submit_time": 100, "start_time": 100, "time_limit": 10, "partition": "a", "user_name": "u", "priority": 5,
    "state_reason": "None", "nodes": "n1", "gres_detail": ["gpu:v100:8(IDX:0-7)"]})J";
  // SJF: 3 first, on n2; then 2, whose partition has no free GPU.
  const std::string squeue = "{\"jobs\": [" + running + ", " + pending_json(2, 1, 1, 5, "a") + ", " + pending_json(3, 1, 1, 3, "b") + "]}";
  auto o = options("sjf");
  o.placement = true;
  const auto d = slurm::decide(slurm::parse_nodes(sinfo), slurm::parse_jobs(squeue), 200, o);
  EXPECT_EQ(d.cluster, "v100@a: 1 x 8, v100@b: 1 x 8");
  EXPECT_EQ(node_list_commands(d), std::vector<std::string>{"JobId=3 NodeList=n2"});

  const std::string overlapping = "{\"nodes\": [" + node_json("n1", 0, "\"gpu\"") + ", " + node_json("n2", 0, "\"debug\", \"gpu\"") +
                                  ", " + node_json("n3", 0, "") + "]}";
  const std::string two_nodes = "{\"jobs\": [" + pending_json(4, 2, 8, 5, "gpu") + ", " + pending_json(5, 1, 1, 5, "debug,gpu") + "]}";
  const auto both = slurm::decide(slurm::parse_nodes(overlapping), slurm::parse_jobs(two_nodes), 200, options("fcfs"));
  EXPECT_EQ(both.cluster, "v100@debug+gpu: 2 x 8");  // one group of partitions; n3, in none, can run no job
  EXPECT_EQ(both.order, (std::vector<long long>{4, 5}));
  EXPECT_EQ(both.left_alone, 0u);
}

TEST(SlurmAdvisor, InconsistentReadingsAreErrors) {
  auto nodes = slurm::parse_nodes(fixture("sinfo.json"));
  auto jobs = slurm::parse_jobs(fixture("squeue.json"));
  // Fewer GPUs in use than the jobs hold happens between the two readings (a job completing): decided.
  nodes[1].gpus_used = 4;
  EXPECT_EQ(slurm::decide(nodes, jobs, kNow, options("sjf")).order.size(), 5u);
  jobs[7].gpus_on_node = {9};  // job 8 holds 9 GPUs of n2's 8
  EXPECT_THROW(slurm::decide(nodes, jobs, kNow, options("sjf")), SlurmError);
  for (auto& n : nodes) n.state = "down";
  EXPECT_THROW(slurm::decide(nodes, jobs, kNow, options("sjf")), SlurmError);
}

TEST(SlurmAdvisor, ClusterMapAssignsNodesByGpuType) {
  const auto nodes = slurm::parse_nodes(fixture("sinfo.json"));
  cluster::ClusterSpec map = cluster::parse_cluster(
      "name: lab\npools:\n  - {name: small, gpu_type: V100, nodes: 1, gpus_per_node: 8}\n"
      "  - {name: big, gpu_type: V100, nodes: 8, gpus_per_node: 8}\n",
      "map.yaml");
  std::vector<std::string> names;
  const auto spec = slurm::cluster_of(nodes, &map, names);
  ASSERT_EQ(spec.pools.size(), 2u);
  EXPECT_EQ(spec.pools[0].nodes, 1);
  EXPECT_EQ(spec.pools[1].nodes, 3);  // only 3 nodes left
  EXPECT_EQ(names, (std::vector<std::string>{"n1", "n2", "n3", "n4"}));
  EXPECT_EQ(spec.pools[0].gpu_type, "v100");  // jobs ask for Slurm's spelling
  auto o = options("sjf");
  o.cluster_map = &map;
  const auto d = slurm::decide(nodes, slurm::parse_jobs(fixture("squeue.json")), kNow, o);
  EXPECT_EQ(d.order, (std::vector<long long>{16, 12, 13, 14, 11}));
  EXPECT_EQ(d.cluster, "small: 1 x 8, big: 3 x 8");
}

// History as training data: sacct --parsable2 --allocations output (a hand-written sample of its format).
TEST(SacctReader, ReadsAllocationsAndSkipsWhatHasNoDuration) {
  trace::ReadOptions options;
  const trace::Trace t = trace::read_traces({std::string(RLTUNE_FIXTURES) + "/slurm/sacct.txt"}, options);
  EXPECT_EQ(t.format, "sacct");  // auto-detected
  ASSERT_EQ(t.jobs.size(), 4u);
  const auto& a = t.jobs[0];
  EXPECT_EQ(a.id, "101");
  EXPECT_EQ(a.submit, 0);
  EXPECT_EQ(a.duration, 3600);
  EXPECT_EQ(a.gpus, 2);
  EXPECT_EQ(a.gpu_types.size(), 1u);
  EXPECT_EQ(a.cpus, 8);
  EXPECT_EQ(a.memory_mib, 64 * 1024);
  EXPECT_EQ(a.requested_time, 7200);
  EXPECT_EQ(a.vc, "gpu");
  EXPECT_EQ(a.user, "alice");
  const auto& b = t.jobs[1];  // 1-02:00:00 elapsed, untyped GPUs, TIMEOUT
  EXPECT_EQ(b.submit, 300);
  EXPECT_EQ(b.duration, 26 * 3600);
  EXPECT_EQ(b.gpus, 8);
  EXPECT_TRUE(b.gpu_types.empty());
  EXPECT_EQ(b.status, "TIMEOUT");
  EXPECT_EQ(t.jobs[2].gpus, 0);               // CPU-only job kept (rejected at admission, with a reason)
  EXPECT_EQ(t.jobs[2].requested_time, 1800);  // 30:00
  EXPECT_EQ(t.jobs[3].id, "107");             // AllocTRES without gres/gpu=N total: the typed count
  EXPECT_EQ(t.jobs[3].gpus, 4);
  EXPECT_EQ(t.jobs[3].requested_time, 600);
  EXPECT_EQ(testing::skipped(t, "never started"), 1u);
  EXPECT_EQ(testing::skipped(t, "still running (duration not known yet)"), 1u);
  EXPECT_EQ(testing::skipped(t, "job step, not an allocation (use sacct --allocations)"), 1u);
}

TEST(SacctReader, MalformedFieldsNameTheLine) {
  testing::TempFile f("bad.txt", "JobID|Submit|Start|End|Elapsed|AllocTRES|Partition|User|State|Timelimit\n"
                                 "1|2026-11-30T10:00:00|2026-11-30T10:00:01|x|1:xx:00|gres/gpu=1|p|u|COMPLETED|1:00:00\n");
  try {
    trace::read_traces({f.path.string()}, {});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.txt:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Elapsed"), std::string::npos) << e.what();
  }
}

// Out-of-range values are errors naming the field; fractional counts round up, as in the other readers.
TEST(SacctReader, RejectsOutOfRangeValuesAndRoundsGpusUp) {
  const std::string header = "JobID|Submit|Start|End|Elapsed|AllocTRES|Partition|User|State|Timelimit\n";
  const auto row = [](const std::string& elapsed, const std::string& tres, const std::string& id = "1") {
    return id + "|2026-11-30T10:00:00|2026-11-30T10:00:01|x|" + elapsed + "|" + tres + "|p|u|COMPLETED|1:00:00\n";
  };
  const auto error = [&](const std::string& elapsed, const std::string& tres) -> std::string {
    testing::TempFile f("bad.txt", header + row(elapsed, tres));
    try {
      trace::read_traces({f.path.string()}, {});
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_NE(error("1:00:00", "gres/gpu=99999999999").find("gres/gpu=99999999999 is out of range"), std::string::npos)
      << error("1:00:00", "gres/gpu=99999999999");
  EXPECT_NE(error("1:00:00", "cpu=1e300,gres/gpu=1").find("cpu=1e300 is out of range"), std::string::npos);
  EXPECT_NE(error("1:00:00", "gres/gpu=1,mem=9e99G").find("mem=9e99G is out of range"), std::string::npos);
  EXPECT_NE(error("1:00:00", "gres/gpu=-1").find("AllocTRES"), std::string::npos);
  for (const char* elapsed : {"99:99:99", "1:60:00", "10:00:60", "2-24:00:00"})
    EXPECT_NE(error(elapsed, "gres/gpu=1").find("Elapsed"), std::string::npos) << elapsed;

  testing::TempFile ok("ok.txt", header + row("1-23:59:59", "cpu=2.5,gres/gpu=1.5") + row("90:00", "gres/gpu:a100=0.2", "2"));
  const trace::Trace t = trace::read_traces({ok.path.string()}, {});
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].duration, 86400 + 23 * 3600 + 59 * 60 + 59);
  EXPECT_EQ(t.jobs[0].gpus, 2);
  EXPECT_EQ(t.jobs[0].cpus, 3);
  EXPECT_EQ(t.jobs[1].duration, 90 * 60);  // a leading part may exceed its unit
  EXPECT_EQ(t.jobs[1].gpus, 1);
  // The typed GPUs' sum is bounded as each count is: convert wrote 1,200,000, which no reader took back.
  EXPECT_NE(error("1:00:00", "gres/gpu:a100=600000,gres/gpu:v100=600000").find("1200000 GPUs of several types is out of range"),
            std::string::npos);
  // A fraction of a second rounds to the nearest, as the README says times do (it was dropped).
  EXPECT_NE(error("00:00:10.x", "gres/gpu=1").find("Elapsed"), std::string::npos);
  testing::TempFile fractions("frac.txt", header + row("00:00:10.9", "gres/gpu=1") + row("00:00:10.4", "gres/gpu=1", "2"));
  const trace::Trace f = trace::read_traces({fractions.path.string()}, {});
  ASSERT_EQ(f.jobs.size(), 2u);
  EXPECT_EQ(f.jobs[0].duration, 11);
  EXPECT_EQ(f.jobs[1].duration, 10);
}

// Slurm's "D-HH" and "D-HH:MM" (hours after a day count, not minutes and seconds); End before Start names End.
TEST(SacctReader, DayHourLimitsAndEndBeforeStart) {
  const std::string header = "JobID|Submit|Start|End|Elapsed|AllocTRES|Partition|User|State|Timelimit\n";
  const auto row = [](const std::string& id, const std::string& limit) {
    return id + "|2026-11-30T10:00:00|2026-11-30T10:00:01||1:00:00|gres/gpu=1|p|u|COMPLETED|" + limit + "\n";
  };
  testing::TempFile ok("ok.txt", header + row("1", "1-12") + row("2", "1-12:30") + row("3", "1-12:30:15"));
  const trace::Trace t = trace::read_traces({ok.path.string()}, {});
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.jobs[0].requested_time, 36 * 3600);
  EXPECT_EQ(t.jobs[1].requested_time, 36 * 3600 + 30 * 60);
  EXPECT_EQ(t.jobs[2].requested_time, 36 * 3600 + 30 * 60 + 15);
  testing::TempFile backwards("back.txt", "JobID|Submit|Start|End|AllocTRES|State\n"
                                          "1|2026-11-30T10:00:00|2026-11-30T10:05:00|2026-11-30T10:01:00|gres/gpu=1|COMPLETED\n");
  testing::expect_input_error([&] { trace::read_traces({backwards.path.string()}, {}); },
                              "field 'End': value '2026-11-30T10:01:00' is before Start");
}

// GPUs of two types: their sum, with no single type (it was 1 GPU, or both pinned to the first type).
TEST(SacctReader, GpusOfSeveralTypes) {
  const std::string header = "JobID|Submit|Start|End|Elapsed|AllocTRES|State\n";
  const auto row = [](const std::string& id, const std::string& tres) {
    return id + "|2026-11-30T10:00:00|2026-11-30T10:00:01||1:00:00|" + tres + "|COMPLETED\n";
  };
  testing::TempFile f("types.txt", header + row("1", "gres/gpu:a100=1,gres/gpu:v100=1") +
                                       row("2", "gres/gpu:a100=1,gres/gpu:v100=1,gres/gpu=2") + row("3", "gres/gpu:a100=2,gres/gpu=2"));
  const trace::Trace t = trace::read_traces({f.path.string()}, {});
  ASSERT_EQ(t.jobs.size(), 3u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(t.jobs[i].gpus, 2) << i;
    EXPECT_TRUE(t.jobs[i].gpu_types.empty()) << i;
  }
  EXPECT_EQ(t.jobs[2].gpus, 2);
  EXPECT_EQ(t.jobs[2].gpu_types, std::vector<std::string>{"A100"});
}

TEST(Process, CollectsOutputErrorsAndExitStatus) {
  const ProcessOutput o = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"}, "", 10);
  EXPECT_EQ(o.status, 3);
  EXPECT_EQ(o.out, "out\n");
  EXPECT_EQ(o.err, "err\n");
  // More than a pipe holds is read while the program runs.
  EXPECT_EQ(run_process({"sh", "-c", "head -c 200000 /dev/zero | tr '\\0' a"}, "", 10).out, std::string(200000, 'a'));
  EXPECT_EQ(command_line({"scontrol", "update", "JobId=12"}), "scontrol update JobId=12");
}

TEST(Process, AMissingProgramAndATimeOutAreFailures) {
  const ProcessOutput missing = run_process({"rltune-no-such-program"}, "", 10);
  EXPECT_EQ(missing.status, 127);
  EXPECT_NE(missing.err.find("cannot run rltune-no-such-program"), std::string::npos) << missing.err;
  const TempDir dir;
  EXPECT_EQ(run_process({"sinfo"}, dir.path, 10).status, 127);  // looked up in the folder only
  // A program that outlives its time, and a child it started that holds the pipes, are both killed.
  const ProcessOutput slow = run_process({"sh", "-c", "sleep 60 & sleep 60"}, "", 0.2);
  EXPECT_EQ(slow.status, -1);
  EXPECT_NE(slow.err.find("timed out after 0.2 s"), std::string::npos) << slow.err;
}

// A folder of stand-ins for sinfo, squeue and scontrol: the first two answer with the recorded
// fixtures, scontrol appends its arguments to `scontrol.log` and refuses `refuse_job`.
std::string fake_slurm(const std::string& dir, const std::string& sinfo_exit, long long refuse_job,
                       const std::string& refusal = "Access/permission denied") {
  const auto script = [&](const std::string& name, const std::string& body) {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  };
  const std::string fixtures = std::string(RLTUNE_FIXTURES) + "/slurm/";
  script("sinfo", "cat " + fixtures + "sinfo.json; exit " + sinfo_exit);
  script("squeue", "cat " + fixtures + "squeue.json");
  script("scontrol", "echo \"$@\" >> " + dir + "/scontrol.log\n[ \"$2\" = JobId=" + std::to_string(refuse_job) +
                         " ] && { echo '" + refusal + "' >&2; exit 1; }\nexit 0");
  return dir + "/scontrol.log";
}

// The loop's events, one JSON object per line.
std::vector<nlohmann::json> events(const std::string& log) {
  std::vector<nlohmann::json> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

// One cycle on the stand-ins in `dir`, logged as JSON.
slurm::LoopOptions once(const std::string& dir) {
  slurm::LoopOptions loop;
  loop.once = true;
  loop.bin_dir = dir;
  loop.json_log = true;
  return loop;
}

TEST(SlurmLoop, OneCycleAppliesTheDecisionAndLogsEachCommand) {
  const TempDir dir;
  const std::string scontrol_log = fake_slurm(dir.path, "0", 13);
  std::ostringstream log;
  EXPECT_EQ(slurm::run_advisor_loop(options("sjf"), once(dir.path), log), 1);  // a change failed: not a success
  const TempDir accepting;
  fake_slurm(accepting.path, "0", 0);
  std::ostringstream clean_log;
  EXPECT_EQ(slurm::run_advisor_loop(options("sjf"), once(accepting.path), clean_log), 0);
  // A job that started between the reading and its command is Slurm's doing, not a failure.
  const TempDir raced;
  fake_slurm(raced.path, "0", 13, "slurm_update error: Job is no longer pending execution for job 13");
  std::ostringstream raced_log;
  EXPECT_EQ(slurm::run_advisor_loop(options("sjf"), once(raced.path), raced_log), 0);
  const auto e = events(log.str());
  ASSERT_EQ(e.size(), 7u) << log.str();  // start, decision, five priority updates
  EXPECT_EQ(e[0]["event"], "start");
  EXPECT_EQ(e[1]["event"], "decision");
  EXPECT_EQ(e[1]["order"], (std::vector<long long>{16, 12, 13, 14, 11}));
  EXPECT_EQ(e[2]["event"], "applied");
  EXPECT_EQ(e[2]["command"], "scontrol update JobId=16 Priority=683332");
  EXPECT_EQ(e[4]["event"], "failed");  // job 13 refused
  EXPECT_EQ(e[4]["error"], "Access/permission denied");
  std::ifstream in(scontrol_log);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all,
            "update JobId=16 Priority=683332\nupdate JobId=12 Priority=641666\nupdate JobId=13 Priority=600000\n"
            "update JobId=14 Priority=558334\nupdate JobId=11 Priority=516668\n");
}

// Slurm 23.02 on: sinfo --json lists partitions, so the nodes come from scontrol show nodes --json,
// from then on; squeue is asked for every partition's jobs. The decision is the one 22.05's answers give.
TEST(SlurmLoop, ReadsNodesFromScontrolWhereSinfoListsPartitions) {
  const TempDir dir;
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.path + "/" + name) << text;
    return dir.path + "/" + name;
  };
  const auto script = [&](const std::string& name, const std::string& body) {
    std::filesystem::permissions(write(name, "#!/bin/sh\necho \"" + name + " $*\" >> " + dir.path + "/calls.log\n" + body + "\n"),
                                 std::filesystem::perms::owner_all);
  };
  const std::string summary = write("sinfo.json", R"({"sinfo": [{"partition": {"name": "debug"}, "node": {"state": ["IDLE"]}}],
                                                      "errors": [], "warnings": []})");
  script("sinfo", "cat " + summary);
  script("squeue", "cat " + write("squeue.json", jobs_as_24_11()));
  script("scontrol", "[ \"$*\" = \"--all --json show nodes\" ] && cat " + write("nodes.json", nodes_as_24_11()) + "\nexit 0");
  slurm::LoopOptions loop = once(dir.path);
  loop.dry_run = true;
  loop.once = false;
  loop.interval_s = 0.1;
  std::ostringstream log;
  const auto calls = [&] {
    std::ifstream in(dir.path + "/calls.log");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  std::thread stopper([&] {  // stops the loop (as a service manager would) once its second cycle has read squeue
    for (int k = 0; k < 6000; ++k) {
      const std::string so_far = calls();
      if (so_far.find("squeue") != so_far.rfind("squeue")) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::raise(SIGTERM);
  });
  EXPECT_EQ(slurm::run_advisor_loop(options("sjf"), loop, log), 0);
  stopper.join();
  const auto e = events(log.str());
  ASSERT_GE(e.size(), 3u) << log.str();
  EXPECT_EQ(e[1]["event"], "nodes_from_scontrol");
  EXPECT_EQ(e[2]["event"], "decision");
  EXPECT_EQ(e[2]["order"], (std::vector<long long>{16, 12, 13, 14, 11}));  // as from 22.05's answers
  const std::string all = calls();
  EXPECT_EQ(all.substr(0, all.find("squeue")), "sinfo --json\nscontrol --all --json show nodes\n") << all;
  EXPECT_NE(all.find("squeue --all --json\nscontrol --all --json show nodes\nsqueue --all --json\n"), std::string::npos)
      << "the second cycle asks scontrol straight away: " << all;
}

TEST(SlurmLoop, ADryRunChangesNothingAndAnUnreadableClusterSkipsTheCycle) {
  const TempDir dir;
  const std::string scontrol_log = fake_slurm(dir.path, "0", 0);
  slurm::LoopOptions loop = once(dir.path);
  loop.dry_run = true;
  std::ostringstream log;
  EXPECT_EQ(slurm::run_advisor_loop(options("sjf"), loop, log), 0);
  const auto e = events(log.str());
  ASSERT_EQ(e.size(), 7u) << log.str();
  EXPECT_EQ(e[6]["event"], "would_run");
  EXPECT_FALSE(std::filesystem::exists(scontrol_log));

  fake_slurm(dir.path, "2", 0);  // sinfo fails
  std::ostringstream skipped;
  loop.dry_run = false;
  loop.json_log = false;
  EXPECT_EQ(slurm::run_advisor_loop(options("sjf"), loop, skipped), 1);
  EXPECT_NE(skipped.str().find("cycle skipped, nothing applied: sinfo --json failed (exit 2)"), std::string::npos) << skipped.str();
  EXPECT_FALSE(std::filesystem::exists(scontrol_log));
}

// With a state file, a later run (the next --once, a restart) knows the NodeLists an earlier one set:
// it clears them when their jobs no longer start there. Without one, --once could never clear them.
TEST(SlurmLoop, AStateFileCarriesTheNodeListsSetToTheNextRun) {
  const TempDir dir;
  const std::string scontrol_log = fake_slurm(dir.path, "0", 0);
  const std::string state = dir.path + "/state.json";
  const auto commands = [&] {
    std::ifstream in(scontrol_log);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(scontrol_log);
    return all;
  };
  auto placing = options("sjf");
  placing.placement = true;
  slurm::LoopOptions loop = once(dir.path);
  std::ostringstream log;
  testing::expect_input_error([&] { slurm::run_advisor_loop(placing, loop, log); }, "--once with placement needs --state FILE");
  EXPECT_FALSE(std::filesystem::exists(scontrol_log));

  loop.state_file = state;
  EXPECT_EQ(slurm::run_advisor_loop(placing, loop, log), 0);
  EXPECT_NE(commands().find("update JobId=16 NodeList=n1\n"), std::string::npos);
  EXPECT_EQ(slurm::read_state(state), (slurm::Pins{{16, {{"n1"}}}}));
  EXPECT_FALSE(std::filesystem::exists(state + ".lock"));  // released at the end

  // A run after one that set 12's n3 (the recording's 12 asks for n3): under fcfs nothing starts, so it
  // is cleared, with placement or without.
  for (const bool place : {true, false}) {
    write_file(state, slurm::state_text({{12, {{"n3"}}}}));
    auto fcfs = options("fcfs");
    fcfs.placement = place;
    EXPECT_EQ(slurm::run_advisor_loop(fcfs, loop, log), 0);
    EXPECT_NE(commands().find("update JobId=12 NodeList=\n"), std::string::npos) << "placement " << place;
    EXPECT_TRUE(slurm::read_state(state).empty());
  }
  // A dry run reads the record, says what it would clear, and leaves the file as it is.
  write_file(state, slurm::state_text({{12, {{"n3"}}}}));
  loop.dry_run = true;
  std::ostringstream dry;
  EXPECT_EQ(slurm::run_advisor_loop(options("fcfs"), loop, dry), 0);
  EXPECT_NE(dry.str().find("scontrol update JobId=12 NodeList=\""), std::string::npos) << dry.str();
  EXPECT_FALSE(std::filesystem::exists(scontrol_log));
  EXPECT_EQ(slurm::read_state(state), (slurm::Pins{{12, {{"n3"}}}}));
  // One advisor per state file.
  loop.dry_run = false;
  {
    const FileLock held(state + ".lock", "test", "holds it", "");
    testing::expect_input_error([&] { slurm::run_advisor_loop(placing, loop, log); }, "is advising with it");
  }
  EXPECT_FALSE(std::filesystem::exists(scontrol_log));
}

// The NodeLists about to be set are in the state file before Slurm has them: when the file cannot be
// written, no NodeList is set (a pin nobody knows of would stay for good); a set without an answer in
// time is kept as possibly held.
TEST(SlurmLoop, TheStateFileRecordsANodeListBeforeItIsSet) {
  const TempDir dir;
  const std::string scontrol_log = fake_slurm(dir.path, "0", 0);
  const std::string state = dir.path + "/state.json";
  auto placing = options("sjf");
  placing.placement = true;
  slurm::LoopOptions loop = once(dir.path);
  loop.state_file = state;
  // The atomic write goes through state.json.tmp: a folder there, not empty, makes every write fail.
  std::filesystem::create_directories(state + ".tmp/blocker");
  std::ostringstream log;
  EXPECT_EQ(slurm::run_advisor_loop(placing, loop, log), 1);
  std::ifstream in(scontrol_log);
  const std::string ran((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(ran.find("NodeList"), std::string::npos) << ran;
  EXPECT_NE(ran.find("Priority="), std::string::npos) << ran;  // the order is still applied
  EXPECT_NE(log.str().find("\"event\":\"not_run\""), std::string::npos) << log.str();
  std::filesystem::remove_all(state + ".tmp");
  std::filesystem::remove(scontrol_log);

  // An scontrol that applies a NodeList and answers too late: the job may hold it, so it is kept.
  const std::string slow = dir.path + "/scontrol";
  std::ofstream(slow) << "#!/bin/sh\necho \"$@\" >> " << scontrol_log << "\ncase \"$3\" in NodeList=?*) sleep 5;; esac\nexit 0\n";
  std::filesystem::permissions(slow, std::filesystem::perms::owner_all);
  loop.timeout_s = 0.3;
  std::ostringstream slow_log;
  EXPECT_EQ(slurm::run_advisor_loop(placing, loop, slow_log), 1);
  EXPECT_EQ(slurm::read_state(state), (slurm::Pins{{16, {{"n1"}}}})) << slow_log.str();
  // An error is no proof either (scontrol's own time-out exits 1 after slurmctld may have applied it).
  std::filesystem::remove(state);
  fake_slurm(dir.path, "0", 16, "slurm_update error: Socket timed out on send/recv operation");
  loop.timeout_s = 10;
  std::ostringstream refused_log;
  EXPECT_EQ(slurm::run_advisor_loop(placing, loop, refused_log), 1);
  EXPECT_EQ(slurm::read_state(state), (slurm::Pins{{16, {{"n1"}}}})) << refused_log.str();
}

TEST(SlurmLoop, ABrokenStateFileIsAnErrorNamingIt) {
  const TempDir dir;
  const std::string state = dir.path + "/state.json";
  EXPECT_TRUE(slurm::read_state(state).empty());  // not there yet: nothing set
  const auto refused = [&](const std::string& text, const std::string& why) {
    write_file(state, text);
    try {
      slurm::read_state(state);
      ADD_FAILURE() << "accepted " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(state + ": "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  const auto with_lists = [](const std::string& lists) {
    return R"({"format": "rltune slurm state", "version": 1, "node_lists": )" + lists + "}";
  };
  refused("{\"format\": ", "not JSON");
  refused("[]", "expected a JSON object");
  refused(R"({"format": "rltune slurm state", "version": 1, "node_lists": {}, "extra": 1})", "unknown key 'extra'");
  refused(R"({"format": "something else", "version": 1, "node_lists": {}})", "format: expected");
  refused(R"({"format": "rltune slurm state", "version": 2, "node_lists": {}})", "version: expected 1");
  refused(R"({"format": "rltune slurm state", "version": 1})", "node_lists: expected an object");
  refused(with_lists(R"({"16": [["n1"]], "16": [["n2"]]})"), "key '16' appears twice");
  for (const char* id : {"016", "0", "-3", "4294967296", "abc", ""}) refused(with_lists(fmt::format(R"({{"{}": [["n1"]]}})", id)), "is not a Slurm job id");
  refused(with_lists(R"({"16": "n1"})"), "expected a non-empty list of node lists");
  refused(with_lists(R"({"16": []})"), "expected a non-empty list of node lists");
  refused(with_lists(R"({"16": ["n1"]})"), "\"n1\" is not a non-empty list of node names");
  refused(with_lists(R"({"16": [[]]})"), "[] is not a non-empty list of node names");
  refused(with_lists(R"({"16": [["n1", 2]]})"), "2 is not a node name");
  refused(with_lists(R"({"16": [[""]]})"), "is not a node name");
  refused(with_lists(R"({"16": [["n2", "n1", "n2"]]})"), "node 'n2' is listed twice in one list");
  std::filesystem::remove(state);
  std::filesystem::create_directory(state);
  EXPECT_THROW(slurm::read_state(state), InputError);
  // What it writes, it reads back (node names sorted).
  std::filesystem::remove(state);
  write_file(state, with_lists(R"({"4294967295": [["n2", "n1"], ["n1", "n2"], ["n4"]], "7": [["n3"]]})"));
  EXPECT_EQ(slurm::read_state(state), (slurm::Pins{{7, {{"n3"}}}, {4294967295LL, {{"n1", "n2"}, {"n4"}}}}));
  EXPECT_EQ(slurm::read_state(state), [&] {
    write_file(state, slurm::state_text(slurm::read_state(state)));
    return slurm::read_state(state);
  }());
}

}  // namespace
}  // namespace rltune
