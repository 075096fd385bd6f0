// `rltune slurm`: the advisor's command line. The loop lives in slurm/loop.h; see the README.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "sim/engine.h"
#include "slurm/loop.h"

namespace rltune::cli {

namespace {

struct SlurmArgs {
  std::string policy = "fcfs";
  ProfileArgs profile;
  std::string cluster_map;
  std::string interval = "10s";
  std::string partition;
  bool dry_run = false;
  bool once = false;
  std::string bin_dir;
  std::string state_file;
  double timeout_s = 10;
  std::string log_format = "text";
  long long priority_base = 100000;
  long long admin_priority = 0;
  long long default_runtime_s = 86400;
};

// The longest interval or timeout: longer ones overflow the clock's deadlines (inf would time out at once).
constexpr double kMaxSeconds = 86400;

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
  if (v * scale > kMaxSeconds) throw InputError(fmt::format("--interval '{}': at most a day", text));
  // Each cycle asks slurmctld three times and may change many jobs: a shorter period would hammer it.
  if (v * scale < 0.1) throw InputError(fmt::format("--interval '{}': at least 100ms", text));
  return v * scale;
}

int run_slurm(const SlurmArgs& a, bool placement_given) {
  slurm::LoopOptions loop;
  loop.interval_s = parse_interval(a.interval);
  if (a.log_format != "text" && a.log_format != "json") throw InputError("--log-format: text or json");
  loop.json_log = a.log_format == "json";
  if (!(a.timeout_s > 0) || a.timeout_s > kMaxSeconds) throw InputError("--timeout must be positive and at most a day (86400)");
  loop.timeout_s = a.timeout_s;
  loop.once = a.once;
  loop.dry_run = a.dry_run;
  loop.bin_dir = a.bin_dir;
  loop.state_file = a.state_file;
  if (a.priority_base < 1 || a.priority_base > 4'000'000'000LL) throw InputError("--priority-base must be between 1 and 4e9");
  // A job's estimate: at least a second (0 or less would make it end at once in the plan), at most
  // the 1e12 s the trace readers accept as a duration.
  if (a.default_runtime_s < 1 || a.default_runtime_s > 1'000'000'000'000LL)
    throw InputError(fmt::format("--default-runtime {}: must be between 1 and 1e12 seconds", a.default_runtime_s));
  if (const auto at = a.policy.find('@'); at != std::string::npos && placement_given && a.policy.substr(at + 1) != a.profile.placement)
    throw InputError(fmt::format("--placement {} contradicts --policy {}: give the placement once", a.profile.placement, a.policy));
  slurm::AdvisorOptions options;
  options.profile = a.profile.profile(a.policy);
  options.engine = a.profile.engine();
  options.engine.killed_at_limit = true;  // Slurm kills a job at its time limit
  // The advisor reads pending and running jobs only: a predictor would have no finished job to learn
  // from and would answer with time limits, or a guess where there is none.
  if (sim::is_predicted(options.engine.runtime))
    throw InputError(fmt::format("--runtime {}: the Slurm advisor sees no finished jobs to predict from yet; use requested (time "
                                 "limits) or oracle", a.profile.runtime));
  options.placement = placement_given || a.policy.find('@') != std::string::npos;
  options.partition = a.partition;
  options.priority_base = a.priority_base;
  options.admin_priority = a.admin_priority;
  if (a.admin_priority != 0 && a.admin_priority <= a.priority_base + 1'000'000)
    throw InputError("--respect-admin-priority must be above the band (--priority-base + 1000000)");
  options.default_runtime_s = a.default_runtime_s;
  cluster::ClusterSpec map;
  if (!a.cluster_map.empty()) {
    try {
      map = cluster::load_cluster(a.cluster_map);
    } catch (const InputError& e) {  // its message names --cluster, a flag this command does not have
      std::string why = e.what();
      if (why.starts_with("--cluster ")) why.replace(0, 10, "--cluster-map ");
      throw InputError(why);
    }
    options.cluster_map = &map;
  }
  return slurm::run_advisor_loop(options, loop, std::cout);
}

}  // namespace

Command add_slurm(CLI::App& app) {
  auto args = std::make_shared<SlurmArgs>();
  args->profile.runtime = "requested";  // what Slurm knows: time limits
  CLI::App* sub = app.add_subcommand("slurm", "Advise a live Slurm cluster: reorder (and place) pending GPU jobs");
  sub->add_option("--policy", args->policy, "Priority policy (heuristic or rl:DIR); NAME@PLACEMENT also places")
      ->capture_default_str();
  args->profile.add_options(*sub);
  // Slurm has no finished jobs to predict from: predicted runtimes, and their options, are refused (run_slurm).
  sub->get_option("--runtime")->description("Runtime estimates: requested (the jobs' time limits) or oracle");
  sub->get_option("--runtime-model")->group("");
  for (const auto& s : sim::engine_settings()) sub->get_option(s.flag)->group("");
  sub->add_option("--cluster-map", args->cluster_map, "Cluster YAML whose pools take the nodes of their gpu_type "
                                                      "(default: one pool per GPU type)");
  sub->add_option("--interval", args->interval, "Time between cycles (10s, 500ms, 2m)")->capture_default_str();
  sub->add_option("--partition", args->partition, "Only this partition's jobs and nodes");
  sub->add_flag("--dry-run", args->dry_run, "Print the scontrol commands instead of running them");
  sub->add_flag("--once", args->once, "One cycle, then exit (1 if it was skipped or a change failed)");
  sub->add_option("--state", args->state_file,
                  "File that keeps the NodeLists the advisor set, so that a later run clears them (needed by --once with placement)");
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
