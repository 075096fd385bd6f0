// `rltune train` and `rltune export` (run by rltune-train, the only program linked with LibTorch).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "cluster/presets.h"
#include "core/comm.h"
#include "core/error.h"
#include "core/file.h"
#include "core/json_file.h"
#include "policy/registry.h"
#include "rl/rl_policy.h"
#include "rl/torch/ppo_learner.h"
#include "rl/trainer.h"
#include "workload/model.h"

namespace rltune::cli {

namespace {

struct TrainArgs {
  std::string cluster = "helios";
  TraceArgs trace;
  ProfileArgs profile;
  rl::TrainOptions options;
  std::string baseline = "fcfs";
  std::string score = "bsld";
  std::string features = "paper";
  std::string teacher = "baseline";
  bool attention = false;
  bool reconsider = false;
  bool quiet = false;
  std::string init_policy;  // a policy file whose weights the policy starts from
};

// The arguments after `train`, as given (run_train stores them in config.json for --resume).
std::vector<std::string> train_arguments;

// Whether `args[i]` is option `name` ("--name VALUE" or "--name=VALUE"); `span` = how many arguments it takes.
bool is_option(const std::vector<std::string>& args, std::size_t i, const std::string& name, std::size_t& span) {
  if (args[i] == name) {
    span = 2;
    return true;
  }
  span = 1;
  return args[i].starts_with(name + "=");
}

// The files the run reads, with their digests: a resume refuses to go on when one has changed.
report::Json input_files(const TrainArgs& a) {
  const TraceArgs& t = a.trace;
  std::set<std::string> files(t.paths.begin(), t.paths.end());
  for (const std::string& f : {t.pai_job_table, t.read.duration_source, t.read.pai_task_table, a.profile.runtime_model})
    if (!f.empty()) files.insert(f);
  // A preset or family name is read from the program, whatever file of that name is here.
  const std::vector<std::string> families = workload::family_names();
  const auto is_cluster_preset = [](const std::string& name) {
    return std::any_of(cluster::presets().begin(), cluster::presets().end(), [&](const auto& p) { return p.name == name; });
  };
  if (!a.cluster.empty() && !is_cluster_preset(a.cluster)) files.insert(a.cluster);
  if (!t.like.empty() && std::find(families.begin(), families.end(), t.like) == families.end()) files.insert(t.like);
  report::Json out = report::Json::object();
  for (const auto& [file, digest] : file_digests(files)) out[file] = digest;
  return out;
}

int run_train(TrainArgs& a) {
  const Comm& comm = world();
  cluster::ClusterSpec cluster;
  trace::Trace trace;
  rl::TrainOptions& o = a.options;
  report::Json config;
  std::optional<rl::PolicyFile> init;
  // The same on every rank, but a rank may fail to read a file; one error, from rank 0, when all fail.
  together(comm, [&] {
    check_out_dir(o.out, "train");  // before anything else: a simulate or experiment folder's config.json would be replaced
    if (o.resume && !std::filesystem::is_directory(o.out))  // not made: a misspelt --out would leave an empty folder
      throw InputError(fmt::format("--resume: {} is not a folder: there is no run to resume", o.out));
    cluster = cluster::load_cluster(a.cluster);
    trace = a.trace.load(cluster);
    if (static_cast<std::size_t>(o.env.window.length) > trace.jobs.size())  // the environment would say window.length
      throw InputError(fmt::format("--window-len {}: must be at most the trace's {} jobs", o.env.window.length, trace.jobs.size()));
    try {  // the baseline orders the observed queue: a priority order, said as the flag before anything runs
      (void)policy::make_priority(a.baseline, {});
    } catch (const InputError& e) {
      throw InputError(fmt::format("--baseline: {}", e.what()));
    }
    o.env.baseline = a.baseline;
    o.env.score = rl::parse_score(a.score);
    o.env.profile = a.profile.profile(a.baseline);
    o.env.engine = a.profile.engine();
    o.env.observation.features = rl::parse_feature_set(a.features);
    o.teacher = rl::kTeacherNames.parse(a.teacher);
    if (o.teacher != rl::Teacher::baseline && o.imitation_epochs == 0) throw InputError("--teacher " + a.teacher + " needs --imitate N");
    o.arch = a.attention ? rl::Arch::attention : rl::Arch::mlp;
    o.env.commit = !a.reconsider;
    o.seed = a.trace.sample_seed;
    o.progress = !a.quiet;
    config["command"] = "train";
    config["arguments"] = train_arguments;
    config["cluster"] = cluster.source;
    a.trace.describe(config, cluster, trace);
    a.profile.describe(config, o.env.profile);
    config["inputs"] = input_files(a);
    // A resume goes on from model.pt, which holds what the file started: the file may have changed since
    // (another run still training, say) or be gone. The run's own record of it stands, for the same file.
    const std::filesystem::path run_dir(o.out);
    const auto stored = o.resume && std::filesystem::exists(run_dir / "model.pt") ? read_file((run_dir / "config.json").string()) : std::nullopt;
    const nlohmann::json previous = stored ? nlohmann::json::parse(*stored, nullptr, /*allow_exceptions=*/false) : nlohmann::json();
    if (!a.init_policy.empty() && previous.is_object() && previous.contains("init_policy") && previous["init_policy"].is_object()) {
      const std::string started = previous["init_policy"].value("path", "");
      if (started != a.init_policy && std::filesystem::path(started).parent_path() != std::filesystem::path(a.init_policy))
        throw InputError(fmt::format("--resume: the run in {} started from {}, not from --init-policy {}", o.out, started, a.init_policy));
      config["init_policy"] = previous["init_policy"];
    } else if (!a.init_policy.empty()) {
      init = rl::load_policy(a.init_policy);
      const auto& net = init->net;
      const int features = rl::feature_count(o.env.observation.features);
      if (net.arch != o.arch || net.features != features || net.skip != o.env.skip)
        throw InputError(fmt::format("--init-policy {}: a {} policy of {} features{} cannot start a {} policy of {} features{}", a.init_policy,
                                     rl::to_string(net.arch), net.features, net.skip ? " with skip" : "", rl::to_string(o.arch), features,
                                     o.env.skip ? " with skip" : ""));
      // Recorded, so that a resume must name the same file with the same content.
      const std::string& file = init->files.front();  // the policy file itself when given a run's folder
      config["init_policy"] = {{"path", file}, {"digest", file_digest(file).value_or("")}, {"epoch", init->epoch}};
    }
  });
  // Wall-clock-free: the timing-dependent parts of a run live in progress.csv only.
  std::cout << fmt::format("cluster  {}: {} pools, {} GPUs; trace {} ({} jobs)\n", cluster.name, cluster.pools.size(),
                           cluster.total_gpus(), trace.source, trace.jobs.size());
  const std::string ranks = comm.size() > 1 ? fmt::format(" on each of {} MPI ranks", comm.size()) : "";
  std::cout << fmt::format("training {} policy ({} features) against {} on {}, {} epochs x {} trajectories of {} jobs, {} thread(s){}\n",
                           rl::to_string(o.arch), a.features, a.baseline, a.score, o.epochs, o.trajs, o.env.window.length, o.threads, ranks);
  auto learner = rl::make_ppo_learner(o.arch, rl::feature_count(o.env.observation.features), o.env.skip, o.ppo, o.seed, o.threads, comm);
  if (init) learner->set_policy(init->net);  // the critic starts afresh; a resume then loads model.pt over both
  const auto records = rl::train(cluster, trace.jobs, o, *learner, config, comm);
  if (!records.empty()) {
    const auto& last = records.back();
    std::cout << fmt::format("epoch {}: mean return {:+.3f}; {} {:.4g} vs baseline {:.4g}; validation return {:+.3f}\n", last.epoch,
                             last.mean_return, a.score, last.rl_score, last.baseline_score, last.validation_return);
  }
  const bool runtime_model = o.env.engine.runtime == sim::RuntimeKnowledge::learned;  // the fitted model is written beside
  std::cout << fmt::format("wrote model.pt, best.pt, policy.json, best.json, progress.csv{} and config.json under {}\n",
                           runtime_model ? ", runtime-model.json" : "", o.out);
  const std::string semantics = o.env.profile.semantics == "rltune" ? "" : fmt::format(" --semantics {}", o.env.profile.semantics);
  std::cout << fmt::format("next: rltune evaluate --model {} --cluster {}{} ...   or   rltune simulate --policy rl:{}{}\n", o.out,
                           a.cluster, semantics, o.out, semantics);
  return 0;
}

}  // namespace

std::vector<std::string> resumed_train_arguments(std::vector<std::string> command_line) {
  const auto train = std::find(command_line.begin(), command_line.end(), "train");
  if (train == command_line.end()) return command_line;
  const std::size_t first = static_cast<std::size_t>(train - command_line.begin()) + 1;
  train_arguments.assign(command_line.begin() + static_cast<std::ptrdiff_t>(first), command_line.end());
  // What this invocation says: the run folder, and the settings that may change on a resume.
  std::string out;
  bool resume = false, epochs_given = false, other_settings = false;
  std::vector<std::string> overrides;
  for (std::size_t i = first, span = 1; i < command_line.size(); i += span) {
    const std::string& a = command_line[i];
    if (a == "--resume" || a == "--quiet") {
      span = 1;
      resume = resume || a == "--resume";
      overrides.push_back(a);
    } else if (is_option(command_line, i, "--out", span)) {
      out = span == 2 ? (i + 1 < command_line.size() ? command_line[i + 1] : "") : a.substr(6);
    } else if (is_option(command_line, i, "--epochs", span) || is_option(command_line, i, "--threads", span) ||
               is_option(command_line, i, "--log-level", span)) {
      epochs_given = epochs_given || command_line[i].starts_with("--epochs");
      for (std::size_t k = i; k < i + span && k < command_line.size(); ++k) overrides.push_back(command_line[k]);
    } else {
      span = 1;
      other_settings = true;  // parsed as given (and checked against the run)
    }
  }
  if (!resume || out.empty()) return command_line;
  nlohmann::json stored;
  try {
    stored = read_json_file((std::filesystem::path(out) / "config.json").string());
  } catch (const InputError&) {
    return command_line;  // train reports the unreadable config
  }
  if (!stored.is_object()) return command_line;
  // Not given here: --epochs is the last invocation's (config.json's options.epochs), so an interrupted
  // run resumes towards the end it was going to, whether the other settings are given or taken from the run.
  std::vector<std::string> restored;
  if (!epochs_given && stored.contains("options") && stored["options"].is_object() && stored["options"].contains("epochs") &&
      stored["options"]["epochs"].is_number_integer())
    restored = {"--epochs", std::to_string(stored["options"]["epochs"].get<long long>())};
  const auto strings = [](const nlohmann::json& list) {
    return list.is_array() && std::all_of(list.begin(), list.end(), [](const nlohmann::json& a) { return a.is_string(); });
  };
  if (other_settings || !stored.contains("arguments") || !strings(stored["arguments"])) {  // train says what is wrong
    // Right after "train": at the end it could follow a "--".
    command_line.insert(command_line.begin() + static_cast<std::ptrdiff_t>(first), restored.begin(), restored.end());
    return command_line;
  }
  std::vector<std::string> args(command_line.begin(), command_line.begin() + static_cast<std::ptrdiff_t>(first));
  const auto original = stored["arguments"].get<std::vector<std::string>>();
  const auto overridden = [&](const char* flag) {
    for (std::size_t i = 0, span = 1; i < overrides.size(); i += span)
      if (is_option(overrides, i, flag, span)) return true;
    return false;
  };
  // --threads and --log-level not given here are the run's own.
  for (std::size_t i = 0, span = 1; i < original.size(); i += span) {
    bool replaced = is_option(original, i, "--out", span);
    if (!replaced && is_option(original, i, "--epochs", span)) replaced = overridden("--epochs") || !restored.empty();
    for (const char* flag : {"--threads", "--log-level"})
      if (!replaced && is_option(original, i, flag, span)) replaced = overridden(flag);
    if (!replaced) {
      span = 1;
      // "--" ends the options: train takes no other arguments, so a stored one would only hide those added here.
      if (original[i] != "--resume" && original[i] != "--quiet" && original[i] != "--") args.push_back(original[i]);
    }
  }
  args.insert(args.end(), restored.begin(), restored.end());
  args.push_back("--out");
  args.push_back(out);
  args.insert(args.end(), overrides.begin(), overrides.end());
  train_arguments.assign(original.begin(), original.end());  // what config.json keeps: the run's own
  return args;
}

Command add_train(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  args->trace.sample_jobs = 20000;  // training windows need a long trace; evaluate uses the same default
  // Every core by default (shared by the MPI ranks on this machine): the model does not depend on it.
  args->options.threads = default_threads();
  CLI::App* sub = app.add_subcommand("train", "Train a PPO policy that picks the next job (docs/published-rltune.md)");
  sub->add_option("--cluster", args->cluster, "Cluster preset (" + cluster::preset_names() + ") or YAML file")
      ->capture_default_str();
  args->trace.add_options(*sub);
  sub->get_option("--seed")->description("Seed of training (initial weights, windows, actions) and of the generated workload");
  args->profile.add_options(*sub);
  rl::TrainOptions& o = args->options;
  sub->add_option("--out", o.out, "Run directory (checkpoints, progress.csv, config.json)")->check(path_name())->required();
  sub->add_flag("--resume", o.resume, "Continue the run in --out from its last checkpoint (same arguments; --epochs and --threads may change; without --epochs, to the end the last invocation set)");
  sub->add_option("--baseline", args->baseline, "Heuristic the reward compares against; also orders the observed queue")
      ->capture_default_str();
  sub->add_option("--score", args->score, "Score to improve: bsld, wait, jct, sld or util")
      ->capture_default_str()
      ->check(CLI::IsMember(rl::kScoreNames.names()));
  sub->add_option("--features", args->features, "paper (the published RLTune's 7, docs/published-rltune.md), extended (+ runtime estimate, age rank, pool load), ranked (extended + the job's place in "
                  "the --baseline order) or realistic (ranked + how far the user's estimates have been off, and where the estimate came from)")
      ->capture_default_str()
      ->check(CLI::IsMember(rl::kFeatureSetNames.names()));
  sub->add_flag("--attention", args->attention, "Self-attention policy instead of the per-slot MLP");
  sub->add_flag("--reconsider", args->reconsider,
                "A pick that cannot start yet blocks only until the next event, then the policy picks again (as heuristics "
                "do); default: it is a commitment, as in the reference");
  sub->add_flag("--skip", o.env.skip, "Let the policy also wait: start nothing until the next event or 600 s later (docs/published-rltune.md, B8)");
  add_settings(*sub, rl::train_settings(), o);
  sub->add_option("--teacher", args->teacher,
                  "Whose picks --imitate clones: baseline (the --baseline's), clairvoyant (of the visible jobs, the one with the "
                  "shortest true duration: hindsight from the training windows; the model still sees only estimates) or sjf-sampled "
                  "(its draws at temperature 1, so that the policy, drawn from, starts as that heuristic)")
      ->capture_default_str()
      ->check(CLI::IsMember(rl::kTeacherNames.names()));
  sub->add_option("--window-len", o.env.window.length, "Jobs per episode")
      ->capture_default_str()
      ->check(setting_bounds(sim::window_setting("length")));
  sub->add_option("--warmup", o.env.window.warmup,
                  "Jobs before each episode's window replayed first by fcfs (same placement, blocking, backfill), not scored")
      ->capture_default_str()
      ->check(setting_bounds(sim::window_setting("warmup")));
  sub->add_option("--train-split", o.env.window.train_split, "Share of the trace (by job index) that training windows come from")
      ->capture_default_str()
      ->check(setting_bounds(sim::window_setting("train_split")));
  add_settings(*sub, rl::ppo_settings(), o.ppo);
  sub->add_option("--init-policy", args->init_policy,
                  "Start the policy from this policy file's weights (policy.json or best.json of a run with the same --features, "
                  "--attention and --skip), e.g. to adapt a model to another regime; default: random weights")
      ->type_name("FILE");
  sub->add_flag("--quiet", args->quiet, "No progress bar or progress lines");
  return {sub, [args, sub] {
            args->profile.check(*sub, {args->baseline});  // the baseline is the policy the settings would apply to
            if (sub->count("--imitation-lr") > 0 && args->options.imitation_epochs == 0) throw InputError("--imitation-lr needs --imitate N");
            return run_train(*args);
          }};
}

Command add_export(CLI::App& app) {
  auto model = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("export", "Write a trained policy as a TorchScript module for Python");
  sub->add_option("--model", *model, "Training run directory (its best.json) or a policy .json file")->required();
  sub->add_option("--torchscript", *out, "Output file (forward(obs [B,128,F], mask [B,128]) -> logits [B,128])")
      ->check(path_name())
      ->required();
  return {sub, [model, out] {
            // Written over the policy or a file of its training run (a checkpoint), the export would destroy it.
            const std::filesystem::path given(*model);
            const std::filesystem::path run = std::filesystem::is_directory(given) ? given : given.parent_path();
            std::vector<std::string> kept{given.string()};
            for (const char* file : {"model.pt", "best.pt", "best.json", "policy.json", "config.json", "progress.csv"}) kept.push_back((run / file).string());
            refuse_overwriting("--torchscript", *out, kept);
            // Nor over a file of another rltune run (its checkpoint, say): such a folder's config.json names its command.
            const std::filesystem::path target(*out);
            const std::filesystem::path folder = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
            if (const auto config = read_file((folder / "config.json").string());
                std::filesystem::exists(target) && config && nlohmann::json::parse(*config, nullptr, /*allow_exceptions=*/false).contains("command"))
              throw InputError(fmt::format("--torchscript {}: would replace a file of the rltune results in {}; choose another file",
                                           *out, folder.string()));
            const rl::PolicyFile policy = rl::load_policy(*model);
            auto learner = rl::make_ppo_learner(policy.net.arch, policy.net.features, policy.net.skip, {}, 0, 1);
            learner->set_policy(policy.net);
            learner->export_torchscript(*out);
            std::cout << fmt::format("wrote {} ({} policy, {} features per slot, epoch {})\n", *out, rl::to_string(policy.net.arch),
                                     policy.net.features, policy.epoch);
            return 0;
          }};
}

}  // namespace rltune::cli
