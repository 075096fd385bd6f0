// `rltune slurm`: the advisor loop. Each cycle reads the cluster (sinfo/squeue --json), decides with a
// scheduler profile (slurm/advisor.h) and applies the decision with scontrol; see the README.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <chrono>
#include <ctime>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "core/error.h"
#include "slurm/advisor.h"

namespace rltune::cli {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop = true; }

struct SlurmArgs {
  std::string policy = "fcfs";
  ProfileArgs profile;
  std::string cluster_map;
  std::string interval = "10s";
  std::string partition;
  bool dry_run = false;
  bool once = false;
  std::string bin_dir;
  double timeout_s = 10;
  std::string log_format = "text";
  long long priority_base = 100000;
  long long admin_priority = 0;
  long long default_runtime_s = 86400;
};

// "10s", "500ms", "2m", "1h" or plain seconds.
double parse_interval(const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const double scale = unit == "" || unit == "s" ? 1 : unit == "ms" ? 0.001 : unit == "m" ? 60 : unit == "h" ? 3600 : -1;
  if (used == 0 || scale < 0 || !(v > 0)) throw InputError(fmt::format("--interval '{}': expected e.g. 10s, 500ms, 2m", text));
  return v * scale;
}

struct Output {
  int status = -1;  // exit status; -1 = killed at the time limit or could not run
  std::string out, err;
};

// Runs argv (argv[0] looked up in bin_dir when given, else on PATH) with a time limit.
Output run_command(const std::vector<std::string>& argv, const std::string& bin_dir, double timeout_s) {
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  const auto close_all = [&] {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      if (fd >= 0) close(fd);
  };
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) {
    close_all();
    return {-1, "", fmt::format("cannot create a pipe: {}", std::strerror(errno))};
  }
  const std::string program = bin_dir.empty() ? argv[0] : bin_dir + "/" + argv[0];
  const pid_t pid = fork();
  if (pid < 0) {
    close_all();
    return {-1, "", fmt::format("cannot fork: {}", std::strerror(errno))};
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own process group: a time-out kills what it started too
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close_all();
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args[0] = const_cast<char*>(program.c_str());
    args.push_back(nullptr);
    if (bin_dir.empty()) execvp(program.c_str(), args.data());
    else execv(program.c_str(), args.data());
    const std::string why = fmt::format("cannot run {}: {}\n", program, std::strerror(errno));
    [[maybe_unused]] const auto written = write(2, why.data(), why.size());
    _exit(127);
  }
  close(out_pipe[1]), close(err_pipe[1]);
  Output o;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  bool timed_out = false;
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR) break;
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[k].fd, buffer, sizeof buffer);
      if (n > 0) (k == 0 ? o.out : o.err).append(buffer, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) close(fds[k].fd), fds[k].fd = -1, --open_fds;
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  if (timed_out) kill(-pid, SIGKILL), kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    o.status = -1;
    o.err = fmt::format("timed out after {} s", timeout_s);
  } else {
    o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return o;
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

class Log {
 public:
  explicit Log(bool json) : json_(json) {}
  void event(const std::string& kind, nlohmann::ordered_json fields, const std::string& text) {
    if (json_) {
      nlohmann::ordered_json line{{"time", std::time(nullptr)}, {"event", kind}};
      for (auto it = fields.begin(); it != fields.end(); ++it) line[it.key()] = *it;
      std::cout << line.dump() << std::endl;
    } else {
      std::cout << fmt::format("{:%Y-%m-%dT%H:%M:%SZ} {}: {}", fmt::gmtime(std::time(nullptr)), kind, text) << std::endl;
    }
  }

 private:
  bool json_;
};

// One cycle: read, decide, apply. Returns false when the cycle was skipped. `node_lists` = the NodeLists
// the advisor has set, carried from cycle to cycle.
bool cycle(const SlurmArgs& a, slurm::AdvisorOptions options, Log& log,
           std::map<long long, std::vector<std::string>>& node_lists) {
  options.node_lists_set = &node_lists;
  const auto read = [&](std::vector<std::string> argv) {
    const Output o = run_command(argv, a.bin_dir, a.timeout_s);
    if (o.status != 0)
      throw slurm::SlurmError(fmt::format("{} failed ({}): {}", command_text(argv),
                                          o.status < 0 ? "no answer" : fmt::format("exit {}", o.status), o.err.substr(0, 500)));
    return o.out;
  };
  slurm::Decision d;
  try {
    const auto nodes = slurm::parse_nodes(read({"sinfo", "--json"}));
    const auto jobs = slurm::parse_jobs(read({"squeue", "--json"}));
    d = slurm::decide(nodes, jobs, static_cast<long long>(std::time(nullptr)), options);
  } catch (const slurm::SlurmError& e) {
    log.event("skipped", {{"error", e.what()}}, fmt::format("cycle skipped, nothing applied: {}", e.what()));
    return false;
  }
  log.event("decision",
            {{"policy", options.profile.name()}, {"cluster", d.cluster}, {"order", d.order}, {"commands", d.commands.size()},
             {"left_alone", d.left_alone}, {"dry_run", a.dry_run}},
            fmt::format("{} orders {} pending jobs ({} left alone) on {}; {} changes{}", options.profile.name(), d.order.size(),
                        d.left_alone, d.cluster, d.commands.size(), a.dry_run ? " (dry run)" : ""));
  if (!a.dry_run) node_lists = d.node_lists_set;
  for (const auto& c : d.commands) {
    std::string error;
    if (!a.dry_run) {
      const Output o = run_command(c.argv, a.bin_dir, a.timeout_s);
      if (o.status != 0) error = o.err.empty() ? fmt::format("exit {}", o.status) : o.err.substr(0, 300);
      while (!error.empty() && (error.back() == '\n' || error.back() == '\r')) error.pop_back();
      if (!error.empty() && c.argv[3].starts_with("NodeList=")) node_lists.erase(c.job);
    }
    log.event(a.dry_run ? "would_run" : error.empty() ? "applied" : "failed",
              {{"job", c.job}, {"command", command_text(c.argv)}, {"why", c.why}, {"error", error}},
              fmt::format("{}{} ({}){}", a.dry_run ? "would run: " : "", command_text(c.argv), c.why,
                          error.empty() ? "" : " failed: " + error));
  }
  return true;
}

int run_slurm(const SlurmArgs& a, bool placement_given) {
  const double interval = parse_interval(a.interval);
  if (a.log_format != "text" && a.log_format != "json") throw InputError("--log-format: text or json");
  if (!(a.timeout_s > 0)) throw InputError("--timeout must be positive");
  if (a.priority_base < 1 || a.priority_base > 4'000'000'000LL) throw InputError("--priority-base must be between 1 and 4e9");
  slurm::AdvisorOptions options;
  options.profile = a.profile.profile(a.policy);
  options.engine = a.profile.engine();
  // The advisor reads pending and running jobs only: a predictor would have no finished job to learn
  // from and would answer with time limits, or a guess where there is none.
  if (options.engine.runtime == sim::RuntimeKnowledge::predicted)
    throw InputError("--runtime predicted: the Slurm advisor sees no finished jobs to predict from yet; use requested (time limits) or oracle");
  options.placement = placement_given || a.policy.find('@') != std::string::npos;
  options.partition = a.partition;
  options.priority_base = a.priority_base;
  options.admin_priority = a.admin_priority;
  if (a.admin_priority != 0 && a.admin_priority <= a.priority_base + 1'000'000)
    throw InputError("--respect-admin-priority must be above the band (--priority-base + 1000000)");
  options.default_runtime_s = a.default_runtime_s;
  cluster::ClusterSpec map;
  if (!a.cluster_map.empty()) {
    map = cluster::load_cluster(a.cluster_map);
    options.cluster_map = &map;
  }
  signal(SIGINT, on_stop_signal);
  signal(SIGTERM, on_stop_signal);
  Log log(a.log_format == "json");
  log.event("start", {{"policy", options.profile.name()}, {"placement", options.placement}, {"dry_run", a.dry_run}},
            fmt::format("advising with {}{}{}", options.profile.name(), options.placement ? " and placement" : "",
                        a.dry_run ? " (dry run: nothing is changed)" : ""));
  std::map<long long, std::vector<std::string>> node_lists;
  while (!g_stop) {
    const bool ok = cycle(a, options, log, node_lists);
    if (a.once) return ok ? 0 : 1;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(interval);
    while (!g_stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  log.event("stop", {}, "stopped by signal");
  return 0;
}

}  // namespace

Command add_slurm(CLI::App& app) {
  auto args = std::make_shared<SlurmArgs>();
  args->profile.runtime = "requested";  // what Slurm knows: time limits
  CLI::App* sub = app.add_subcommand("slurm", "Advise a live Slurm cluster: reorder (and place) pending GPU jobs");
  sub->add_option("--policy", args->policy, "Priority policy (heuristic or rl:DIR); NAME@PLACEMENT also places")
      ->capture_default_str();
  args->profile.add_options(*sub);
  sub->add_option("--cluster-map", args->cluster_map, "Cluster YAML whose pools take the nodes of their gpu_type "
                                                      "(default: one pool per GPU type)");
  sub->add_option("--interval", args->interval, "Time between cycles (10s, 500ms, 2m)")->capture_default_str();
  sub->add_option("--partition", args->partition, "Only this partition's jobs and nodes");
  sub->add_flag("--dry-run", args->dry_run, "Print the scontrol commands instead of running them");
  sub->add_flag("--once", args->once, "One cycle, then exit (1 if it was skipped)");
  sub->add_option("--slurm-bin-dir", args->bin_dir, "Folder of sinfo, squeue and scontrol (default: PATH)");
  sub->add_option("--timeout", args->timeout_s, "Seconds before a Slurm command is given up")->capture_default_str();
  sub->add_option("--log-format", args->log_format, "text or json (one object per line)")->capture_default_str();
  sub->add_option("--priority-base", args->priority_base, "Lowest priority of the band given to the ordered jobs")
      ->capture_default_str();
  sub->add_option("--respect-admin-priority", args->admin_priority,
                  "Leave alone pending jobs whose priority an administrator raised to at least this value");
  sub->add_option("--default-runtime", args->default_runtime_s, "Runtime estimate (s) of jobs without a time limit")
      ->capture_default_str();
  return {sub, [args, sub] {
            args->profile.check(*sub, {args->policy});
            return run_slurm(*args, sub->count("--placement") > 0);
          }};
}

}  // namespace rltune::cli
