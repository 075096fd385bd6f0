#include "rl/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>

#include "core/csv.h"
#include "core/error.h"
#include "core/file.h"
#include "core/json_file.h"
#include "core/json_text.h"
#include "core/log.h"
#include "core/parallel.h"
#include "core/progress.h"
#include "rl/rollout.h"
#include "sim/runtime_fit.h"

namespace rltune::rl {

namespace fs = std::filesystem;

std::span<const NumberSetting<PpoOptions>> ppo_settings() {
  using P = PpoOptions;
  static const NumberSetting<P> settings[] = {
      {"--clip", "clip", "PPO clip ratio", 0, 1, &P::clip},
      {"--gamma", "gamma", "Discount", 0, 1, &P::gamma},
      {"--lambda", "lambda", "GAE lambda", 0, 1, &P::lambda},
      {"--pi-lr", "pi_lr", "Policy learning rate (Adam)", 0, 1, &P::pi_lr},
      {"--vf-lr", "vf_lr", "Value learning rate (Adam)", 0, 1, &P::vf_lr},
      {"--pi-iters", "pi_iters", "Policy steps per epoch (full batch)", 0, 100000, &P::pi_iters},
      {"--vf-iters", "vf_iters", "Value steps per epoch (full batch)", 0, 100000, &P::vf_iters},
      {"--target-kl", "target_kl", "Policy steps stop once KL > 1.5 x this", 0, 100, &P::target_kl},
      {"--ent-coef", "ent_coef", "Entropy bonus: the policy loss minus this x the mean entropy of the picks (none in the reference)",
       0, 1, &P::ent_coef},
      {"--imitation-lr", "imitation_lr",
       "Policy learning rate (Adam) while cloning the teacher (--imitate); 0: --pi-lr. Cloning a drawing teacher's probabilities "
       "converges far faster at 1e-2",
       0, 1, &P::imitation_lr},
  };
  return settings;
}

std::span<const NumberSetting<TrainOptions>> train_settings() {
  using T = TrainOptions;
  static const NumberSetting<T> settings[] = {
      {"--epochs", "epochs", "Epochs", 1, 1e6, &T::epochs},
      {"--imitate", "imitation_epochs",
       "Epochs of behaviour cloning of the --baseline's picks before PPO, so that it starts from the baseline's schedule", 0, 1e6,
       &T::imitation_epochs},
      {"--trajs", "trajs", "Trajectories (episodes) per epoch", 1, 1e6, &T::trajs},
      {"--threads", "threads",
       "Threads for rollouts and updates (default: every core, shared by the MPI ranks on this machine; the model is the same for "
       "any count)",
       1, 4096, &T::threads},
      {"--validation-windows", "validation_windows", "Validation windows scored after every epoch (picks best.pt)", 0, 100000,
       &T::validation_windows},
      {"--validation-temperature", "validation_temperature",
       "Validation draws each pick from the policy at this temperature, as rl-sampled runs it (0: the argmax, as rl runs it)", 0,
       100, &T::validation_temperature},
  };
  return settings;
}

nlohmann::json PpoOptions::to_json() const {
  nlohmann::json j;
  write_settings(j, *this, ppo_settings());
  // Runs without these record what they did before the settings existed.
  if (ent_coef == 0) j.erase("ent_coef");
  if (imitation_lr == 0) j.erase("imitation_lr");
  j["adv_eps"] = adv_eps;
  return j;
}

nlohmann::json to_json(const TrainOptions& o) {
  const auto& p = o.env.profile;
  nlohmann::json j = {{"arch", to_string(o.arch)},
          {"features", to_string(o.env.observation.features)},
          {"window_len", o.env.window.length},
          {"train_split", o.env.window.train_split},
          {"baseline", o.env.baseline},
          {"score", to_string(o.env.score)},
          {"placement", p.placement},
          {"runtime", sim::to_string(o.env.engine.runtime)},
          {"skip", o.env.skip},
          {"commit", o.env.commit},
          {"seed", o.seed},
          {"ppo", o.ppo.to_json()}};
  write_settings(j, o, train_settings());
  if (o.validation_temperature == 0) j.erase("validation_temperature");  // runs without it record what they did before it existed
  if (o.env.window.warmup > 0) j["warmup"] = o.env.window.warmup;
  if (o.teacher != Teacher::baseline) j["teacher"] = kTeacherNames.name(o.teacher);
  if (sim::is_predicted(o.env.engine.runtime)) write_settings(j, o.env.engine, sim::engine_settings());
  return j;
}

nlohmann::json policy_file(const PolicyNet& net, const EnvOptions& env, int epoch) {
  const ObservationOptions& o = env.observation;
  return {{"format", "rltune-policy"},
          {"version", 1},
          {"epoch", epoch},
          {"baseline", env.baseline},
          {"score", to_string(env.score)},
          {"observation",
           {{"features", to_string(o.features)}, {"wait_scale_s", o.wait_scale_s}, {"size_scale", o.size_scale},
            {"runtime_scale_s", o.runtime_scale_s}}},
          {"commit", env.commit},
          {"network", net.to_json()}};
}

// An unknown key is an error, not ignored: a misspelt "comit": false would load as commit true.
void only_keys(const nlohmann::json& j, std::initializer_list<std::string_view> known, const std::string& what) {
  for (const auto& [key, value] : j.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw InputError(fmt::format("{}: unknown key '{}' (known: {})", what, key, fmt::join(known, ", ")));
}

PolicyFile parse_policy_file(const nlohmann::json& j, const std::string& where) {
  try {
    if (j.value("format", "") != "rltune-policy") throw InputError(where + ": not an rltune policy file");
    only_keys(j, {"format", "version", "epoch", "baseline", "score", "observation", "commit", "network"}, "policy file");
    only_keys(j.at("observation"), {"features", "wait_scale_s", "size_scale", "runtime_scale_s"}, "observation");
    only_keys(j.at("network"), {"arch", "features", "layers", "skip_logit"}, "network");
    for (const nlohmann::json& layer : j.at("network").at("layers")) only_keys(layer, {"in", "out", "weight", "bias"}, "network.layers[]");
    // Compared as JSON: 1.5 would convert to 1.
    if (const nlohmann::json version = j.value("version", nlohmann::json(-1)); version != 1 || !version.is_number_integer())
      throw InputError(fmt::format("{}: policy file version {} (this rltune reads version 1)", where, version.dump()));
    PolicyFile f;
    f.baseline = j.at("baseline").get<std::string>();
    f.score = j.at("score").get<std::string>();
    parse_score(f.score);  // InputError for a score no run trains on
    // Read as doubles and checked before any conversion, so that 1e300 is an error, not an undefined cast.
    const double epoch = j.at("epoch").get<double>();
    if (!(epoch >= 0 && epoch <= 1e9 && epoch == std::floor(epoch)))
      throw InputError(fmt::format("epoch {} is not a whole number of epochs", epoch));
    f.epoch = static_cast<int>(epoch);
    const auto& o = j.at("observation");
    f.observation.features = parse_feature_set(o.at("features").get<std::string>());
    const auto scale = [&](const char* key) {
      const double v = o.at(key).get<double>();
      if (!(v > 0 && v <= 1e12)) throw InputError(fmt::format("observation.{} {}: must be above 0 and at most 1e12", key, v));
      return v;
    };
    f.observation.wait_scale_s = scale("wait_scale_s");
    f.observation.size_scale = scale("size_scale");
    f.observation.runtime_scale_s = scale("runtime_scale_s");
    f.commit = j.value("commit", true);  // files from before the option committed
    f.net = PolicyNet::from_json(j.at("network"));
    if (f.net.features != feature_count(f.observation.features))
      throw InputError(where + ": the network's inputs do not match its feature set");
    return f;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: malformed policy file: {}", where, e.what()));
  } catch (const InputError& e) {
    const std::string m = e.what();
    throw InputError(m.starts_with(where) ? m : where + ": " + m);
  }
}

namespace {

// config[key] as a T; InputError naming the key when it is missing or of another type (nlohmann's own
// message names neither).
template <class T>
T config_field(const nlohmann::json& config, const std::string& key, std::optional<T> otherwise = std::nullopt) {
  if (!config.contains(key)) {
    if (otherwise) return *otherwise;
    throw InputError(fmt::format("'{}' is missing", key));
  }
  try {
    return config.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    const char* expected = std::is_same_v<T, bool> ? "true or false" : std::is_same_v<T, std::string> ? "a string" : "a number";
    throw InputError(fmt::format("'{}' is {}, not {}", key, config.at(key).dump(), expected));
  }
}

}  // namespace

std::optional<Regime> parse_regime(const nlohmann::json& config) {
  if (!config.is_object() || config_field<std::string>(config, "command", "") != "train") return std::nullopt;
  Regime r;
  r.blocking = policy::parse_blocking(config_field<std::string>(config, "blocking"));
  r.backfill = config_field<bool>(config, "backfill");
  r.runtime = sim::parse_runtime_knowledge(config_field<std::string>(config, "runtime"));
  r.reference = config_field<std::string>(config, "semantics", "rltune") == "reference";  // recorded only when not rltune's
  r.backfill_limits = config_field<bool>(config, "backfill_limits", false);                // recorded only when set
  r.cluster = config_field<std::string>(config, "cluster", "");
  return r;
}

std::vector<std::string> regime_differences(const Regime& trained, const Regime& run) {
  std::vector<std::string> out;
  if (run.blocking != trained.blocking)
    out.push_back(fmt::format("{} blocking (trained: {})", policy::to_string(run.blocking), policy::to_string(trained.blocking)));
  const auto backfill = [](bool on) { return on ? "backfill" : "no backfill"; };
  if (run.backfill != trained.backfill) out.push_back(fmt::format("{} (trained: {})", backfill(run.backfill), backfill(trained.backfill)));
  if (run.runtime != trained.runtime)
    out.push_back(fmt::format("{} runtimes (trained: {})", sim::to_string(run.runtime), sim::to_string(trained.runtime)));
  if (run.backfill && trained.backfill && run.backfill_limits != trained.backfill_limits)
    out.push_back(run.backfill_limits ? "backfill planned with time limits (trained: with estimates)"
                                      : "backfill planned with estimates (trained: with time limits)");
  // One cluster named two ways (a relative and an absolute path to one file) is the same cluster.
  const auto same_file = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    return fs::is_regular_file(a, ec) && fs::is_regular_file(b, ec) && fs::equivalent(a, b, ec);
  };
  if (!run.cluster.empty() && !trained.cluster.empty() && run.cluster != trained.cluster && !same_file(run.cluster, trained.cluster))
    out.push_back(fmt::format("cluster {} (trained on {})", run.cluster, trained.cluster));
  if (run.reference != trained.reference)
    out.push_back(run.reference ? "--semantics reference (trained under rltune's)" : "rltune's semantics (trained under --semantics reference)");
  return out;
}

namespace {
// The policy file's own settings against its run's config.json (keys an older run did not record are
// skipped): they differ only when the file was edited or copied from another run, and the model would
// then observe or act otherwise than it learned.
void check_matches_run(const PolicyFile& f, const nlohmann::json& config, const fs::path& file) {
  if (!config.is_object() || config.value("command", "") != "train" || !config.contains("options")) return;
  const nlohmann::json& o = config.at("options");
  const std::pair<const char*, nlohmann::json> own[] = {
      {"baseline", f.baseline}, {"score", f.score}, {"features", to_string(f.observation.features)},
      {"arch", to_string(f.net.arch)}, {"skip", f.net.skip}, {"commit", f.commit}};
  std::vector<std::string> differences;
  for (const auto& [key, value] : own)
    if (o.contains(key) && o.at(key) != value) differences.push_back(fmt::format("{} {} (run: {})", key, value.dump(), o.at(key).dump()));
  if (!differences.empty())
    throw InputError(fmt::format("{}: disagrees with its run's config.json on {}: edited, or from another run", file.string(),
                                 fmt::join(differences, ", ")));
}
}  // namespace

PolicyFile load_policy(const std::string& path) {
  fs::path file = path;
  if (fs::is_directory(file)) file = fs::exists(file / "best.json") ? file / "best.json" : file / "policy.json";
  if (!fs::is_regular_file(file))
    throw InputError(fmt::format("model {}: no policy there (expected a training run directory or its policy.json)", path));
  PolicyFile f = parse_policy_file(read_json_file(file.string()), file.string());
  f.path = path;
  f.files = {file.string()};
  if (const fs::path config = file.parent_path() / "config.json"; fs::is_regular_file(config)) {
    f.files.push_back(config.string());
    nlohmann::json j;
    try {
      j = read_json_file(config.string());
      if (!j.is_object()) throw InputError(fmt::format("not a JSON object but {}", j.dump().substr(0, 40)));
      f.regime = parse_regime(j);
      if (j.contains("trace") && j["trace"].is_string() && j.contains("options") && j["options"].contains("train_split"))
        f.trained_on = PolicyFile::TrainedOn{j["trace"].get<std::string>(), config_field<double>(j["options"], "train_split")};
    } catch (const std::exception& e) {  // InputError from the names, json errors from missing keys
      std::string why = e.what();
      if (why.starts_with(config.string() + ": ")) why.erase(0, config.string().size() + 2);  // named once
      throw InputError(fmt::format("{}: the model's training config is unreadable: {}", config.string(), why));
    }
    check_matches_run(f, j, file);
  }
  return f;
}

namespace {

const char* kProgressHeader =
    "epoch,mean_return,baseline_score,rl_score,policy_loss,value_loss,kl,entropy,clip_fraction,policy_iters,"
    "validation_return,best,decisions_per_s,wall_s,decisions_per_s_by_rank\n";

std::string progress_csv(const std::vector<EpochRecord>& records) {
  // Six decimals, without the "-0.000000" of a tiny negative.
  const auto six = [](double v) { return std::abs(v) < 5e-7 ? 0.0 : v; };
  std::string s = kProgressHeader;
  for (const auto& r : records)
    s += fmt::format("{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.4f},{},{:.6f},{},{:.0f},{:.2f},{}\n", r.epoch,
                     six(r.mean_return), six(r.baseline_score), six(r.rl_score), six(r.policy_loss), six(r.value_loss),
                     six(r.kl), six(r.entropy), r.clip_fraction, r.policy_iters, six(r.validation_return), r.best ? 1 : 0,
                     r.decisions_per_s, r.wall_s, r.decisions_per_s_by_rank);
  return s;
}

// A field as progress_csv writes it: fmt spells a diverged loss nan or inf.
std::optional<double> progress_number(const std::string& s) {
  if (s == "nan" || s == "-nan") return std::nan("");
  if (s == "inf" || s == "-inf") return s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
  return csv::parse_double(s);
}

// The earlier epochs' rows, checked: they are written again as this run's own, so an edited or
// foreign row would pass for a trained epoch.
std::vector<EpochRecord> read_progress(const fs::path& path, int epochs) {
  std::vector<EpochRecord> records;
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return records;
  const std::string header(kProgressHeader, std::strlen(kProgressHeader) - 1);
  const std::string before_mpi = header.substr(0, header.rfind(','));  // runs before MPI lack the last column
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line != header && line != before_mpi) throw InputError(fmt::format("{}: line 1 is not the header rltune writes", path.string()));
  std::vector<std::string> fields;
  for (int number = 2; static_cast<int>(records.size()) < epochs && std::getline(in, line); ++number) {
    const auto fail = [&](const std::string& why) {
      return InputError(fmt::format("{}: line {}: {} (edited, or from another run)", path.string(), number, why));
    };
    csv::split(line, ',', fields);
    if (fields.size() != 14 && fields.size() != 15) throw fail(fmt::format("{} fields where 15 were written", fields.size()));
    double v[14];
    for (std::size_t k = 0; k < 14; ++k) {
      const auto value = progress_number(fields[k]);
      if (!value) throw fail(fmt::format("field {} '{}' is not a number", k + 1, fields[k]));
      v[k] = *value;
    }
    EpochRecord r;
    if (v[0] != static_cast<double>(records.size() + 1))
      throw fail(fmt::format("epoch {} where {} was expected", fields[0], records.size() + 1));
    if (v[9] != std::floor(v[9]) || v[9] < 0 || v[9] > 1e9) throw fail(fmt::format("policy_iters '{}' is not a count", fields[9]));
    if (v[11] != 0 && v[11] != 1) throw fail(fmt::format("best '{}' is not 0 or 1", fields[11]));
    r.epoch = static_cast<int>(v[0]);
    r.mean_return = v[1], r.baseline_score = v[2], r.rl_score = v[3], r.policy_loss = v[4], r.value_loss = v[5], r.kl = v[6];
    r.entropy = v[7], r.clip_fraction = v[8], r.policy_iters = static_cast<int>(v[9]), r.validation_return = v[10];
    r.best = v[11] != 0, r.decisions_per_s = v[12], r.wall_s = v[13];
    if (fields.size() == 15) r.decisions_per_s_by_rank = fields[14];
    records.push_back(r);
  }
  return records;
}

// Keys whose change does not change what a resumed run computes (the result does not depend on the
// thread count).
nlohmann::json comparable(nlohmann::json config) {
  config.erase("arguments");  // the command line, which may differ in --epochs and --threads
  config["options"].erase("epochs");
  config["options"].erase("threads");
  config["options"].erase("ranks");
  return config;
}

// A run written before an option existed lacks its key. It ran as that option's default does (a new
// option defaults to the earlier behaviour), so the default stands in for the missing key.
void fill_missing(nlohmann::json& stored, const nlohmann::json& defaults) {
  for (const auto& [key, value] : defaults.items()) {
    if (!stored.contains(key))
      stored[key] = value;
    else if (value.is_object() && stored[key].is_object())
      fill_missing(stored[key], value);
  }
}

// A resume must read the same files as the run: the same names could hold another trace or cluster.
// A run recorded before its inputs' digests were kept cannot be checked, and says so.
void check_inputs(nlohmann::json& stored, const nlohmann::json& config, const std::string& out) {
  if (!config.contains("inputs")) return;
  if (!stored.contains("inputs")) {
    spdlog::warn("--resume: {}/config.json has no checksums of its input files (an older run): cannot check that they are unchanged", out);
    stored["inputs"] = config["inputs"];
    return;
  }
  for (const auto& [file, digest] : config["inputs"].items())
    if (stored["inputs"].contains(file) && stored["inputs"][file] != digest)
      throw InputError(fmt::format("--resume: {} has changed since the run in {} was trained on it (its checksum differs); "
                                   "train into another --out",
                                   file, out));
  if (stored["inputs"] != config["inputs"])
    throw InputError(fmt::format("--resume: the run in {} read other input files; resume with the same ones", out));
}

// Where a run starts: epoch 0, or the epoch that model.pt in the run directory reached.
struct RunStart {
  int first_epoch = 0;
  double best_validation = -std::numeric_limits<double>::infinity();
  double wall_before = 0;  // s spent by the earlier invocations
  std::vector<EpochRecord> records;
};

// Resumes only a run of the same settings and never starts over another run; loads the checkpoint
// when resuming, then writes config.json.
RunStart start_run(const fs::path& dir, const TrainOptions& o, Learner& learner, const nlohmann::json& config) {
  RunStart start;
  if (o.resume) {
    if (!fs::exists(dir / "model.pt"))  // killed before its first epoch was saved (imitation epochs are not)
      throw InputError(fmt::format("--resume: {} holds no model.pt to resume from (no epoch was saved); run again without --resume",
                                   o.out));
    if (!fs::exists(dir / "config.json"))
      throw InputError(fmt::format("--resume: {}/config.json is missing: the run's settings are not known", o.out));
    nlohmann::json stored;
    try {
      stored = read_json_file((dir / "config.json").string());  // strictly: a key given twice is an error
    } catch (const InputError& e) {
      throw InputError(fmt::format("--resume: {}", e.what()));
    }
    if (!stored.is_object() || !stored.contains("options") || !stored["options"].is_object())
      throw InputError(fmt::format("--resume: {}/config.json holds no training options", o.out));
    if (stored.contains("arguments") &&
        !(stored["arguments"].is_array() &&
          std::all_of(stored["arguments"].begin(), stored["arguments"].end(), [](const nlohmann::json& a) { return a.is_string(); })))
      throw InputError(fmt::format("--resume: {}/config.json: 'arguments' is not a list of strings (the run's command line)", o.out));
    const bool kept_arguments = stored.contains("arguments");
    fill_missing(stored["options"], to_json(TrainOptions{}));
    check_inputs(stored, config, o.out);
    const nlohmann::json patch = nlohmann::json::diff(comparable(stored), comparable(config));
    if (!patch.empty())
      throw InputError(fmt::format("--resume: the settings differ from the run in {} (first difference at {}); "
                                   "resume with the same arguments (only --epochs and --threads may change){}",
                                   o.out, patch[0].value("path", "?"),
                                   kept_arguments ? "" : ". Its config.json keeps no command line (an older run): give its arguments again"));
    nlohmann::json state;
    try {
      state = learner.load((dir / "model.pt").string());
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {  // LibTorch's own errors, for a file that is TorchScript or another archive
      const std::string what = e.what();
      throw InputError(fmt::format("--resume: {}/model.pt is not an rltune checkpoint ({})", o.out, what.substr(0, what.find('\n'))));
    }
    start.first_epoch = state.at("epoch").get<int>();
    start.best_validation = state.at("best_validation").get<double>();
    start.wall_before = state.at("wall_s").get<double>();
    start.records = read_progress(dir / "progress.csv", start.first_epoch);
    if (static_cast<int>(start.records.size()) != start.first_epoch)
      throw InputError(fmt::format("--resume: {}/progress.csv has {} rows, model.pt is at epoch {}", o.out, start.records.size(),
                                   start.first_epoch));
    if (o.epochs < start.first_epoch)
      throw InputError(fmt::format("--resume: {} is at epoch {}, past --epochs {}; ask for more epochs", o.out, start.first_epoch, o.epochs));
    for (const char* best : {"best.pt", "best.json"})  // the best epoch's model: without it the run would end on another
      if (start.first_epoch > 0 && !fs::exists(dir / best))
        throw InputError(fmt::format("--resume: {}/{} is missing (the best epoch's model); the run cannot go on from model.pt alone", o.out, best));
    if (start.first_epoch > 0) {
      (void)load_policy((dir / "best.json").string());  // a damaged one would end the run with a model nothing can load
      // policy.json holds the network model.pt holds (save_epoch writes both), or the next epoch's when a
      // run was stopped between the two; a run of an older rltune may lack keys added since. It is
      // written again. Another network means one of the two files was changed or damaged since (LibTorch
      // does not check its archive's checksums), and the run cannot tell which to go on from.
      const nlohmann::json policy = policy_file(learner.policy(), o.env, start.first_epoch);
      if (const auto written = read_file((dir / "policy.json").string())) {
        const nlohmann::json j = nlohmann::json::parse(*written, nullptr, /*allow_exceptions=*/false);
        const bool next_epoch = j.is_object() && j.contains("epoch") && j["epoch"] == start.first_epoch + 1;
        if (!next_epoch && !(j.is_object() && j.contains("network") && j["network"] == policy["network"]))
          throw InputError(fmt::format("--resume: {}/model.pt does not hold the network of {}/policy.json: one of them was changed or "
                                       "damaged since epoch {} was saved; train into another --out",
                                       o.out, o.out, start.first_epoch));
      }
      write_file((dir / "policy.json").string(), policy.dump() + "\n");
    }
    spdlog::info("resuming {} at epoch {} of {}", o.out, start.first_epoch, o.epochs);
  } else {
    if (fs::exists(dir / "model.pt"))
      throw InputError(fmt::format("--out {}: already holds a training run (use --resume to continue it, or another directory)", o.out));
  }
  write_file((dir / "config.json").string(), json_text(config, 2) + "\n");
  return start;
}

// The epoch's files, model.pt last: a run killed in between resumes from the previous epoch and
// redoes this one identically.
void save_epoch(const fs::path& dir, const std::vector<EpochRecord>& records, const PolicyNet& net, const EnvOptions& env,
                double best_validation, Learner& learner) {
  const EpochRecord& r = records.back();
  const nlohmann::json policy_json = policy_file(net, env, r.epoch);
  write_file((dir / "policy.json").string(), policy_json.dump() + "\n");
  const nlohmann::json state = {{"epoch", r.epoch}, {"best_validation", best_validation}, {"wall_s", r.wall_s}};
  if (r.best) {
    write_file((dir / "best.json").string(), policy_json.dump() + "\n");
    learner.save((dir / "best.pt").string(), state);
  }
  write_file((dir / "progress.csv").string(), progress_csv(records));
  learner.save((dir / "model.pt").string(), state);
}

// What every rank learns of each episode played: the numbers the epoch's record sums, in trajectory order.
struct Played {
  std::vector<Episode> mine;        // this rank's episodes, recorded
  std::vector<double> reward, baseline_score, agent_score, decisions;  // every rank's, in trajectory order
  double rollout_s = 0;             // this rank's time
};

Played share(std::vector<Episode> mine, double rollout_s, const Comm& comm) {
  std::vector<double> numbers;
  for (const Episode& e : mine)
    numbers.insert(numbers.end(), {e.reward, e.baseline_score, e.agent_score, static_cast<double>(e.decisions())});
  const std::vector<double> all = gather_doubles(comm, numbers);
  Played p{std::move(mine), {}, {}, {}, {}, rollout_s};
  for (std::size_t i = 0; i + 3 < all.size(); i += 4) {
    p.reward.push_back(all[i]);
    p.baseline_score.push_back(all[i + 1]);
    p.agent_score.push_back(all[i + 2]);
    p.decisions.push_back(all[i + 3]);
  }
  return p;
}

}  // namespace

std::vector<EpochRecord> train(const cluster::ClusterSpec& cluster, std::span<const trace::JobSpec> jobs,
                               const TrainOptions& o, Learner& learner, nlohmann::json config, const Comm& comm) {
  const bool writer = comm.rank() == 0;  // the rank that writes the run's files and reports progress
  const fs::path dir = o.out;
  config["options"] = to_json(o);
  config["options"]["ranks"] = comm.size();

  RunStart start;
  std::optional<FolderLock> lock;  // held until training ends
  together(comm, [&] {
    check_bounds(o, train_settings(), "train");
    check_bounds(o.ppo, ppo_settings(), "ppo");
    if (o.validation_windows == 0 && o.validation_temperature != 0)
      throw InputError("--validation-temperature applies only with --validation-windows (there are none: epochs are compared on their training return)");
    if (o.trajs < comm.size())
      throw InputError(fmt::format("--trajs {} is fewer than the {} MPI ranks: each rank needs a trajectory", o.trajs, comm.size()));
    if (learner.policy().skip != o.env.skip)
      throw InputError(o.env.skip ? "--skip needs a learner with a skip action" : "the learner has a skip action but --skip is off");
    if (!writer) return;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw InputError(fmt::format("--out {}: cannot create the directory: {}", o.out, ec.message()));
    lock.emplace(o.out, "--out " + o.out);  // two trainings into one folder would overwrite each other's files
    start = start_run(dir, o, learner, config);
  });
  // The other ranks load the checkpoint rank 0 checked, from the shared run directory.
  together(comm, [&] {
    double epoch = start.first_epoch;
    const auto first_epochs = gather_doubles(comm, std::span(&epoch, 1));
    if (writer || first_epochs[0] == 0) return;
    const nlohmann::json state = learner.load((dir / "model.pt").string());
    start.first_epoch = state.at("epoch").get<int>();
    if (start.first_epoch != static_cast<int>(first_epochs[0]))
      throw InputError(fmt::format("--resume: {}/model.pt is at epoch {} here, at epoch {} on rank 0: the run directory must be "
                                   "on a file system every rank shares", o.out, start.first_epoch, first_epochs[0]));
    start.best_validation = state.at("best_validation").get<double>();
    start.wall_before = state.at("wall_s").get<double>();
  });
  std::vector<EpochRecord>& records = start.records;  // on rank 0 only, the earlier epochs' too
  const int first_epoch = start.first_epoch;
  double best_validation = start.best_validation;

  // One environment per thread, reused across epochs.
  std::vector<std::unique_ptr<Env>> envs;
  const auto validation_rng = [&](int k) { return Rng(stream_seed(o.seed, std::numeric_limits<std::uint64_t>::max(), static_cast<std::uint64_t>(k))); };
  together(comm, [&] {
    for (int t = 0; t < o.threads; ++t) envs.push_back(std::make_unique<Env>(cluster, jobs, o.env));
    // The learned runtime model the episodes run with (fitted once, by the first Env), beside the policy.
    if (const auto model = sim::with_runtime_model(o.env.engine, jobs, o.env.window.train_split).runtime_model; model && writer)
      write_file((dir / "runtime-model.json").string(), model->to_json());
    // Fail now, not at the epoch whose draw lands on a window the cluster rejects, or after the first
    // epoch when the validation split is too small.
    envs[0]->check_windows_run(Split::train);
    if (o.validation_windows > 0) envs[0]->check_windows_run(Split::validation);
  });

  // Plays this rank's block of `count` episodes on its threads, each thread on its own environment;
  // episode k uses rng(k). Without `net`, the teacher's picks.
  const auto play_all = [&](int count, const PolicyNet* net, Split split, double temperature, const auto& rng_of) {
    const Block block = block_of(static_cast<std::size_t>(count), comm.rank(), comm.size());
    std::vector<Episode> episodes(block.last - block.first);
    double seconds = 0;  // this rank's own rollout time, without waiting for the others
    together(comm, [&] {
      const auto t0 = std::chrono::steady_clock::now();
      for_each_parallel(episodes.size(), o.threads, [&](std::size_t i, int worker) {
        Env& env = *envs[static_cast<std::size_t>(worker)];
        Rng rng = rng_of(static_cast<int>(block.first + i));
        // Training rollouts (temperature 1) are recorded; validation's are not.
        const bool training = split == Split::train;
        episodes[i] = net                                   ? play(env, *net, rng, split, temperature == 0, training, temperature)
                      : o.teacher == Teacher::clairvoyant ? play_clairvoyant(env, rng, split)
                      : o.teacher == Teacher::sjf_sampled ? play_sjf_sampled(env, rng, split)
                                                          : play_baseline(env, rng, split);
      });
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
    return share(std::move(episodes), seconds, comm);
  };
  const auto batch_of = [](const std::vector<Episode>& episodes) {
    Batch batch;
    batch.features = episodes.front().features;
    for (const auto& e : episodes) batch.append(e);
    return batch;
  };

  // Behaviour cloning first (fresh runs only): the policy learns the teacher's picks, so that PPO
  // starts from the teacher's schedule (or as near as estimates allow) instead of a random one.
  for (int i = 0; first_epoch == 0 && i < o.imitation_epochs; ++i) {
    const Played played = play_all(o.trajs, nullptr, Split::train, 1, [&](int k) {
      return Rng(stream_seed(o.seed, std::numeric_limits<std::uint64_t>::max() - 1 - static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(k)));
    });
    const Batch batch = batch_of(played.mine);
    const double loss = learner.imitate(batch);
    double teacher_return = 0;
    for (const double reward : played.reward) teacher_return += reward / o.trajs;
    // A drawing teacher's own entropy is the least the cross-entropy can reach (on this rank's episodes).
    const std::string floor = batch.targets.empty() ? "" : fmt::format(" (the teacher's entropy {:.4f})", batch.target_entropy());
    const std::string message = fmt::format("imitation {}/{}: cross-entropy {:.4f}{}, {} return {:+.3f}", i + 1, o.imitation_epochs, loss,
                                            floor, kTeacherNames.name(o.teacher), teacher_return);
    if (o.progress && writer) spdlog::info("{}", message);
    else spdlog::debug("{}", message);
  }

  Progress progress(fmt::format("train {}", o.out), std::max(1, o.epochs - first_epoch));
  const auto run_start = std::chrono::steady_clock::now();
  for (int epoch = first_epoch; epoch < o.epochs; ++epoch) {
    together(comm, [&] { fail_here_for_tests(comm, epoch + 1, fmt::format("epoch {}", epoch + 1)); });
    const PolicyNet net = learner.policy();
    const Played played = play_all(o.trajs, &net, Split::train, 1, [&](int k) {
      return Rng(stream_seed(o.seed, static_cast<std::uint64_t>(epoch), static_cast<std::uint64_t>(k)));
    });

    EpochRecord r;
    r.epoch = epoch + 1;
    double decisions = 0, mine = 0;
    for (std::size_t k = 0; k < played.reward.size(); ++k) {
      decisions += played.decisions[k];
      r.mean_return += played.reward[k] / o.trajs;
      r.baseline_score += played.baseline_score[k] / o.trajs;
      r.rl_score += played.agent_score[k] / o.trajs;
    }
    for (const Episode& e : played.mine) mine += static_cast<double>(e.decisions());
    const double rate[] = {mine / std::max(played.rollout_s, 1e-9), played.rollout_s};
    const std::vector<double> rates = gather_doubles(comm, rate);
    double slowest = 0;
    for (std::size_t k = 0; k < rates.size(); k += 2) {
      slowest = std::max(slowest, rates[k + 1]);
      r.decisions_per_s_by_rank += fmt::format("{}{:.0f}", k == 0 ? "" : " ", rates[k]);
    }
    r.decisions_per_s = decisions / std::max(slowest, 1e-9);
    const UpdateStats u = learner.update(batch_of(played.mine));
    r.policy_loss = u.policy_loss;
    r.value_loss = u.value_loss;
    r.kl = u.kl;
    r.entropy = u.entropy;
    r.clip_fraction = u.clip_fraction;
    r.policy_iters = u.policy_iters;

    const PolicyNet updated = learner.policy();
    if (o.validation_windows > 0) {
      for (const double reward : play_all(o.validation_windows, &updated, Split::validation, o.validation_temperature, validation_rng).reward)
        r.validation_return += reward / o.validation_windows;
    } else {
      r.validation_return = r.mean_return;
    }
    r.best = r.validation_return > best_validation;
    if (r.best) best_validation = r.validation_return;
    r.wall_s = start.wall_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    records.push_back(r);

    together(comm, [&] {
      if (writer) save_epoch(dir, records, updated, o.env, best_validation, learner);
    });

    const std::string message =
        fmt::format("epoch {}/{} return {:+.3f} validation {:+.3f} (best {:+.3f}) {} {:.4g} vs {} {:.4g} {:.0f} decisions/s", r.epoch,
                    o.epochs, r.mean_return, r.validation_return, best_validation, to_string(o.env.score), r.rl_score,
                    o.env.baseline, r.baseline_score, r.decisions_per_s);
    if (o.progress && writer) progress.update(r.epoch - first_epoch, message);
    spdlog::debug("{}", message);
  }
  if (o.progress && writer) progress.finish(records.empty() ? "" : fmt::format("best validation return {:+.3f}", best_validation));
  return std::move(records);  // start.records
}

}  // namespace rltune::rl
