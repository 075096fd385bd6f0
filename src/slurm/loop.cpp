#include "slurm/loop.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <thread>

#include "core/error.h"
#include "core/file.h"
#include "core/json_file.h"
#include "core/json_text.h"
#include "core/process.h"

namespace rltune::slurm {

namespace {

constexpr const char* kStateFormat = "rltune slurm state";
constexpr int kStateVersion = 1;

// A Slurm job id as the state file's key: decimal, 1 to 2^32 - 1 (Slurm's ids are 32-bit), written
// one way only, so that "16" and "016" cannot both name job 16.
std::optional<long long> job_id(const std::string& key) {
  if (key.empty() || key.size() > 10 || key[0] == '0' || !std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const long long id = std::stoll(key);
  return id <= 4294967295LL ? std::optional(id) : std::nullopt;
}

void check_not_folder(const std::string& path) {
  if (std::error_code ec; std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("--state {}: is a folder; give a file's path", path));
}

}  // namespace

Pins read_state(const std::string& path) {
  check_not_folder(path);
  if (std::error_code ec; !std::filesystem::exists(path, ec)) return {};  // the first run: nothing set yet
  const nlohmann::json j = read_json_file(path);
  const auto bad = [&](const std::string& why) {
    return InputError(fmt::format("{}: {}: not a state file of `rltune slurm --state`, or edited (remove it only once no job holds "
                                  "a NodeList the advisor set)",
                                  path, why));
  };
  if (!j.is_object()) throw bad("expected a JSON object");
  for (const auto& [key, value] : j.items())
    if (key != "format" && key != "version" && key != "node_lists") throw bad(fmt::format("unknown key '{}'", key));
  if (!j.contains("format") || j["format"] != kStateFormat) throw bad(fmt::format("format: expected \"{}\"", kStateFormat));
  if (!j.contains("version") || j["version"] != kStateVersion)
    throw bad(fmt::format("version: expected {} (written by another version of rltune?)", kStateVersion));
  if (!j.contains("node_lists") || !j["node_lists"].is_object())
    throw bad("node_lists: expected an object {\"job id\": [[node names], ...]}");
  Pins out;
  for (const auto& [key, lists] : j["node_lists"].items()) {
    const std::optional<long long> id = job_id(key);
    if (!id) throw bad(fmt::format("node_lists: '{}' is not a Slurm job id", key));
    const std::string where = fmt::format("node_lists[\"{}\"]", key);
    if (!lists.is_array() || lists.empty()) throw bad(fmt::format("{}: expected a non-empty list of node lists", where));
    for (const auto& nodes : lists) {
      if (!nodes.is_array() || nodes.empty()) throw bad(fmt::format("{}: {} is not a non-empty list of node names", where, nodes.dump()));
      std::vector<std::string> names;
      for (const auto& n : nodes) {
        if (!n.is_string() || n.get<std::string>().empty()) throw bad(fmt::format("{}: {} is not a node name", where, n.dump()));
        names.push_back(n.get<std::string>());
      }
      std::sort(names.begin(), names.end());
      if (const auto twice = std::adjacent_find(names.begin(), names.end()); twice != names.end())
        throw bad(fmt::format("{}: node '{}' is listed twice in one list", where, *twice));
      add_pin(out, *id, std::move(names));
    }
  }
  return out;
}

std::string state_text(const Pins& pins) {
  nlohmann::ordered_json lists = nlohmann::ordered_json::object();
  for (const auto& [job, node_lists] : pins) lists[std::to_string(job)] = node_lists;
  return json_text(nlohmann::ordered_json{{"format", kStateFormat}, {"version", kStateVersion}, {"node_lists", lists}}, 2) + "\n";
}

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

// The NodeLists the advisor has set, carried from cycle to cycle, and kept in the state file if any.
struct Record {
  std::string file;  // "" = in memory only
  Pins pins;
  std::string saved;  // the file's text as last read or written ("" = no file yet)
  bool nodes_from_scontrol = false;  // Slurm 23.02 on: sinfo --json no longer lists nodes
};

// Writes `pins` to the record's file when they changed since, or the file has gone; false (logged) when
// it cannot.
bool save(Record& record, const Pins& pins, Log& log) {
  if (record.file.empty()) return true;
  const std::string text = state_text(pins);
  if (std::error_code ec; text == record.saved && std::filesystem::exists(record.file, ec)) return true;
  try {
    write_file(record.file, text, /*sync=*/true);  // a NodeList recorded ahead must outlive a power loss
  } catch (const InputError& e) {
    log.event("state_not_saved", {{"error", e.what()}}, fmt::format("state not saved: {}", e.what()));
    return false;
  }
  record.saved = text;
  return true;
}

bool sets_node_list(const Command& c) { return c.argv.size() > 3 && c.argv[3].starts_with("NodeList=") && c.argv[3] != "NodeList="; }

// One cycle: read, decide, apply. Returns false when the cycle was skipped, a change failed or the
// record could not be saved.
bool cycle(const LoopOptions& a, AdvisorOptions options, Log& log, Record& record) {
  options.pins = &record.pins;
  const auto read = [&](std::vector<std::string> argv) {
    const ProcessOutput o = run_process(argv, a.bin_dir, a.timeout_s);
    if (o.status != 0)
      throw SlurmError(fmt::format("{} failed ({}): {}", command_line(argv),
                                   o.status < 0 ? "no answer" : fmt::format("exit {}", o.status), o.err.substr(0, 500)));
    return o.out;
  };
  Decision d;
  std::vector<Job> jobs;
  try {
    std::vector<Node> nodes;
    if (!record.nodes_from_scontrol) {
      const std::string answer = read({"sinfo", "--json"});
      record.nodes_from_scontrol = summarises_partitions(answer);
      if (record.nodes_from_scontrol)
        log.event("nodes_from_scontrol", {}, "sinfo --json lists partitions, not nodes (Slurm 23.02 or later): nodes are read with "
                                             "scontrol show nodes --json from now on");
      else
        nodes = parse_nodes(answer);
    }
    if (record.nodes_from_scontrol)
      nodes = parse_nodes(read({"scontrol", "--all", "--json", "show", "nodes"}), "scontrol show nodes --json");
    // --all: jobs of hidden partitions too (22.05's --json shows them anyway; later ones only when asked).
    jobs = parse_jobs(read({"squeue", "--all", "--json"}));
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
  std::set<long long> not_run, unknown;  // NodeList commands: not run; run without success
  bool applied = true;  // every command, but for jobs that moved on: a cycle whose changes failed is not a success (--once exits 1)
  // Written ahead: the NodeLists about to be set are in the state file before Slurm has them, so that a
  // run killed (or a file that cannot be written) after a command never leaves a pin nobody knows of.
  bool may_set = true;
  if (!a.dry_run && std::any_of(d.commands.begin(), d.commands.end(), sets_node_list)) {
    Pins ahead = record.pins;
    for (const Command& c : d.commands)
      if (sets_node_list(c)) add_pin(ahead, c.job, d.node_lists_set.at(c.job));
    may_set = save(record, ahead, log);
    applied = may_set;
  }
  for (const auto& c : d.commands) {
    std::string error;
    if (!a.dry_run) {
      if (sets_node_list(c) && !may_set) {
        not_run.insert(c.job);
        log.event("not_run", {{"job", c.job}, {"command", command_line(c.argv)}, {"why", c.why}},
                  fmt::format("not run: {} ({}): the state file could not record it first", command_line(c.argv), c.why));
        continue;
      }
      const ProcessOutput o = run_process(c.argv, a.bin_dir, a.timeout_s);
      if (o.status != 0) error = o.err.empty() ? fmt::format("exit {}", o.status) : o.err.substr(0, 300);
      while (!error.empty() && (error.back() == '\n' || error.back() == '\r')) error.pop_back();
      // An error does not prove that nothing changed (scontrol's own time-out exits 1 after slurmctld may
      // have applied it): the NodeList the job may hold now is kept as well.
      if (!error.empty() && c.argv[3].starts_with("NodeList=")) unknown.insert(c.job);
      applied = applied && (error.empty() || overtaken(error));
    }
    log.event(a.dry_run ? "would_run" : error.empty() ? "applied" : "failed",
              {{"job", c.job}, {"command", command_line(c.argv)}, {"why", c.why}, {"error", error}},
              fmt::format("{}{} ({}){}", a.dry_run ? "would run: " : "", command_line(c.argv), c.why,
                          error.empty() ? "" : " failed: " + error));
  }
  if (a.dry_run) return applied;
  record.pins = pins_after(record.pins, d, jobs, not_run, unknown);
  return save(record, record.pins, log) && applied;
}

}  // namespace

int run_advisor_loop(const AdvisorOptions& options, const LoopOptions& loop, std::ostream& out) {
  if (loop.once && options.placement && !loop.dry_run && loop.state_file.empty())
    throw InputError("--once with placement needs --state FILE: the NodeLists one run sets can be cleared only by a later run that "
                     "knows them (when their jobs no longer start there)");
  std::optional<FileLock> lock;
  Record record{loop.state_file, {}, ""};
  if (!loop.state_file.empty()) {
    check_not_folder(loop.state_file);  // before a lock file is made beside it
    // One advisor per state file: two would each clear what the other set. A dry run only reads it.
    // Beside the file itself, so that two links to one state file take the same lock.
    std::error_code ec;
    const std::filesystem::path resolved = std::filesystem::weakly_canonical(loop.state_file, ec);
    if (!loop.dry_run)
      lock.emplace(fmt::format("{}.lock", ec ? loop.state_file : resolved.string()), fmt::format("--state {}", loop.state_file),
                   "is advising with it", "one advisor per state file");
    record.pins = read_state(loop.state_file);
    if (std::filesystem::exists(loop.state_file, ec)) record.saved = state_text(record.pins);
  }
  // Stop between cycles on SIGINT or SIGTERM; the caller's handlers come back afterwards.
  g_stop = false;
  const auto old_int = std::signal(SIGINT, on_stop_signal);
  const auto old_term = std::signal(SIGTERM, on_stop_signal);
  Log log(loop.json_log, out);
  log.event("start", {{"policy", options.profile.name()}, {"placement", options.placement}, {"dry_run", loop.dry_run}},
            fmt::format("advising with {}{}{}", options.profile.name(), options.placement ? " and placement" : "",
                        loop.dry_run ? " (dry run: nothing is changed)" : ""));
  int status = 0;
  while (!g_stop) {
    const auto cycle_start = std::chrono::steady_clock::now();  // the period runs from start to start
    const bool ok = cycle(loop, options, log, record);
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
