#include "experiment/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "cluster/cluster_spec.h"
#include "cluster/presets.h"
#include "cluster/yaml_check.h"
#include "core/error.h"
#include "core/file.h"
#include "experiment/profile_settings.h"
#include "policy/registry.h"
#include "rl/rl_policy.h"
#include "workload/generator.h"
#include "workload/model.h"

namespace rltune::experiment {

namespace {

namespace fs = std::filesystem;

struct Parser {
  YamlCheck check;
  fs::path folder;  // of the config file: relative paths start here

  std::string where(const YAML::Node& node) const {
    return node.Mark().line >= 0 ? fmt::format("{}:{}", check.source, node.Mark().line + 1) : check.source;
  }
  std::string path(const YAML::Node& node, const std::string& key) const {
    const std::string p = check.text(node, key);
    if (p.empty()) check.fail(node, key, "must not be empty");
    return fs::path(p).is_absolute() ? p : (folder / p).lexically_normal().string();
  }
  bool boolean(const YAML::Node& node, const std::string& key) const {
    try {
      return node.as<bool>();
    } catch (const YAML::Exception&) {
      check.fail(node, key, "must be true or false");
    }
  }
  std::vector<YAML::Node> list(const YAML::Node& node, const std::string& key) const {
    if (!node.IsSequence()) check.fail(node, key, "must be a list");
    return {node.begin(), node.end()};
  }

  // Profile settings shared by `defaults` and each policy entry; `p` starts from the defaults.
  void profile_settings(const YAML::Node& map, const std::string& key, policy::ProfileOptions& p,
                        sim::EngineOptions& engine) const {
    for (const auto& kv : map) {
      const auto k = kv.first.as<std::string>();
      const YAML::Node& v = kv.second;
      const std::string at = key + "." + k;
      try {
        if (k == "milp") milp(v, at, p);
        else if (k == "multifactor") multifactor(v, at, p);
        else if (const ChoiceSetting* c = find_choice(k)) choice(v, at, *c, p, engine);
      } catch (const InputError& e) {
        if (std::string(e.what()).starts_with(check.source)) throw;
        check.fail(v, at, e.what());
      }
    }
    // Predictor settings may sit in defaults for the policies that predict; config.json records them
    // only where they apply.
    read_settings(map, key, sim::engine_settings(), engine);
    read_settings(map, key, policy::sampling_settings(), p.priority_options);
    // A runtime model file is relative to the config file, like every other path.
    if (const YAML::Node file = map["runtime_model"]) engine.runtime_model_file = path(file, key + ".runtime_model");
    // A semantics fixes some settings: the same value given again is fine, another one is an error.
    for (const auto& [name, value] : policy::fixed_settings(policy::find_semantics(p.semantics)))
      if (const YAML::Node v = map[name]; v && policy::setting_text(p, name) != value)
        check.fail(v, key + "." + name, fmt::format("contradicts semantics {}, which sets {} {}", p.semantics, name, value));
    policy::apply_semantics(p);
  }
  // The settings present in `map`, each within its bounds.
  template <typename Options>
  void read_settings(const YAML::Node& map, const std::string& key, std::span<const NumberSetting<Options>> settings,
                     Options& o) const {
    for (const NumberSetting<Options>& s : settings)
      if (const YAML::Node v = map[s.key]) read_setting(v, key + "." + s.key, s, o);
  }
  template <typename Options>
  void read_setting(const YAML::Node& v, const std::string& at, const NumberSetting<Options>& s, Options& o) const {
    s.set(o, s.integer() ? static_cast<double>(check.integer(v, at, static_cast<long long>(s.min), static_cast<long long>(s.max)))
                         : check.number(v, at, s.min, s.max));
  }
  template <typename Options>
  static std::set<std::string> keys_of(std::span<const NumberSetting<Options>> settings, std::set<std::string> others) {
    for (const NumberSetting<Options>& s : settings) others.insert(s.key);
    return others;
  }
  // One of choice_settings(), text or true/false, into `p` and `engine`.
  void choice(const YAML::Node& v, const std::string& at, const ChoiceSetting& c, policy::ProfileOptions& p,
              sim::EngineOptions& engine) const {
    if (c.is_switch()) c.apply_switch(p, engine, boolean(v, at));
    else c.apply_text(p, engine, check.text(v, at));
  }
  void milp(const YAML::Node& map, const std::string& key, policy::ProfileOptions& p) const {
    check.only_keys(map, key, keys_of(policy::milp_settings(), {"model"}));
    sim::EngineOptions unused;
    // The model (with its weights) first, so that weights given here override them whatever the key order.
    if (map["model"]) choice(map["model"], key + ".model", *find_choice("milp.model"), p, unused);
    read_settings(map, key, policy::milp_settings(), p.milp);
    policy::validate(p.milp);
  }
  void multifactor(const YAML::Node& map, const std::string& key, policy::ProfileOptions& p) const {
    check.only_keys(map, key, keys_of(policy::multifactor_settings(), {"favor_small"}));
    read_settings(map, key, policy::multifactor_settings(), p.priority_options.multifactor);
    sim::EngineOptions unused;
    if (map["favor_small"]) choice(map["favor_small"], key + ".favor_small", *find_choice("multifactor.favor_small"), p, unused);
  }

  // "NAME", "NAME@PLACEMENT", "rl:MODEL" or a map {name, priority, placement, ...}.
  PolicySpec policy_entry(const YAML::Node& node, const std::string& key, const PolicySpec& defaults) const {
    PolicySpec s = defaults;
    s.where = where(node);
    std::string priority, label;
    if (node.IsScalar()) {
      priority = node.as<std::string>();
      const auto at = priority.rfind('@');
      if (at != std::string::npos) {
        s.profile.placement = priority.substr(at + 1);
        priority = priority.substr(0, at);
        if (const char* fixed = policy::find_semantics(s.profile.semantics).placement; fixed && s.profile.placement != fixed)
          check.fail(node, key, fmt::format("@{} contradicts semantics {}, which places with {}", s.profile.placement,
                                            s.profile.semantics, fixed));
      }
    } else {
      std::set<std::string> keys = profile_keys();
      keys.insert({"name", "priority"});
      check.only_keys(node, key, keys);
      if (!node["priority"]) check.fail(node, key, "needs a priority (e.g. fcfs, sjf, rl:MODEL)");
      priority = check.text(node["priority"], key + ".priority");
      if (node["name"]) label = check.name(node["name"], key + ".name");
      profile_settings(node, key, s.profile, s.engine);
      for (const auto& setting : sim::engine_settings())  // as the CLI: a setting that would be ignored is an error
        if (node[setting.key] && !sim::is_predicted(s.engine.runtime))
          check.fail(node[setting.key], key + "." + setting.key,
                     fmt::format("applies only to runtime predicted (runtime is {})", sim::to_string(s.engine.runtime)));
      if (node["multifactor"] && !policy::may_use_multifactor(priority))
        check.fail(node["multifactor"], key + ".multifactor", "applies only to the multifactor policy (or a model ranking by it)");
      if (node["milp"] && s.profile.placement != "milp")
        check.fail(node["milp"], key + ".milp", fmt::format("applies only to placement milp (placement is {})", s.profile.placement));
      if (node["runtime_model"] && s.engine.runtime != sim::RuntimeKnowledge::learned)
        check.fail(node["runtime_model"], key + ".runtime_model",
                   fmt::format("applies only to runtime predicted:learned (runtime is {})", sim::to_string(s.engine.runtime)));
    }
    if (priority.empty()) check.fail(node, key, "names no policy");
    for (const auto& setting : policy::sampling_settings())  // as the CLI: a setting that would be ignored is an error
      if (node.IsMap() && node[setting.key] && !policy::is_sampled(priority))
        check.fail(node[setting.key], key + "." + setting.key, policy::only_for_sampled());
    if (s.engine.backfill_on_limits && !s.profile.backfill)
      check.fail(node, key, "backfill_limits plans backfilling: it needs backfill: true");
    // The model path is relative to the config file, like every other path. The label names the model
    // by its folder (or file) name, so outputs do not depend on where the config lives.
    std::string shown = priority;
    if (const auto rl_spec = rl::parse_rl_spec(priority)) {
      const std::string kind = priority.substr(0, priority.size() - rl_spec->model.size());  // "rl:" or "rl-sampled:"
      const fs::path model = fs::path(rl_spec->model).lexically_normal();
      if (model.empty()) check.fail(node, key, fmt::format("{} needs a model: {}DIR", kind, kind));
      const fs::path name = model.has_filename() ? model.filename() : model.parent_path().filename();
      shown = kind + name.stem().string();
      priority = kind + (model.is_absolute() ? model : (folder / model).lexically_normal()).string();
    }
    s.profile.priority = priority;
    if (label.empty()) {
      policy::ProfileOptions named = s.profile;
      named.priority = shown;
      label = named.name();
    }
    s.label = label;
    try {
      policy::make_profile(s.profile);  // unknown names, missing models: fail before any run
    } catch (const InputError& e) {
      check.fail(node, key, e.what());
    }
    return s;
  }

  void windows(const YAML::Node& w, const std::string& key, WindowSpec& out) const {
    out.where = where(w);
    check.only_keys(w, key, keys_of(sim::window_settings(), {"split", "seed"}));
    out.whole = w["length"] && w["length"].IsScalar() && w["length"].Scalar() == "all";
    for (const sim::WindowSetting& s : sim::window_settings())
      if (w[s.key] && !(out.whole && std::string_view(s.key) == "length"))
        read_setting(w[s.key], key + "." + s.key, s, static_cast<sim::WindowSettings&>(out));
    if (w["seed"]) out.seed = check.seed(w["seed"], key + ".seed");
    if (out.whole && w["count"] && out.count != 1)
      check.fail(w["count"], key + ".count", "length: all is one window (the whole split); leave count out");
    if (out.whole) out.count = 1;
    if (w["split"]) {
      try {
        out.split = sim::parse_split(check.text(w["split"], key + ".split"));
      } catch (const InputError& e) {
        check.fail(w["split"], key + ".split", e.what());
      }
    }
  }

  TraceSource trace_source(const YAML::Node& node, const std::string& key, std::uint64_t seed,
                           const std::string& cluster_label) const {
    check.only_keys(node, key, {"name", "generate", "files", "format", "vc_column", "gpu_type_column", "duration_source",
                                "gpus_per_proc", "pai_task_table", "skip_invalid", "max_line_bytes"});
    TraceSource t;
    t.seed = seed;
    t.read.seed = seed;
    if (node["generate"] && node["files"]) check.fail(node, key, "give either generate or files, not both");
    if (node["generate"]) {
      const YAML::Node& g = node["generate"];
      const std::string gk = key + ".generate";
      check.only_keys(g, gk, {"like", "jobs", "load", "seed"});
      if (g["like"]) {
        t.like = check.text(g["like"], gk + ".like");
        const auto families = workload::family_names();
        if (std::find(families.begin(), families.end(), t.like) == families.end()) t.like = path(g["like"], gk + ".like");
      }
      if (g["jobs"]) t.jobs = static_cast<int>(check.integer(g["jobs"], gk + ".jobs", 1, 10'000'000));
      if (g["load"]) t.load = check.number(g["load"], gk + ".load", workload::kMinLoad, workload::kMaxLoad);
      if (g["seed"]) t.seed = check.seed(g["seed"], gk + ".seed");
      t.label = "generated-" + (t.like.empty() ? cluster_label : fs::path(t.like).stem().string());
      for (const char* k : {"format", "vc_column", "gpu_type_column", "duration_source", "gpus_per_proc", "pai_task_table",
                            "skip_invalid", "max_line_bytes"})
        if (node[k]) check.fail(node[k], key + "." + k, "applies to trace files, not to a generated workload");
    } else if (node["files"]) {
      const YAML::Node& f = node["files"];
      if (f.IsScalar()) t.files.push_back(path(f, key + ".files"));
      else
        for (std::size_t i = 0; i < f.size(); ++i) t.files.push_back(path(f[i], fmt::format("{}.files[{}]", key, i)));
      if (t.files.empty()) check.fail(f, key + ".files", "lists no file");
      t.label = fs::path(t.files.front()).stem().string();
      auto& r = t.read;
      if (node["format"]) r.format = check.text(node["format"], key + ".format");
      if (node["vc_column"])
        r.vc_column = static_cast<int>(check.integer(node["vc_column"], key + ".vc_column", trace::kMinColumn, trace::kMaxColumn));
      if (node["gpu_type_column"])
        r.gpu_type_column =
            static_cast<int>(check.integer(node["gpu_type_column"], key + ".gpu_type_column", trace::kMinColumn, trace::kMaxColumn));
      if (node["duration_source"]) r.duration_source = path(node["duration_source"], key + ".duration_source");
      if (node["gpus_per_proc"])
        r.gpus_per_proc = check.number(node["gpus_per_proc"], key + ".gpus_per_proc", trace::kMinGpusPerProc, trace::kMaxGpusPerProc);
      if (node["pai_task_table"]) {
        r.pai_task_table = path(node["pai_task_table"], key + ".pai_task_table");
        if (r.format == "auto") r.format = "pai";  // as read_traces_as_given reads it; config.json says so
      }
      for (const auto& [setting, format] : trace::kFormatSettings)
        if (node[std::string(setting)]) t.given.push_back({key + "." + std::string(setting), std::string(format)});
      if (node["skip_invalid"]) r.skip_invalid = boolean(node["skip_invalid"], key + ".skip_invalid");
      if (node["max_line_bytes"])
        r.max_line_bytes = static_cast<std::size_t>(check.integer(node["max_line_bytes"], key + ".max_line_bytes", 64, 1LL << 32));
      bool known = r.format == "auto";
      for (const auto& reader : trace::readers()) known = known || reader.name == r.format;
      if (!known) check.fail(node["format"], key + ".format", "unknown trace format '" + r.format + "'");
    } else {
      check.fail(node, key, "needs generate: {...} or files: [...]");
    }
    if (node["name"]) t.label = check.name(node["name"], key + ".name");
    return t;
  }
};

Json trace_json(const TraceSource& t) {
  Json j;
  j["name"] = t.label;
  if (t.files.empty()) {
    j["generate"] = {{"like", t.like}, {"jobs", t.jobs}, {"load", t.load}, {"seed", t.seed}};
  } else {
    j["files"] = t.files;
    j["format"] = t.read.format;
    j["vc_column"] = t.read.vc_column;
    j["gpu_type_column"] = t.read.gpu_type_column;
    j["duration_source"] = t.read.duration_source;
    j["gpus_per_proc"] = t.read.gpus_per_proc;
    j["pai_task_table"] = t.read.pai_task_table;
    j["skip_invalid"] = t.read.skip_invalid;
    j["seed"] = t.read.seed;
  }
  return j;
}

Json windows_json(const WindowSpec& w) {
  Json j{{"count", w.count}, {"length", w.whole ? Json("all") : Json(w.length)}, {"split", sim::to_string(w.split)},
         {"train_split", w.train_split}, {"seed", w.seed}};
  if (w.warmup > 0) j["warmup"] = w.warmup;
  return j;
}

Json policy_json(const PolicySpec& s) {
  const policy::ProfileOptions& p = s.profile;
  Json j{{"name", s.label},
         {"priority", p.priority},
         {"placement", p.placement},
         {"blocking", policy::to_string(p.blocking)},
         {"backfill", p.backfill},
         {"runtime", sim::to_string(s.engine.runtime)}};
  if (p.semantics != "rltune") j["semantics"] = std::string(p.semantics);
  if (sim::is_predicted(s.engine.runtime)) write_settings(j, s.engine, sim::engine_settings());
  if (s.engine.runtime == sim::RuntimeKnowledge::learned && !s.engine.runtime_model_file.empty())
    j["runtime_model"] = s.engine.runtime_model_file;
  if (p.placement == "milp") j["milp"] = milp_json(p.milp);
  if (p.priority == "multifactor") j["multifactor"] = multifactor_json(p.priority_options.multifactor);
  write_sampling(j, p);
  return j;
}

// A cluster that is no preset names a file, relative to the config's folder as every path there is.
bool is_file_name(const std::string& s) {
  return std::ranges::none_of(cluster::presets(), [&](const auto& preset) { return preset.name == s; });
}

}  // namespace

Json milp_json(const policy::MilpOptions& m) {
  Json j{{"model", m.model}};
  write_settings(j, m, policy::milp_settings());
  return j;
}

void write_sampling(Json& j, const policy::ProfileOptions& p) {
  if (policy::is_sampled(p.priority) && p.priority_options.temperature != 1)  // when set, so that outputs stay as they were
    write_settings(j, p.priority_options, policy::sampling_settings());
}

Json multifactor_json(const policy::MultifactorOptions& mf) {
  Json j;
  write_settings(j, mf, policy::multifactor_settings());
  j["favor_small"] = mf.favor_small;
  return j;
}

namespace {

// One entry of `workloads`: its cluster, trace and windows, and its policies (the common ones, then its own).
Workload parse_workload(Parser& p, const YAML::Node& node, const std::string& key, const Config& c,
                        const std::vector<PolicySpec>& common, const PolicySpec& defaults) {
  const YamlCheck& check = p.check;
  check.only_keys(node, key, {"cluster", "trace", "policies", "windows"});
  Workload w;
  w.where = p.where(node);
  w.windows = c.windows;
  if (node["windows"]) p.windows(node["windows"], key + ".windows", w.windows);
  if (!node["cluster"]) check.fail(node, key, "needs a cluster (preset or YAML file)");
  const std::string cluster = check.text(node["cluster"], key + ".cluster");
  const bool file = is_file_name(cluster);
  w.cluster = file ? p.path(node["cluster"], key + ".cluster") : cluster;
  if (file && !fs::exists(w.cluster))
    check.fail(node["cluster"], key + ".cluster",
               fmt::format("'{}': neither a preset ({}) nor a file ({} does not exist; paths are relative to the config's folder)",
                           cluster, cluster::preset_names(), w.cluster));
  try {
    const cluster::ClusterSpec spec = cluster::load_cluster(w.cluster);
    w.cluster_label = spec.name;
    w.cluster_gpus = spec.total_gpus();
  } catch (const InputError& e) {
    check.fail(node["cluster"], key + ".cluster", e.what());
  }
  if (!node["trace"]) check.fail(node, key, "needs a trace: {generate: {...}} or {files: [...]}");
  w.trace = p.trace_source(node["trace"], key + ".trace", c.seed, w.cluster_label);
  w.policies = common;
  if (node["policies"]) {
    const auto entries = p.list(node["policies"], key + ".policies");
    for (std::size_t j = 0; j < entries.size(); ++j)
      w.policies.push_back(p.policy_entry(entries[j], fmt::format("{}.policies[{}]", key, j), defaults));
  }
  if (w.policies.empty()) check.fail(node, key, "has no policy to run (top-level or its own policies)");
  std::set<std::string> labels;
  for (const auto& s : w.policies)
    if (!labels.insert(s.label).second)
      throw InputError(fmt::format("{}: {}: policy '{}' appears twice; give one a distinct name", s.where, key, s.label));
  return w;
}

// The policies improvements are measured against: each a policy of every workload (default: the first
// workload's first policy).
std::vector<std::string> parse_baselines(Parser& p, const YAML::Node& root, const Config& c) {
  const YamlCheck& check = p.check;
  std::vector<std::string> baselines;
  if (root["baselines"]) {
    const auto entries = p.list(root["baselines"], "baselines");
    if (entries.empty()) check.fail(root["baselines"], "baselines", "is empty: leave it out for the default, the first policy");
    for (std::size_t i = 0; i < entries.size(); ++i) {
      baselines.push_back(check.text(entries[i], fmt::format("baselines[{}]", i)));
      if (std::find(baselines.begin(), baselines.end() - 1, baselines.back()) != baselines.end() - 1)
        check.fail(entries[i], fmt::format("baselines[{}]", i), fmt::format("'{}' is given twice", baselines.back()));
    }
  } else {
    baselines.push_back(c.workloads.front().policies.front().label);
  }
  for (std::size_t i = 0; i < baselines.size(); ++i)
    for (const auto& w : c.workloads) {
      bool found = false;
      for (const auto& s : w.policies) found = found || s.label == baselines[i];
      if (!found)
        check.fail(root["baselines"] ? root["baselines"][i] : root, fmt::format("baselines[{}]", i),
                   fmt::format("'{}' is not a policy of workload {}/{}", baselines[i], w.cluster_label, w.trace.label));
    }
  return baselines;
}

// config.json's content: every default filled in and every path resolved.
Json effective_json(const Config& c) {
  Json e;
  e["name"] = c.name;
  e["description"] = c.description;
  e["config_file"] = c.source;
  e["seed"] = c.seed;
  e["baselines"] = c.baselines;
  e["timeseries_windows"] = c.timeseries_windows;
  e["bootstrap"] = c.bootstrap;
  e["workloads"] = Json::array();
  for (const auto& w : c.workloads) {
    Json jw{{"cluster", w.cluster}, {"cluster_name", w.cluster_label}, {"cluster_gpus", w.cluster_gpus},
            {"trace", trace_json(w.trace)}};
    jw["windows"] = windows_json(w.windows);
    jw["policies"] = Json::array();
    for (const auto& s : w.policies) jw["policies"].push_back(policy_json(s));
    e["workloads"].push_back(std::move(jw));
  }
  return e;
}

}  // namespace

Config parse_config(const std::string& yaml, const std::string& file) {
  Config c;
  c.source = file;
  // Paths resolve to absolute ones, so that an experiment resumes from any working folder.
  Parser p{YamlCheck{c.source}, fs::absolute(fs::path(file)).parent_path()};
  const YamlCheck& check = p.check;
  const YAML::Node root = check.load(yaml);
  if (!root || root.IsNull()) throw InputError(file + ": the config is empty");
  check.only_keys(root, "", {"name", "description", "seed", "windows", "defaults", "policies", "baselines", "workloads",
                             "timeseries_windows", "bootstrap"});
  c.name = root["name"] ? check.name(root["name"], "name") : fs::path(file).stem().string();
  if (root["description"]) c.description = check.text(root["description"], "description");
  if (root["seed"]) c.seed = check.seed(root["seed"], "seed");
  if (root["timeseries_windows"])
    c.timeseries_windows = static_cast<int>(check.integer(root["timeseries_windows"], "timeseries_windows", 0, 1000));
  if (root["bootstrap"]) c.bootstrap = static_cast<int>(check.integer(root["bootstrap"], "bootstrap", 100, 1'000'000));

  c.windows.where = file;
  c.windows.seed = c.seed;
  if (root["windows"]) p.windows(root["windows"], "windows", c.windows);

  PolicySpec defaults;
  defaults.profile.priority_options.seed = c.seed;  // rl-sampled draws its picks from it
  if (root["defaults"]) {
    check.only_keys(root["defaults"], "defaults", profile_keys());
    p.profile_settings(root["defaults"], "defaults", defaults.profile, defaults.engine);
  }
  std::vector<PolicySpec> common;
  if (root["policies"]) {
    const auto entries = p.list(root["policies"], "policies");
    for (std::size_t i = 0; i < entries.size(); ++i)
      common.push_back(p.policy_entry(entries[i], fmt::format("policies[{}]", i), defaults));
  }

  if (!root["workloads"]) check.fail(root, "workloads", "is missing: list at least one {cluster, trace}");
  const auto workloads = p.list(root["workloads"], "workloads");
  if (workloads.empty()) check.fail(root["workloads"], "workloads", "lists no workload");
  std::set<std::string> names;
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const YAML::Node& node = workloads[i];
    const std::string key = fmt::format("workloads[{}]", i);
    Workload w = parse_workload(p, node, key, c, common, defaults);
    if (!names.insert(w.cluster_label + "/" + w.trace.label).second)
      check.fail(node, key, fmt::format("repeats cluster {} with trace {}: give the trace a distinct name",
                                        w.cluster_label, w.trace.label));
    c.workloads.push_back(std::move(w));
  }

  c.baselines = parse_baselines(p, root, c);

  // As on a policy entry, a defaults block no policy reads would be ignored.
  if (const YAML::Node d = root["defaults"]) {
    bool milp = false, multifactor = false;
    for (const Workload& w : c.workloads)
      for (const PolicySpec& s : w.policies) {
        milp = milp || s.profile.placement == "milp";
        multifactor = multifactor || policy::may_use_multifactor(s.profile.priority);
      }
    if (d["milp"] && !milp) check.fail(d["milp"], "defaults.milp", "applies only to placement milp, and no policy places with it");
    if (d["multifactor"] && !multifactor)
      check.fail(d["multifactor"], "defaults.multifactor", "applies only to the multifactor policy (or a model ranking by it), and no policy is one");
  }

  c.effective = effective_json(c);
  return c;
}

Config load_config(const std::string& path) {
  const auto text = read_file(path);
  if (!text) throw InputError(path + ": cannot open the experiment config");
  return parse_config(*text, path);
}

}  // namespace rltune::experiment
