#include "slurm/loop.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>
#include <map>
#include <ostream>
#include <set>
#include <thread>

#include "core/json_text.h"
#include "core/process.h"

namespace rltune::slurm {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop = true; }

class Log {
 public:
  Log(bool json, std::ostream& out) : json_(json), out_(out) {}
  void event(const std::string& kind, nlohmann::ordered_json fields, const std::string& text) {
    if (json_) {
      nlohmann::ordered_json line{{"time", std::time(nullptr)}, {"event", kind}};
      for (auto it = fields.begin(); it != fields.end(); ++it) line[it.key()] = *it;
      out_ << json_text(line) << std::endl;
    } else {
      out_ << fmt::format("{:%Y-%m-%dT%H:%M:%SZ} {}: {}", fmt::gmtime(std::time(nullptr)), kind, text) << std::endl;
    }
  }

 private:
  bool json_;
  std::ostream& out_;
};

// Whether a command failed only because its job moved on between the reading and the command (it
// started, ended or left): Slurm's own doing, which the next cycle sees, not a failure of the advisor.
bool overtaken(const std::string& error) {
  for (const char* moved_on : {"no longer pending", "Invalid job id", "already completing or completed", "Job has already finished"})
    if (error.find(moved_on) != std::string::npos) return true;
  return false;
}

// One cycle: read, decide, apply. Returns false when the cycle was skipped. `node_lists` = the NodeLists
// the advisor has set, carried from cycle to cycle.
bool cycle(const LoopOptions& a, AdvisorOptions options, Log& log, std::map<long long, std::vector<std::string>>& node_lists) {
  options.node_lists_set = &node_lists;
  const auto read = [&](std::vector<std::string> argv) {
    const ProcessOutput o = run_process(argv, a.bin_dir, a.timeout_s);
    if (o.status != 0)
      throw SlurmError(fmt::format("{} failed ({}): {}", command_line(argv),
                                   o.status < 0 ? "no answer" : fmt::format("exit {}", o.status), o.err.substr(0, 500)));
    return o.out;
  };
  Decision d;
  try {
    const auto nodes = parse_nodes(read({"sinfo", "--json"}));
    const auto jobs = parse_jobs(read({"squeue", "--json"}));
    d = decide(nodes, jobs, static_cast<long long>(std::time(nullptr)), options);
  } catch (const SlurmError& e) {
    log.event("skipped", {{"error", e.what()}}, fmt::format("cycle skipped, nothing applied: {}", e.what()));
    return false;
  }
  log.event("decision",
            {{"policy", options.profile.name()}, {"cluster", d.cluster}, {"order", d.order}, {"commands", d.commands.size()},
             {"left_alone", d.left_alone}, {"dry_run", a.dry_run}},
            fmt::format("{} orders {} pending jobs ({} left alone) on {}; {} changes{}", options.profile.name(), d.order.size(),
                        d.left_alone, d.cluster, d.commands.size(), a.dry_run ? " (dry run)" : ""));
  std::set<long long> failed_node_lists;
  bool applied = true;  // every command, but for jobs that moved on: a cycle whose changes failed is not a success (--once exits 1)
  for (const auto& c : d.commands) {
    std::string error;
    if (!a.dry_run) {
      const ProcessOutput o = run_process(c.argv, a.bin_dir, a.timeout_s);
      if (o.status != 0) error = o.err.empty() ? fmt::format("exit {}", o.status) : o.err.substr(0, 300);
      while (!error.empty() && (error.back() == '\n' || error.back() == '\r')) error.pop_back();
      if (!error.empty() && c.argv[3].starts_with("NodeList=")) failed_node_lists.insert(c.job);
      applied = applied && (error.empty() || overtaken(error));
    }
    log.event(a.dry_run ? "would_run" : error.empty() ? "applied" : "failed",
              {{"job", c.job}, {"command", command_line(c.argv)}, {"why", c.why}, {"error", error}},
              fmt::format("{}{} ({}){}", a.dry_run ? "would run: " : "", command_line(c.argv), c.why,
                          error.empty() ? "" : " failed: " + error));
  }
  if (!a.dry_run) node_lists = node_lists_after(node_lists, d, failed_node_lists);
  return applied;
}

}  // namespace

int run_advisor_loop(const AdvisorOptions& options, const LoopOptions& loop, std::ostream& out) {
  // Stop between cycles on SIGINT or SIGTERM; the caller's handlers come back afterwards.
  g_stop = false;
  const auto old_int = std::signal(SIGINT, on_stop_signal);
  const auto old_term = std::signal(SIGTERM, on_stop_signal);
  Log log(loop.json_log, out);
  log.event("start", {{"policy", options.profile.name()}, {"placement", options.placement}, {"dry_run", loop.dry_run}},
            fmt::format("advising with {}{}{}", options.profile.name(), options.placement ? " and placement" : "",
                        loop.dry_run ? " (dry run: nothing is changed)" : ""));
  std::map<long long, std::vector<std::string>> node_lists;
  int status = 0;
  while (!g_stop) {
    const auto cycle_start = std::chrono::steady_clock::now();  // the period runs from start to start
    const bool ok = cycle(loop, options, log, node_lists);
    if (loop.once) {
      status = ok ? 0 : 1;
      break;
    }
    const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(loop.interval_s));
    const auto until = cycle_start + period;
    while (!g_stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (g_stop) log.event("stop", {}, "stopped by signal");
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  return status;
}

}  // namespace rltune::slurm
