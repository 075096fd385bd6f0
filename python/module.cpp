// rltune._core, the native part of the Python module (issue 22): the RL environment (one decision pass,
// the same as `rltune train`), a vectorised one stepped on C++ threads, simulation, clusters and traces.
// Python's side (python/rltune/__init__.py) adds Gymnasium spaces and registration. Bad input raises
// ValueError with the CLI's message; a broken invariant raises RuntimeError.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "cluster/cluster_spec.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "experiment/profile_settings.h"
#include "experiment/runner.h"
#include "metrics/metrics.h"
#include "policy/registry.h"
#include "report/outputs.h"
#include "rl/env.h"
#include "rl/rl_policy.h"
#include "sim/engine.h"
#include "sim/window.h"
#include "trace/reader.h"
#include "workload/generator.h"
#include "workload/model.h"

namespace py = pybind11;
using namespace rltune;

// Daemon threads at exit. Python 3.11 ends a thread that waits for the GIL once the interpreter
// finalises, by pthread_exit: an unwinding that std::terminate()s in a destructor (pybind11's GIL guards
// retake the GIL in theirs), and a thread still simulating would use C++ statics that exit() destroys.
// So at exit (atexit runs before finalising) `closing` is set and atexit waits until no thread is busy
// in this module's C++ code without the GIL, or taking it, or calling Python from there: such a thread
// stops at its next step (a simulation checks every 1,024 decisions) and sleeps for good instead, the
// process ending.
namespace gil {
std::atomic<bool> closing{false};
std::atomic<int> busy{0};      // over every thread
thread_local int mine = 0;     // this thread's share of busy (sections nest: an Agent called from simulate)
struct Closing {};             // thrown to leave a simulation when Python is closing

[[noreturn]] void sleep_for_good() {
  busy.fetch_sub(mine);
  mine = 0;
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// Counts the caller as busy, or never returns once Python is closing.
void begin() {
  busy.fetch_add(1);  // sequentially consistent with closing's store: one of the two sees the other
  ++mine;
  if (closing.load()) sleep_for_good();
}

void end() {
  --mine;
  busy.fetch_sub(1);
}

// py::gil_scoped_release, safe at exit. `lock`, when given, is let go before the thread sleeps for good:
// another thread may be waiting for it, counted as busy.
class Released {
 public:
  explicit Released(std::unique_lock<std::mutex>* lock = nullptr) : state_(PyEval_SaveThread()), lock_(lock) { begin(); }
  ~Released() {
    if (closing.load()) {  // also while an exception (Closing) leaves the section
      if (lock_ && lock_->owns_lock()) lock_->unlock();
      sleep_for_good();
    }
    PyEval_RestoreThread(state_);
    end();
  }
  Released(const Released&) = delete;
  Released& operator=(const Released&) = delete;

 private:
  PyThreadState* state_;
  std::unique_lock<std::mutex>* lock_;
};

// py::gil_scoped_acquire, safe at exit: for a thread without the GIL calling into Python.
class Acquired {
 public:
  Acquired() {
    begin();
    state_ = PyGILState_Ensure();
  }
  ~Acquired() {
    PyGILState_Release(state_);
    end();
  }
  Acquired(const Acquired&) = delete;
  Acquired& operator=(const Acquired&) = delete;

 private:
  PyGILState_STATE state_;
};

// A child made by fork() has only the thread that forked: the others' counts are not its own.
void after_fork_in_child() { busy.store(mine); }

// Registered with atexit; called with the GIL.
void on_exit() {
  closing.store(true);
  const py::gil_scoped_release release;  // not finalising yet: retaking it is safe here
  while (busy.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// Lets a simulation stop part-way: at Ctrl-C (Python's signal handlers run, with the GIL, at most every
// 0.1 s) and when Python is closing. Checked every 1,024 decisions, which cost microseconds each.
class Interruptible final : public sim::Observer {
 public:
  void on_decision(Seconds, double) override {
    if (++decisions_ % 1024 != 0) return;
    if (closing.load()) throw Closing{};
    const auto now = std::chrono::steady_clock::now();
    if (now < next_) return;
    next_ = now + std::chrono::milliseconds(100);
    const Acquired held;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // KeyboardInterrupt, say
  }

 private:
  long long decisions_ = 0;
  std::chrono::steady_clock::time_point next_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
};
}  // namespace gil

namespace {
struct Cluster;
struct Trace;
struct Agent;
class Env;
class VecEnv;
}  // namespace

namespace pybind11::detail {
// An object made by T.__new__ without __init__ holds no C++ value, and pybind11 would hand its methods
// uninitialised memory (a crash, or a hang on a garbage mutex). Such an object is refused instead.
template <class T>
struct initialised_caster : type_caster_base<T> {
  bool load(handle src, bool convert) {
    const type_info* type = get_type_info(typeid(T));
    if (src && type && PyObject_TypeCheck(src.ptr(), type->type)) {
      const value_and_holder v_h = reinterpret_cast<instance*>(src.ptr())->get_value_and_holder(type, false);
      if (v_h.inst != nullptr && !v_h.holder_constructed()) {
        const std::string name = Py_TYPE(src.ptr())->tp_name;  // "rltune._core.Trace", or a subclass's own name
        throw type_error(name.substr(name.rfind('.') + 1) + " object was made by __new__ without __init__, so it holds nothing");
      }
    }
    return type_caster_base<T>::load(src, convert);
  }
};
template <>
struct type_caster<::Cluster> : initialised_caster<::Cluster> {};
template <>
struct type_caster<::Trace> : initialised_caster<::Trace> {};
template <>
struct type_caster<::Agent> : initialised_caster<::Agent> {};
template <>
struct type_caster<::Env> : initialised_caster<::Env> {};
template <>
struct type_caster<::VecEnv> : initialised_caster<::VecEnv> {};
}  // namespace pybind11::detail

namespace {

// Values shared between Python objects: an environment keeps its cluster and jobs alive.
struct Cluster {
  std::shared_ptr<const cluster::ClusterSpec> spec;
};
struct Trace {
  std::shared_ptr<const trace::Trace> trace;
};

Cluster load_cluster(const std::string& name_or_path) {
  return {std::make_shared<const cluster::ClusterSpec>(cluster::load_cluster(name_or_path))};
}

// A cluster argument: a Cluster, or a preset name or YAML file as --cluster takes.
// Text that may hold a file name that is not UTF-8 (a trace's source, a model's folder): decoded as
// os.fsdecode decodes, so that it names the same file again.
py::str file_text(const std::string& text) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeFSDefaultAndSize(text.data(), static_cast<Py_ssize_t>(text.size())));
}

// A file name given as str, bytes or a path object (pathlib.Path, os.PathLike); nullopt for anything
// else. Encoded as open() encodes it (os.fsencode), so a name that is not valid UTF-8 still names its file.
std::optional<std::string> path_text(const py::handle& value) {
  if (!py::isinstance<py::str>(value) && !py::isinstance<py::bytes>(value) && !py::hasattr(value, "__fspath__")) return std::nullopt;
  auto path = py::module_::import("os").attr("fsencode")(value).cast<std::string>();
  if (path.find('\0') != std::string::npos)  // the C library would read the name only up to it
    throw InputError(fmt::format("{}: a file name cannot hold a NUL character", py::repr(value).cast<std::string>()));
  return path;
}

Cluster as_cluster(const py::object& value) {
  if (py::isinstance<Cluster>(value)) return value.cast<Cluster>();
  if (const auto path = path_text(value)) return load_cluster(*path);
  throw InputError("cluster: expected a Cluster, a preset name or a YAML file");
}

Trace read_trace(const std::vector<std::string>& paths, const trace::ReadOptions& options, std::span<const trace::GivenSetting> given = {}) {
  if (paths.empty()) throw InputError("read_trace: no file given");
  return {std::make_shared<const trace::Trace>(trace::read_traces_as_given(paths, options, given))};
}

Trace generate(const Cluster& cluster, const std::string& like, int jobs, double load, std::uint64_t seed) {
  const workload::WorkloadModel model = workload::load_model(like.empty() ? workload::default_family(cluster.spec->source) : like);
  return {std::make_shared<const trace::Trace>(workload::generate(model, *cluster.spec, {.jobs = jobs, .load = load, .seed = seed}))};
}

// True or False, as Python's or numpy's bool.
bool is_flag(const py::handle& value) {
  return py::isinstance<py::bool_>(value) || py::isinstance(value, py::module_::import("numpy").attr("bool_"));
}

// A keyword argument's value as T; ValueError naming the argument when it has another type. Whole
// numbers must be integers (window_len=64.7 is not 64) and flags True or False (None is not False).
template <typename T>
void take(const py::handle& value, const std::string& key, T& into) {
  const auto refuse = [&] { throw InputError(fmt::format("{}: {} is not a valid value", key, py::repr(value).cast<std::string>())); };
  if constexpr (std::is_same_v<T, bool>) {
    if (!is_flag(value)) refuse();
  } else if constexpr (std::is_integral_v<T>) {
    if (!PyIndex_Check(value.ptr()) || PyBool_Check(value.ptr())) refuse();  // True is not 1 here
  } else if constexpr (std::is_floating_point_v<T>) {
    if (is_flag(value)) refuse();  // nor 1.0
  }
  try {
    into = value.cast<T>();
  } catch (const py::cast_error&) {
    throw InputError(fmt::format("{}: {} is not a valid value", key, py::repr(value).cast<std::string>()));
  }
}

// reset's seed: None (go on with the environment's own stream) or a whole number.
std::optional<std::uint64_t> optional_seed(const py::handle& value) {
  if (value.is_none()) return std::nullopt;
  std::uint64_t seed = 0;
  take(value, "seed", seed);
  return seed;
}

// The jobs an environment or a simulation runs: a Trace, a trace file, or (`generated`, a dict of
// like/jobs/load/seed) a generated workload of the cluster's family at load 0.9, whose jobs and seed
// default to `defaults`: rltune train's 20,000 jobs, seed 1, for the environments; rltune simulate's
// 2,000 jobs and its seed for simulate.
struct GeneratedDefaults {
  int jobs = 20000;
  std::uint64_t seed = 1;
};
Trace as_trace(const Cluster& cluster, const py::object& trace, const py::object& generated, GeneratedDefaults defaults = {}) {
  if (!trace.is_none() && !generated.is_none()) throw InputError("give trace or generated, not both");
  if (py::isinstance<Trace>(trace)) return trace.cast<Trace>();
  if (const auto path = path_text(trace)) return read_trace({*path}, {});
  if (!trace.is_none()) throw InputError("trace: expected a Trace or a file name");
  std::string like;
  int jobs = defaults.jobs;
  double load = 0.9;
  std::uint64_t seed = defaults.seed;
  if (!generated.is_none()) {
    if (!py::isinstance<py::dict>(generated)) throw InputError("generated: expected a dict of like, jobs, load and seed");
    const auto g = generated.cast<py::dict>();
    for (const auto& [key, value] : g) {
      const auto k = py::str(key).cast<std::string>();
      if (k == "like") take(value, "generated.like", like);
      else if (k == "jobs") take(value, "generated.jobs", jobs);
      else if (k == "load") take(value, "generated.load", load);
      else if (k == "seed") take(value, "generated.seed", seed);
      else throw InputError(fmt::format("generated: unknown key '{}' (known: like, jobs, load, seed)", k));
    }
  }
  return generate(cluster, like, jobs, load, seed);
}

// The numeric settings given as dicts (milp={"extra_nodes": 2}, multifactor={...}, runtime_options={...},
// keyed as in experiment YAML), into `s`.
void set_numbers(experiment::ProfileSettings& s, const py::handle& dict, const char* group, const char* argument) {
  if (dict.is_none()) return;
  if (!py::isinstance<py::dict>(dict)) throw InputError(fmt::format("{}: expected a dict of settings", argument));
  for (const auto& [key, value] : dict.cast<py::dict>()) {
    double number = 0;
    try {
      if (is_flag(value)) throw py::cast_error();  // True is no weight
      number = value.cast<double>();
    } catch (const py::cast_error&) {
      throw InputError(fmt::format("{}.{}: {} is not a number", group, py::str(key).cast<std::string>(), py::repr(value).cast<std::string>()));
    }
    s.set(group, py::str(key).cast<std::string>(), number);
  }
}

// As the CLI: settings that would be ignored, or that contradict the semantics, are errors. `given`:
// the keywords the caller gave (a semantics' fixed setting given again with its own value is fine);
// `policy_milp`: a policy places with milp itself (NAME@milp); `multifactor`: a policy (or the baseline)
// may rank by multifactor.
void check_settings(const experiment::ProfileSettings& s, const std::set<std::string>& given, bool policy_milp, bool sampled,
                    bool multifactor) {
  const policy::ProfileOptions chosen = s.check_semantics([&](const std::string& key) { return given.contains(key); }, "");
  const bool milp_used = policy_milp || chosen.placement == "milp";
  const auto any = [](const std::vector<std::optional<double>>& values) {
    return std::any_of(values.begin(), values.end(), [](const auto& v) { return v.has_value(); });
  };
  if (any(s.engine_values) && !sim::is_predicted(sim::parse_runtime_knowledge(s.runtime)))
    throw InputError(fmt::format("runtime_options apply only to runtime 'predicted' (runtime is {})", s.runtime));
  if (any(s.milp_values) && !milp_used)
    throw InputError(fmt::format("milp settings apply only to placement 'milp' (placement is {})", chosen.placement));
  if (given.contains("milp_model") && !milp_used)
    throw InputError(fmt::format("milp_model applies only to placement 'milp' (placement is {})", chosen.placement));
  if (any(s.sampling_values) && !sampled) throw InputError("temperature " + policy::only_for_sampled());
  if ((any(s.multifactor_values) || s.favor_small) && !multifactor)
    throw InputError("multifactor settings apply only to the multifactor policy (or a model ranking by it)");
}

// A policy written in Python: a callable given each pass's observation [kSlots x features] and action
// mask, returning one score per action; the best legal action is taken, as `rl:DIR` takes a model's.
struct Agent {
  py::function fn;
  std::string name, baseline, features;
  bool skip = false, commit = true;

  int actions() const { return skip ? rl::kActions : rl::kSlots; }
  std::unique_ptr<policy::ProfileScheduler> profile(const policy::ProfileOptions& options) const {
    rl::AgentSpec spec;
    spec.baseline = baseline;
    spec.agent.observation.features = rl::parse_feature_set(features);
    spec.agent.skip = skip;
    spec.agent.commit = commit;
    const int width = rl::feature_count(spec.agent.observation.features), count = actions();
    auto rank = [fn = fn, name = name, width, count](const rl::Observation& obs, std::span<float> out) {
      const gil::Acquired held;  // simulate runs without it
      py::array_t<float> values({rl::kSlots, width});
      std::memcpy(values.mutable_data(), obs.values.data(), sizeof(float) * rl::kSlots * static_cast<std::size_t>(width));
      py::array_t<bool> mask(count);
      for (int a = 0; a < count; ++a) mask.mutable_data()[a] = obs.mask[static_cast<std::size_t>(a)] != 0;
      const py::object result = fn(values, mask);
      const py::array raw = py::array::ensure(result);
      const char kind = raw ? raw.dtype().kind() : '?';  // real numbers only: no strings, no complex values
      using Scores = py::array_t<double, py::array::c_style | py::array::forcecast>;
      const Scores scores = kind == 'b' || kind == 'i' || kind == 'u' || kind == 'f' ? Scores::ensure(raw) : Scores();
      if (!scores || scores.ndim() != 1 || scores.shape(0) != count) {
        std::string why;  // numpy's own reason, when it could not read the result at all (a tensor that requires grad, say)
        if (!raw) try {
            py::module_::import("numpy").attr("asarray")(result);
          } catch (const py::error_already_set& e) {
            const std::string text = e.what();
            why = fmt::format(" (numpy: {})", text.substr(0, text.find('\n')));
          }
        std::string shown = py::repr(result).cast<std::string>().substr(0, 80);
        std::replace(shown.begin(), shown.end(), '\n', ' ');
        throw InputError(
            fmt::format("agent {}: returned {}; expected {} scores, one real number per action{}", name, shown, count, why));
      }
      const double* v = scores.data();
      for (int a = 0; a < count; ++a)
        if (std::isnan(v[a])) throw InputError(fmt::format("agent {}: score {} is NaN", name, a));
      // Passed on as ranks (equal scores, equal ranks): the order of float64 scores survives, which
      // float32 would not keep (1.7e9 + 1 and 1.7e9 + 2 are one float).
      std::vector<int> order(static_cast<std::size_t>(count));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return v[x] < v[y]; });
      for (std::size_t k = 0, rank = 0; k < order.size(); ++k) {
        if (k > 0 && v[order[k]] != v[order[k - 1]]) rank = k;
        out[static_cast<std::size_t>(order[k])] = static_cast<float>(rank);
      }
    };
    return std::make_unique<policy::ProfileScheduler>(options, rl::make_agent_picker(rank, spec, options.priority_options),
                                                      policy::make_placement(options));
  }
};

// The environment's arguments, by keyword; the defaults are Python's (python/rltune/__init__.py
// documents them).
struct EnvArgs {
  py::object cluster = py::str("helios"), trace = py::none(), generated = py::none();
  int window_len = 256, warmup = 0;
  double train_split = 0.7;
  std::string split = "train", baseline = "fcfs", score = "bsld", features = "extended";
  experiment::ProfileSettings profile;  // semantics, placement, blocking, backfill, runtime and their numbers
  bool skip = false, commit = true;
  std::string illegal_action = "raise";  // or "first_legal"
  std::uint64_t seed = 0;
};


// How jobs start, by keyword (experiment::choice_settings()' keys with '_' for '.', and the numeric
// settings as dicts), as Env and simulate take them; false for any other keyword.
bool take_profile_setting(experiment::ProfileSettings& p, const std::string& k, const py::handle& value) {
  for (const experiment::ChoiceSetting& c : experiment::choice_settings())
    if (k == c.python_keyword()) {
      std::visit([&](auto field) { take(value, k, p.*field); }, c.field);
      if (!c.is_switch()) {  // an unknown name is refused first, as the CLI refuses it at parse time
        policy::ProfileOptions unused;
        sim::EngineOptions unused_engine;
        c.apply_text(unused, unused_engine, p.*std::get<std::string experiment::ProfileSettings::*>(c.field));
      }
      return true;
    }
  if (k == "milp") set_numbers(p, value, "milp", "milp");
  else if (k == "multifactor") set_numbers(p, value, "multifactor", "multifactor");
  else if (k == "runtime_options") set_numbers(p, value, "runtime", "runtime_options");
  else if (k == "temperature") {
    double number = 0;
    take(value, k, number);
    p.set("sampling", k, number);
  } else return false;
  return true;
}

EnvArgs env_args(const py::kwargs& kwargs) {
  EnvArgs a;
  std::set<std::string> given;
  for (const auto& [key, value] : kwargs) {
    const auto k = key.cast<std::string>();
    if (take_profile_setting(a.profile, k, value)) {
      given.insert(k);  // check_settings tells given values from defaults
      continue;
    }
    if (k == "cluster") a.cluster = py::reinterpret_borrow<py::object>(value);
    else if (k == "trace") a.trace = py::reinterpret_borrow<py::object>(value);
    else if (k == "generated") a.generated = py::reinterpret_borrow<py::object>(value);
    else if (k == "window_len") take(value, k, a.window_len);
    else if (k == "warmup") take(value, k, a.warmup);
    else if (k == "train_split") take(value, k, a.train_split);
    else if (k == "split") take(value, k, a.split);
    else if (k == "baseline") take(value, k, a.baseline);
    else if (k == "score") take(value, k, a.score);
    else if (k == "features") take(value, k, a.features);
    else if (k == "skip") take(value, k, a.skip);
    else if (k == "commit") take(value, k, a.commit);
    else if (k == "seed") take(value, k, a.seed);
    else if (k == "illegal_action") take(value, k, a.illegal_action);
    else throw py::type_error(fmt::format("Env: unexpected argument '{}'", k));
  }
  check_settings(a.profile, given, false, false, policy::may_use_multifactor(a.baseline));
  return a;
}

// reset()'s options: {"start": ...} or None. Returns the value of "start", or None.
py::object start_option(const py::object& options) {
  py::object start = py::none();
  if (options.is_none()) return start;
  if (!py::isinstance<py::dict>(options)) throw InputError("reset options: expected a dict");
  for (const auto& [key, value] : options.cast<py::dict>()) {
    const auto k = py::str(key).cast<std::string>();
    if (k != "start") throw InputError(fmt::format("reset options: unknown key '{}' (known: start)", k));
    start = py::reinterpret_borrow<py::object>(value);
  }
  return start;
}

// Python's view of the episode environment: Gymnasium's reset/step over rl::Env.
class Env {
 public:
  explicit Env(const EnvArgs& a) : cluster_(as_cluster(a.cluster)), trace_(as_trace(cluster_, a.trace, a.generated)), rng_(a.seed),
                                   split_(sim::parse_split(a.split)) {
    if (a.illegal_action != "raise" && a.illegal_action != "first_legal")
      throw InputError(fmt::format("illegal_action '{}': must be raise or first_legal", a.illegal_action));
    first_legal_ = a.illegal_action == "first_legal";
    rl::EnvOptions& o = options_;
    o.window = {.count = 1, .length = a.window_len, .warmup = a.warmup, .train_split = a.train_split};
    // Named as the keywords are: window_len, not the YAML key "length".
    for (const auto& [keyword, key] : {std::pair{"window_len", "length"}, {"warmup", "warmup"}, {"train_split", "train_split"}}) {
      const sim::WindowSetting& s = sim::window_setting(key);
      if (const double v = s.get(o.window); !(v >= s.min && v <= s.max))
        throw InputError(fmt::format("{} {}: must be between {} and {}", keyword, v, s.min, s.max));
    }
    if (static_cast<std::size_t>(a.window_len) > trace_.trace->jobs.size())
      throw InputError(fmt::format("window_len {}: must be at most the trace's {} jobs", a.window_len, trace_.trace->jobs.size()));
    const experiment::ProfileSettings& settings = a.profile;
    o.baseline = a.baseline;
    o.score = rl::parse_score(a.score);
    o.profile = settings.profile(a.baseline);
    o.engine = settings.engine();
    o.observation.features = rl::parse_feature_set(a.features);
    o.skip = a.skip;
    o.commit = a.commit;
    env_ = std::make_unique<rl::Env>(*cluster_.spec, trace_.trace->jobs, o);
    env_->check_windows_run(split_);  // now, not at some later reset()
  }

  int features() const { return rl::feature_count(options_.observation.features); }
  int actions() const { return options_.skip ? rl::kActions : rl::kSlots; }
  bool done() const { return done_; }
  // Under illegal_action="first_legal": whether the last step's action was not legal and the first legal
  // one was taken instead.
  bool takes_first_legal() const { return first_legal_; }
  bool replaced() const { return replaced_; }

  // Starts an episode: on a window drawn from the split, or at options["start"].
  void reset(std::optional<std::uint64_t> seed, std::optional<std::size_t> start) {
    done_ = true;  // until the new episode has started: a failed reset leaves nothing to step
    if (seed) rng_ = Rng(*seed);
    if (start) {
      const auto [first, last] = sim::split_range(trace_.trace->jobs.size(), options_.window.train_split, split_);
      if (*start < first || *start > last || static_cast<std::size_t>(options_.window.length) > last - *start)
        throw InputError(fmt::format("start {}: a window of {} jobs must lie within the {} split, jobs {} to {}", *start,
                                     options_.window.length, sim::to_string(split_), first, last));
      env_->reset_at(*start);
    } else {
      env_->reset(rng_, split_);
    }
    done_ = false;
    started_ = true;
    reward_ = 0;
    replaced_ = false;
  }

  // Applies an action; the reward is nonzero only at the end of the episode.
  void step(int action) {
    if (done_) throw InputError(started_ ? "the episode has ended: call reset() first" : "no episode has started: call reset() first");
    if (action < 0 || action >= actions()) throw InputError(fmt::format("action {}: must be in [0, {})", action, actions()));
    const auto& mask = env_->observation().mask;
    replaced_ = !mask[static_cast<std::size_t>(action)];
    if (replaced_) {
      if (!first_legal_) throw InputError(fmt::format("action {}: not legal now (info['action_mask'] tells which are)", action));
      action = static_cast<int>(std::find(mask.begin(), mask.begin() + actions(), 1) - mask.begin());
    }
    const rl::Env::Step s = env_->step(action);
    done_ = s.done;
    reward_ = s.reward;
  }
  double reward() const { return reward_; }

  // For benchmarks: plays `episodes` episodes in C++ (legal actions: the first, or uniformly drawn with
  // `seed`), as a C++ agent would, reading observations in place; returns the steps taken.
  std::size_t play(int episodes, bool random, std::uint64_t seed) {
    Rng pick(seed);
    std::size_t steps = 0;
    for (int k = 0; k < episodes; ++k) {
      reset(std::nullopt, std::nullopt);
      while (!done_) {
        const auto& mask = env_->observation().mask;
        int legal[rl::kActions], count = 0;
        for (int a = 0; a < actions(); ++a)
          if (mask[static_cast<std::size_t>(a)]) legal[count++] = a;
        const int action = random ? legal[pick.uniform_int(0, count - 1)] : legal[0];
        done_ = env_->step(action).done;
        ++steps;
      }
    }
    return steps;
  }

  // The observation [kSlots x features] into `out`; zeros once the episode has ended.
  void write_observation(float* out) const {
    const std::size_t n = static_cast<std::size_t>(rl::kSlots * features());
    if (done_) std::memset(out, 0, n * sizeof(float));
    else std::memcpy(out, env_->observation().values.data(), n * sizeof(float));
  }
  bool legal(int action) const { return !done_ && env_->observation().mask[static_cast<std::size_t>(action)] != 0; }
  void write_mask(bool* out) const {
    for (int a = 0; a < actions(); ++a) out[a] = legal(a);
  }

  // The episode's scores over the window's jobs (not the warm-up's).
  struct Metrics {
    double score, baseline_score, avg_bsld, avg_wait_s, avg_jct_s, gpu_utilization;
  };
  Metrics metrics() const {
    const sim::Engine& e = env_->engine();
    const std::size_t first = e.job_count() - static_cast<std::size_t>(options_.window.length);
    return {env_->agent_score(),
            env_->baseline_score(),
            rl::score(e, rl::Score::bsld, first),
            rl::score(e, rl::Score::wait, first),
            rl::score(e, rl::Score::jct, first),
            -rl::score(e, rl::Score::util, first)};
  }
  std::size_t window_start() const { return env_->window_start(); }
  Seconds now() const { return env_->engine().now(); }
  // Held while the environment moves (without the GIL) and while step and reset read its outputs: two
  // Python threads may step one object. Take it only after letting the GIL go.
  std::mutex& in_use() { return in_use_; }

 private:
  std::mutex in_use_;
  Cluster cluster_;
  Trace trace_;
  rl::EnvOptions options_;
  std::unique_ptr<rl::Env> env_;
  Rng rng_;
  sim::Split split_;
  bool done_ = true;
  bool started_ = false;  // a reset has succeeded once
  double reward_ = 0;
  bool first_legal_ = false;  // illegal_action="first_legal"
  bool replaced_ = false;     // the last step took the first legal action for an illegal one
};

py::array_t<float> observation_array(const Env& env) {
  py::array_t<float> obs({rl::kSlots, env.features()});
  env.write_observation(obs.mutable_data());
  return obs;
}

py::array_t<bool> mask_array(const Env& env) {
  py::array_t<bool> mask(env.actions());
  env.write_mask(mask.mutable_data());
  return mask;
}

constexpr const char* kMetricNames[] = {"score", "baseline_score", "avg_bsld", "avg_wait_s", "avg_jct_s", "gpu_utilization"};

// The info dicts' keys, made once: building a key's string at every step cost as much as the dict.
// Never freed, so that no Python object outlives the interpreter in a static destructor.
struct InfoKeys {
  py::str action_mask{"action_mask"}, window_start{"window_start"}, now{"now"}, illegal_action{"illegal_action"},
      final{"_final"}, final_window_start{"final_window_start"};
  std::array<py::str, std::size(kMetricNames)> metrics;
  InfoKeys() {
    for (std::size_t k = 0; k < metrics.size(); ++k) metrics[k] = py::str(kMetricNames[k]);
  }
};
const InfoKeys& info_keys() {
  static const InfoKeys* keys = new InfoKeys();
  return *keys;
}
std::array<double, 6> metric_values(const Env::Metrics& m) {
  return {m.score, m.baseline_score, m.avg_bsld, m.avg_wait_s, m.avg_jct_s, m.gpu_utilization};
}

py::dict step_info(const Env& env) {
  const InfoKeys& key = info_keys();
  py::dict info;
  info[key.action_mask] = mask_array(env);
  info[key.window_start] = env.window_start();
  info[key.now] = env.now();
  if (env.takes_first_legal()) info[key.illegal_action] = env.replaced();
  if (env.done()) {
    const auto values = metric_values(env.metrics());
    for (std::size_t k = 0; k < values.size(); ++k) info[key.metrics[k]] = values[k];
  }
  return info;
}

// n environments stepped together; environment i is seeded seed + i, so VecEnv(n) equals n Envs
// stepped in turn. An environment whose episode ends starts the next one at once (auto-reset): the
// observation returned is the new episode's, and the ended episode's metrics are in info.
class VecEnv {
 public:
  VecEnv(std::vector<std::unique_ptr<Env>> envs, int threads)
      : envs_(std::move(envs)),
        team_(threads),
        none_ended_(read_only(envs_.size(), false)),
        no_metric_(read_only(envs_.size(), std::nan(""))),
        no_start_(read_only(envs_.size(), -1LL)) {}

  std::size_t size() const { return envs_.size(); }
  // Which actions are legal now: [n x actions].
  py::array_t<bool> masks() const {
    const int actions = envs_.front()->actions();
    py::array_t<bool> mask({static_cast<py::ssize_t>(envs_.size()), static_cast<py::ssize_t>(actions)});
    for (std::size_t i = 0; i < envs_.size(); ++i) envs_[i]->write_mask(mask.mutable_data() + i * actions);
    return mask;
  }
  const Env& env(std::size_t i) const { return *envs_[i]; }

  // options {"start": N} starts every environment at job N; {"start": [N0, N1, ...]}, each at its own.
  py::tuple reset(std::optional<std::uint64_t> seed, const py::object& options) {
    std::vector<std::optional<std::size_t>> starts(envs_.size());
    if (const py::object given = start_option(options); !given.is_none()) {
      // One integer; a numpy array of them has __index__ too (when it holds one), but is one per environment.
      if (PyIndex_Check(given.ptr()) && !(py::isinstance<py::array>(given) && given.cast<py::array>().ndim() > 0)) {
        take(given, "options['start']", starts.front().emplace());
        std::fill(starts.begin() + 1, starts.end(), starts.front());
      } else {
        if (!py::isinstance<py::sequence>(given) || py::len(given) != envs_.size())
          throw InputError(fmt::format("options['start']: expected an integer or {} integers, one per environment", envs_.size()));
        const auto each = given.cast<py::sequence>();
        for (std::size_t i = 0; i < envs_.size(); ++i) take(each[i], fmt::format("options['start'][{}]", i), starts[i].emplace());
      }
    }
    Outputs out = outputs();
    const Buffers buffers = out.buffers();
    {
      const gil::Released release;
      const std::lock_guard lock(in_use_);
      broken_ = true;  // until every environment has started again
      team_.for_each(
          envs_.size(),
          [&](std::size_t i, int) {
            envs_[i]->reset(seed ? std::optional<std::uint64_t>(*seed + i) : std::nullopt, starts[i]);
            write(i, buffers);
          },
          /*pinned=*/true);
      broken_ = false;
    }
    const std::vector<std::uint8_t> none(envs_.size(), 0);
    return py::make_tuple(out.obs, infos(out, none, {}, none));
  }

  py::tuple step(const py::object& given) {
    const py::array raw = py::array::ensure(given);
    if (!raw || (raw.dtype().kind() != 'i' && raw.dtype().kind() != 'u'))  // 0.9 is not action 0
      throw py::type_error(fmt::format("actions: expected {} integers, one per environment", envs_.size()));
    if (raw.ndim() != 1 || static_cast<std::size_t>(raw.shape(0)) != envs_.size())
      throw InputError(fmt::format("actions: expected {} actions, one per environment", envs_.size()));
    const auto actions = py::array_t<long long, py::array::c_style | py::array::forcecast>::ensure(raw);
    const long long* a = actions.data();
    for (std::size_t i = 0; i < envs_.size(); ++i)  // shown as given: a uint64 past 2^63 reads negative here
      if (a[i] < 0 || a[i] >= envs_[i]->actions())
        throw InputError(fmt::format("actions[{}] = {}: must be in [0, {})", i, py::str(raw.attr("item")(i)).cast<std::string>(),
                                     envs_[i]->actions()));
    std::vector<std::uint8_t> ended(envs_.size(), 0), replaced(envs_.size(), 0);
    std::vector<Env::Metrics> finished(envs_.size());
    std::vector<std::size_t> finished_start(envs_.size(), 0);
    py::array_t<double> rewards(static_cast<py::ssize_t>(envs_.size()));
    double* r = rewards.mutable_data();
    Outputs out = outputs();
    const Buffers buffers = out.buffers();
    {
      const gil::Released release;
      const std::lock_guard lock(in_use_);
      if (broken_) throw InputError("an earlier step or reset failed part-way: call reset() first");
      for (std::size_t i = 0; i < envs_.size(); ++i)  // check all before any moves
        if (!envs_[i]->done() && !envs_[i]->takes_first_legal() && !envs_[i]->legal(static_cast<int>(a[i])))
          throw InputError(fmt::format("actions[{}] = {}: not legal now (info['action_mask'] tells which are)", i, a[i]));
      // An error part-way leaves some environments stepped and others not: only reset() can go on.
      broken_ = true;
      team_.for_each(envs_.size(), [&](std::size_t i, int) {
        Env& e = *envs_[i];
        e.step(static_cast<int>(a[i]));
        replaced[i] = e.replaced();
        r[i] = e.reward();
        if (e.done()) {
          ended[i] = 1;
          finished[i] = e.metrics();
          finished_start[i] = e.window_start();
          e.reset(std::nullopt, std::nullopt);
        }
        write(i, buffers);
      }, /*pinned=*/true);
      broken_ = false;
    }
    py::dict info = infos(out, ended, finished, replaced);
    if (any(ended)) {
      py::array_t<long long> final_start(static_cast<py::ssize_t>(envs_.size()));
      for (std::size_t i = 0; i < envs_.size(); ++i) final_start.mutable_data()[i] = ended[i] ? static_cast<long long>(finished_start[i]) : -1;
      info[keys_.final_window_start] = final_start;
    } else {
      info[keys_.final_window_start] = no_start_;
    }
    return py::make_tuple(out.obs, rewards, info[keys_.final], none_ended_, info);
  }

 private:
  // Arrays that say that no episode ended are the same at most steps: made once and shared, read-only.
  // Its memory is an immutable bytes object's: numpy makes no array over one writeable (not this
  // array, not its base, not a view), so no caller can change what every later step returns.
  template <class T>
  static py::array_t<T> read_only(std::size_t n, T value) {
    // A new object, always (given its bytes, CPython may hand out a shared one, as b'\x00'): filled
    // before anyone else sees it.
    const auto storage = py::reinterpret_steal<py::bytes>(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n * sizeof(T))));
    if (!storage) throw py::error_already_set();
    T* data = reinterpret_cast<T*>(PyBytes_AsString(storage.ptr()));
    std::fill(data, data + n, value);
    py::array_t<T> a({static_cast<py::ssize_t>(n)}, {static_cast<py::ssize_t>(sizeof(T))}, data, storage);
    a.attr("setflags")(py::arg("write") = false);
    return a;
  }
  static bool any(const std::vector<std::uint8_t>& ended) {
    return std::any_of(ended.begin(), ended.end(), [](std::uint8_t e) { return e != 0; });
  }

  static py::array_t<bool> flags(const std::vector<std::uint8_t>& set) {
    py::array_t<bool> a(static_cast<py::ssize_t>(set.size()));
    for (std::size_t i = 0; i < set.size(); ++i) a.mutable_data()[i] = set[i] != 0;
    return a;
  }
  // What a reset or step returns per environment: made while the GIL is held, then filled by each
  // environment's own task, so that copying the observations out runs on all threads too.
  struct Buffers {  // raw pointers into Outputs, for tasks that run without the GIL
    float* obs;
    bool* mask;
    long long* starts;
  };
  struct Outputs {
    py::array_t<float> obs;     // [n x slots x features]
    py::array_t<bool> mask;     // [n x actions]
    py::array_t<long long> starts;  // [n]
    Buffers buffers() { return {obs.mutable_data(), mask.mutable_data(), starts.mutable_data()}; }
  };
  Outputs outputs() const {
    const auto n = static_cast<py::ssize_t>(envs_.size());
    const Env& e = *envs_.front();
    return {py::array_t<float>({n, static_cast<py::ssize_t>(rl::kSlots), static_cast<py::ssize_t>(e.features())}),
            py::array_t<bool>({n, static_cast<py::ssize_t>(e.actions())}), py::array_t<long long>(n)};
  }
  void write(std::size_t i, const Buffers& b) const {
    const Env& e = *envs_[i];
    e.write_observation(b.obs + i * static_cast<std::size_t>(rl::kSlots * e.features()));
    e.write_mask(b.mask + i * static_cast<std::size_t>(e.actions()));
    b.starts[i] = static_cast<long long>(e.window_start());
  }
  // action_mask [n x actions]; per metric an array with NaN where no episode ended; "_final" marks the ended;
  // under illegal_action="first_legal", "illegal_action" marks the environments whose action was replaced.
  py::dict infos(const Outputs& out, const std::vector<std::uint8_t>& ended, const std::vector<Env::Metrics>& finished,
                 const std::vector<std::uint8_t>& replaced) const {
    const auto n = static_cast<py::ssize_t>(envs_.size());
    py::dict info;
    info[keys_.action_mask] = out.mask;
    info[keys_.window_start] = out.starts;
    if (envs_.front()->takes_first_legal()) info[keys_.illegal_action] = any(replaced) ? flags(replaced) : none_ended_;
    if (!any(ended)) {
      info[keys_.final] = none_ended_;
      for (const py::str& name : keys_.metrics) info[name] = no_metric_;
      return info;
    }
    py::array_t<bool> final_mask = flags(ended);
    final_mask.attr("setflags")(py::arg("write") = false);  // it is terminated too: one array, read-only as when none ended
    info[keys_.final] = final_mask;
    for (std::size_t k = 0; k < std::size(kMetricNames); ++k) {
      py::array_t<double> values(n);
      for (std::size_t i = 0; i < envs_.size(); ++i)
        values.mutable_data()[i] = ended[i] ? metric_values(finished[i])[k] : std::nan("");
      info[keys_.metrics[k]] = values;
    }
    return info;
  }

  std::vector<std::unique_ptr<Env>> envs_;
  const InfoKeys& keys_ = info_keys();
  ThreadTeam team_;
  py::array_t<bool> none_ended_;  // all false: terminated, truncated and "_final" when no episode ended
  py::array_t<double> no_metric_;    // all NaN
  py::array_t<long long> no_start_;  // all -1
  std::mutex in_use_;    // held while the environments move without the GIL
  bool broken_ = false;  // a step or reset failed part-way
};

// Columns of n rows, in the order they are added: numbers as numpy arrays, text as lists (pandas-friendly).
class Columns {
 public:
  explicit Columns(std::size_t rows) : rows_(static_cast<py::ssize_t>(rows)) {}
  template <typename T>
  T* numbers(const char* name) {
    py::array_t<T> column(rows_);
    dict_[name] = column;
    return column.mutable_data();
  }
  py::list text(const char* name) {
    py::list column;
    dict_[name] = column;
    return column;  // shares the list in the dict
  }
  py::dict dict() const { return dict_; }

 private:
  py::ssize_t rows_;
  py::dict dict_;
};

// Per-job records of runs: the columns of jobs.csv. Rejected jobs have -1 times and a NaN slowdown.
py::dict job_columns(const std::vector<const metrics::RunMetrics*>& runs) {
  std::size_t n = 0;
  for (const auto* run : runs) n += run->jobs.size();
  Columns c(n);
  py::list window = c.text("window"), job_id = c.text("job_id"), pool = c.text("pool");
  long long* gpus = c.numbers<long long>("num_gpus");
  long long* submit = c.numbers<long long>("submit_time");
  long long* start = c.numbers<long long>("start_time");
  long long* end = c.numbers<long long>("end_time");
  long long* wait = c.numbers<long long>("wait_s");
  long long* jct = c.numbers<long long>("jct_s");
  double* bsld = c.numbers<double>("bsld");
  py::list placement = c.text("placement"), status = c.text("status"), reason = c.text("reason");
  std::size_t k = 0;
  for (const auto* run : runs)
    for (const metrics::JobRecord& j : run->jobs) {
      const bool done = j.completed();
      window.append(run->window);
      job_id.append(j.job_id);
      pool.append(j.pool);
      gpus[k] = j.gpus;
      submit[k] = j.submit;
      start[k] = done ? j.start : -1;
      end[k] = done ? j.end : -1;
      wait[k] = done ? j.wait() : -1;
      jct[k] = done ? j.jct() : -1;
      bsld[k] = done ? j.bsld() : std::nan("");
      placement.append(j.placement);
      status.append(j.status);
      reason.append(j.reason);
      ++k;
    }
  return c.dict();
}

py::object json_to_python(const report::Json& j) {
  return py::module_::import("json").attr("loads")(json_text(j));
}

// Each policy over the windows: {name: {"jobs": columns, "summary": summary.json's object}}.
py::dict simulate(const py::object& cluster_arg, const py::object& trace_arg, const py::object& generated,
                  const py::object& policies_arg, const std::vector<std::string>& window_texts, const py::object& warmup_arg,
                  const py::object& seed_arg, const py::kwargs& how) {
  long long warmup = 0;
  std::uint64_t seed = 1;
  take(warmup_arg, "warmup", warmup);
  take(seed_arg, "seed", seed);
  const Cluster cluster = as_cluster(cluster_arg);
  // As `rltune simulate --seed N`: 2,000 jobs generated with seed N unless `generated` says otherwise.
  const Trace trace = as_trace(cluster, trace_arg, generated, {.jobs = 2000, .seed = seed});
  const auto windows = sim::parse_windows(window_texts, trace.trace->jobs.size(), warmup);
  experiment::ProfileSettings settings;
  std::set<std::string> given;
  for (const auto& [key, value] : how) {
    if (!take_profile_setting(settings, key.cast<std::string>(), value))
      throw py::type_error(fmt::format("simulate: unexpected argument '{}'", key.cast<std::string>()));
    given.insert(key.cast<std::string>());
  }
  const sim::EngineOptions engine = settings.engine();
  // One name, or a sequence of names and Agents.
  const py::list policies = py::isinstance<py::str>(policies_arg) || py::isinstance<Agent>(policies_arg) ? py::list(py::make_tuple(policies_arg))
                                                                                                          : py::list(policies_arg);
  if (policies.empty()) throw InputError("policies: no policy given");
  // Each policy's name and how to build its scheduler.
  struct Entry {
    std::string name;
    policy::ProfileOptions options;
    const Agent* agent = nullptr;
  };
  std::vector<Entry> entries;
  std::vector<Agent> agents;
  agents.reserve(policies.size());
  for (const py::handle& p : policies) {
    Entry e;
    if (py::isinstance<Agent>(p)) {
      agents.push_back(p.cast<Agent>());
      e.agent = &agents.back();
      e.options = settings.profile(e.agent->baseline);
      e.name = e.agent->name;
    } else if (py::isinstance<py::str>(p)) {
      e.options = settings.profile(p.cast<std::string>());
      e.name = e.options.name();
    } else {
      throw InputError(fmt::format("policies: {} is neither a policy name nor an Agent", py::repr(p).cast<std::string>()));
    }
    e.options.priority_options.seed = seed;  // rl-sampled's stream, as simulate --seed
    for (const Entry& before : entries)
      if (before.name == e.name) throw InputError(fmt::format("policies: {} is given twice", e.name));
    entries.push_back(std::move(e));
  }
  check_settings(settings, given, std::any_of(entries.begin(), entries.end(), [](const Entry& e) { return e.options.placement == "milp"; }),
                 std::any_of(entries.begin(), entries.end(), [](const Entry& e) { return !e.agent && policy::is_sampled(e.options.priority); }),
                 std::any_of(entries.begin(), entries.end(), [](const Entry& e) { return policy::may_use_multifactor(e.options.priority); }));
  py::dict out;
  for (const Entry& e : entries) {
    // Built and destroyed with the GIL held: an Agent's scheduler holds Python objects.
    const auto scheduler = e.agent ? e.agent->profile(e.options) : policy::make_profile(e.options);
    std::vector<metrics::RunMetrics> runs;
    {
      const gil::Released release;
      gil::Interruptible interruptible;
      runs = experiment::run_windows(*cluster.spec, trace.trace->jobs, windows, static_cast<std::size_t>(warmup), engine, *scheduler,
                                     &interruptible);
    }
    std::vector<const metrics::RunMetrics*> run_ptrs;
    for (const auto& r : runs) run_ptrs.push_back(&r);
    py::dict result;
    result["jobs"] = job_columns(run_ptrs);
    result["summary"] = json_to_python(report::summary_json(run_ptrs, engine.runtime != sim::RuntimeKnowledge::oracle));
    out[file_text(e.name)] = result;  // a model's name holds its folder's
  }
  return out;
}

// A trace's jobs as columns.
py::dict trace_columns(const Trace& t) {
  const auto& jobs = t.trace->jobs;
  Columns c(jobs.size());
  py::list id = c.text("job_id");
  long long* submit = c.numbers<long long>("submit_time");
  long long* duration = c.numbers<long long>("duration");
  int* gpus = c.numbers<int>("num_gpus");
  py::list vc = c.text("vc"), gpu_types = c.text("gpu_types"), user = c.text("user");
  int* cpus = c.numbers<int>("num_cpus");
  long long* requested = c.numbers<long long>("requested_time");
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const trace::JobSpec& j = jobs[k];
    id.append(j.id);
    submit[k] = j.submit;
    duration[k] = j.duration;
    gpus[k] = j.gpus;
    vc.append(j.vc);
    gpu_types.append(trace::join_gpu_types(j.gpu_types));
    user.append(j.user);
    cpus[k] = j.cpus;
    requested[k] = j.requested_time;
  }
  return c.dict();
}

}  // namespace

// Moves `e` without the GIL, then reads its outputs with the GIL back, both under the environment's
// lock: another Python thread stepping the same object cannot slip in between. (No deadlock: every
// taker of the lock lets the GIL go first.)
template <class Move, class Read>
py::object locked(Env& e, const Move& move, const Read& read) {
  std::unique_lock<std::mutex> lock;
  {
    const gil::Released release(&lock);
    lock = std::unique_lock(e.in_use());
    move();
  }
  return read();
}

PYBIND11_MODULE(_core, m) {
  m.doc() = "rltune's engine: the RL environment, simulation, clusters and traces";
  py::module_::import("atexit").attr("register")(py::cpp_function(&gil::on_exit));
  pthread_atfork(nullptr, nullptr, &gil::after_fork_in_child);
  policy::register_builtins();
  rl::register_rl_policy();
  py::register_exception_translator([](std::exception_ptr p) {
    // A message may name a file whose name is not UTF-8: its bytes shown escaped, never an empty message.
    const auto raise = [](PyObject* type, const char* what) {
      const py::object message = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "backslashreplace"));
      if (message) PyErr_SetObject(type, message.ptr());
    };
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      raise(PyExc_ValueError, e.what());
    } catch (const InvariantError& e) {
      raise(PyExc_RuntimeError, e.what());
    }
  });
  m.attr("SLOTS") = rl::kSlots;
  m.attr("SKIP") = rl::kSkip;

  py::class_<Cluster>(m, "Cluster", "A cluster: pools of identical nodes")
      .def(py::init(&as_cluster), py::arg("name_or_path"), "A preset (helios, philly, alibaba) or a cluster YAML file")
      .def_static("from_yaml", &as_cluster, py::arg("path"))
      .def_property_readonly("name", [](const Cluster& c) { return file_text(c.spec->name); })
      .def_property_readonly("source", [](const Cluster& c) { return file_text(c.spec->source); })
      .def_property_readonly("total_gpus", [](const Cluster& c) { return c.spec->total_gpus(); })
      .def_property_readonly("total_nodes", [](const Cluster& c) { return c.spec->total_nodes(); })
      .def_property_readonly("pools", [](const Cluster& c) {
        py::list pools;
        for (const auto& p : c.spec->pools) {
          py::dict d;
          d["name"] = p.name;
          d["gpu_type"] = p.gpu_type;
          d["nodes"] = p.nodes;
          d["gpus_per_node"] = p.gpus_per_node;
          pools.append(d);
        }
        return pools;
      })
      .def("__repr__", [](const Cluster& c) {
        return file_text(fmt::format("Cluster('{}': {} pools, {} nodes, {} GPUs)", c.spec->name, c.spec->pools.size(),
                                     c.spec->total_nodes(), c.spec->total_gpus()));
      });

  py::class_<Trace>(m, "Trace", "Jobs sorted by submit time")
      .def("__len__", [](const Trace& t) { return t.trace->jobs.size(); })
      .def_property_readonly("source", [](const Trace& t) { return file_text(t.trace->source); })
      .def_property_readonly("format", [](const Trace& t) { return t.trace->format; })
      .def_property_readonly("skipped", [](const Trace& t) { return t.trace->skipped.skipped; })
      .def("to_dict", &trace_columns, "The jobs as columns (numpy arrays and lists)")
      .def("__repr__", [](const Trace& t) {
        return file_text(fmt::format("Trace('{}', format {}, {} jobs)", t.trace->source, t.trace->format, t.trace->jobs.size()));
      });

  m.def(
      "read_trace",
      [](const py::object& paths, const py::object& format, const py::object& skip_invalid, const py::object& vc_column,
         const py::object& gpu_type_column, const py::object& duration_source, const py::object& seed, const py::object& gpus_per_proc,
         const py::object& pai_task_table) {
        std::vector<std::string> files;
        if (const auto path = path_text(paths)) {
          files.push_back(*path);
        } else {
          if (!py::isinstance<py::sequence>(paths)) throw InputError(fmt::format("path: {} is not a file name", py::repr(paths).cast<std::string>()));
          for (const py::handle& p : paths.cast<py::sequence>()) {
            const auto each = path_text(p);
            if (!each) throw InputError(fmt::format("path: {} is not a file name", py::repr(p).cast<std::string>()));
            files.push_back(*each);
          }
        }
        trace::ReadOptions o;
        take(format, "format", o.format);
        take(skip_invalid, "skip_invalid", o.skip_invalid);
        take(seed, "seed", o.seed);
        // A format's own setting, when given (not None): read as another format, it would do nothing, an error.
        std::vector<trace::GivenSetting> given;
        const auto setting = [&](const py::object& value, const char* name, auto& into) {
          if (value.is_none()) return;
          if constexpr (std::is_same_v<std::remove_reference_t<decltype(into)>, std::string>) {
            const auto file = path_text(value);
            if (!file) throw InputError(fmt::format("{}: {} is not a file name", name, py::repr(value).cast<std::string>()));
            into = *file;
          } else {
            take(value, name, into);
          }
          given.push_back({name, trace::format_of_setting(name)});
        };
        setting(vc_column, "vc_column", o.vc_column);
        setting(gpu_type_column, "gpu_type_column", o.gpu_type_column);
        setting(duration_source, "duration_source", o.duration_source);
        setting(gpus_per_proc, "gpus_per_proc", o.gpus_per_proc);
        setting(pai_task_table, "pai_task_table", o.pai_task_table);
        return read_trace(files, o, given);
      },
      py::arg("path"), py::kw_only(), py::arg("format") = "auto", py::arg("skip_invalid") = false, py::arg("vc_column") = py::none(),
      py::arg("gpu_type_column") = py::none(), py::arg("duration_source") = py::none(), py::arg("seed") = 1,
      py::arg("gpus_per_proc") = py::none(), py::arg("pai_task_table") = py::none(),
      "Reads a trace file (or a list of files) as `rltune simulate --trace` does. A format's own setting "
      "(vc_column and gpu_type_column: rltune, default 17 and 18; duration_source: gavel; gpus_per_proc: swf, "
      "default 1; pai_task_table: pai) is an error for a file read as another format.");
  m.def(
      "generate", [](const py::object& cluster, const py::object& like_arg, const py::object& jobs_arg, const py::object& load_arg,
                     const py::object& seed_arg) {
        std::string like;
        int jobs = 0;
        double load = 0;
        std::uint64_t seed = 0;
        take(like_arg, "like", like);
        take(jobs_arg, "jobs", jobs);
        take(load_arg, "load", load);
        take(seed_arg, "seed", seed);
        return generate(as_cluster(cluster), like, jobs, load, seed);
      },
      py::arg("cluster") = "helios", py::kw_only(), py::arg("like") = "", py::arg("jobs") = 2000, py::arg("load") = 0.9,
      py::arg("seed") = 1, "A generated workload, as `rltune generate` (like: a family or model file; default the cluster's)");

  py::class_<Env>(m, "_Env")
      .def(py::init([](const py::kwargs& kwargs) { return std::make_unique<Env>(env_args(kwargs)); }))
      .def_property_readonly("features", &Env::features)
      .def_property_readonly("actions", &Env::actions)
      .def("action_masks", &mask_array, "Which actions are legal now (info['action_mask'] of the last step)")
      .def(
          "reset",
          [](Env& e, const py::object& seed_arg, const py::object& options) {
            const std::optional<std::uint64_t> seed = optional_seed(seed_arg);
            std::optional<std::size_t> start;
            if (const py::object given = start_option(options); !given.is_none()) take(given, "options['start']", start.emplace());
            return locked(e, [&] { e.reset(seed, start); }, [&] { return py::make_tuple(observation_array(e), step_info(e)); });
          },
          py::kw_only(), py::arg("seed") = py::none(), py::arg("options") = py::none())
      .def(
          "step",
          [](Env& e, const py::handle& given) {
            // An integer (__index__), not a bool: 127.9 is not slot 127, and True is not slot 1.
            const auto index = py::reinterpret_steal<py::object>(PyBool_Check(given.ptr()) ? nullptr : PyNumber_Index(given.ptr()));
            int overflow = 0;
            const long long action = index ? PyLong_AsLongLongAndOverflow(index.ptr(), &overflow) : 0;
            if (!index) {
              PyErr_Clear();
              throw py::type_error(fmt::format("action {}: expected an integer (a slot, or SKIP)", py::repr(given).cast<std::string>()));
            }
            if (overflow != 0 || action < 0 || action >= e.actions())
              throw InputError(fmt::format("action {}: must be in [0, {})", py::str(index).cast<std::string>(), e.actions()));
            return locked(e, [&] { e.step(static_cast<int>(action)); }, [&] {
              return py::make_tuple(observation_array(e), e.reward(), e.done(), false, step_info(e));
            });
          },
          py::arg("action"))
      .def(
          "_play",
          [](Env& e, int episodes, bool random, std::uint64_t seed) {
            const gil::Released release;
            const std::lock_guard lock(e.in_use());
            return e.play(episodes, random, seed);
          },
          py::arg("episodes"), py::arg("random") = true, py::arg("seed") = 1, "Benchmarks: episodes played in C++; returns the steps");

  py::class_<VecEnv>(m, "_VecEnv")
      .def(py::init([](const py::object& n_arg, const py::object& threads_arg, const py::kwargs& kwargs) {
             int n = 0, threads = 0;
             take(n_arg, "n", n);
             take(threads_arg, "threads", threads);
             if (n < 1) throw InputError(fmt::format("n {}: must be at least 1", n));
             if (threads < 1 || threads > 1024) throw InputError(fmt::format("threads {}: must be between 1 and 1024", threads));
             EnvArgs a = env_args(kwargs);
             const std::uint64_t seed = a.seed;
             // The jobs are read or generated once and shared.
             const Cluster cluster = as_cluster(a.cluster);
             a.trace = py::cast(as_trace(cluster, a.trace, a.generated));
             a.generated = py::none();
             a.cluster = py::cast(cluster);
             std::vector<std::unique_ptr<Env>> envs;
             for (int i = 0; i < n; ++i) {
               a.seed = seed + static_cast<std::uint64_t>(i);
               envs.push_back(std::make_unique<Env>(a));
             }
             return std::make_unique<VecEnv>(std::move(envs), std::min(threads, n));  // more threads than environments would idle
           }),
           py::arg("n"), py::arg("threads") = 2)
      .def("__len__", &VecEnv::size)
      .def("action_masks", &VecEnv::masks, "Which actions are legal now, [n, actions] (info['action_mask'] of the last step)")
      .def_property_readonly("features", [](const VecEnv& v) { return v.env(0).features(); })
      .def_property_readonly("actions", [](const VecEnv& v) { return v.env(0).actions(); })
      .def(
          "reset", [](VecEnv& v, const py::object& seed, const py::object& options) { return v.reset(optional_seed(seed), options); },
          py::kw_only(), py::arg("seed") = py::none(), py::arg("options") = py::none())
      .def("step", &VecEnv::step, py::arg("actions"));

  py::class_<Agent>(m, "Agent", "A policy written in Python, for simulate")
      .def(py::init([](py::function fn, std::optional<std::string> name, const std::string& baseline, const std::string& features,
                       const py::object& skip_arg, const py::object& commit_arg) {
             bool skip = false, commit = true;
             take(skip_arg, "skip", skip);  // None or 0 is not False: commit=False changes the schedule
             take(commit_arg, "commit", commit);
             rl::parse_feature_set(features);  // InputError for unknown names, now rather than at the run
             policy::make_priority(baseline, {});
             const std::string shown = name ? *name : py::str(py::getattr(fn, "__name__", py::str("agent"))).cast<std::string>();
             return Agent{std::move(fn), shown, baseline, features, skip, commit};
           }),
           py::arg("fn"), py::kw_only(), py::arg("name") = py::none(), py::arg("baseline") = "fcfs", py::arg("features") = "extended",
           py::arg("skip") = false, py::arg("commit") = true)
      .def_property_readonly("name", [](const Agent& a) { return a.name; })
      .def_property_readonly("baseline", [](const Agent& a) { return a.baseline; })
      .def_property_readonly("features", [](const Agent& a) { return a.features; });

  m.def("simulate", &simulate, py::arg("cluster") = "helios", py::arg("trace") = py::none(), py::kw_only(),
        py::arg("generated") = py::none(), py::arg("policies") = py::make_tuple("fcfs"),
        py::arg("windows") = std::vector<std::string>{}, py::arg("warmup") = 0, py::arg("seed") = 1,
        "Runs each policy over the windows (\"START:LEN\"; default the whole trace) as `rltune simulate`: "
        "{policy: {'jobs': columns of jobs.csv, 'summary': summary.json}}. How jobs start, by keyword as for "
        "Env: semantics, placement, blocking, backfill, runtime, milp_model, milp, multifactor, runtime_options. "
        "Without a trace, as the CLI: 2,000 jobs generated with `seed` (generated={'jobs': ..., 'seed': ...} to change them).");
}
