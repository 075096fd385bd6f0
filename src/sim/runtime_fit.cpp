#include "sim/runtime_fit.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <set>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/hash.h"
#include "sim/window.h"

#ifdef RLTUNE_WITH_XGBOOST
#include <xgboost/c_api.h>
#endif

namespace rltune::sim {

namespace {

// Whether the job enters the history when it ends (an engine records only jobs that ran).
bool runs(const trace::JobSpec& job) { return job.duration >= 0 && job.gpus > 0; }

#ifdef RLTUNE_WITH_XGBOOST
// The boosting settings: XGBoost's usual tree booster at 100 rounds of step 0.2 (200 of 0.1 predicted
// no better on the -users families, and took twice as long per job), one thread (the result is then
// the same on every machine and run).
constexpr int kRounds = 100;
constexpr const char* kParams[][2] = {
    {"objective", "reg:squarederror"}, {"tree_method", "hist"}, {"max_depth", "6"}, {"eta", "0.2"},
    {"min_child_weight", "5"},         {"nthread", "1"},        {"seed", "0"},      {"verbosity", "0"}};

void check(int status, const char* call) {
  if (status != 0) throw InputError(fmt::format("runtime model: XGBoost's {} failed: {}", call, XGBGetLastError()));
}

DMatrixHandle matrix_of(std::span<const RuntimeFeatures> rows) {
  std::vector<float> matrix;
  matrix.reserve(rows.size() * kRuntimeFeatureNames.size());
  for (const auto& r : rows) matrix.insert(matrix.end(), r.begin(), r.end());
  DMatrixHandle data = nullptr;
  check(XGDMatrixCreateFromMat(matrix.data(), rows.size(), kRuntimeFeatureNames.size(), std::nanf(""), &data), "XGDMatrixCreateFromMat");
  return data;
}

std::string fit_trees(const std::vector<RuntimeFeatures>& rows, const std::vector<float>& labels) {
  DMatrixHandle data = matrix_of(rows);
  const std::unique_ptr<void, int (*)(DMatrixHandle)> data_owner(data, XGDMatrixFree);
  check(XGDMatrixSetFloatInfo(data, "label", labels.data(), labels.size()), "XGDMatrixSetFloatInfo");
  BoosterHandle booster = nullptr;
  check(XGBoosterCreate(&data, 1, &booster), "XGBoosterCreate");
  const std::unique_ptr<void, int (*)(BoosterHandle)> booster_owner(booster, XGBoosterFree);
  for (const auto& [name, value] : kParams) check(XGBoosterSetParam(booster, name, value), "XGBoosterSetParam");
  // Start from the mean log duration rather than XGBoost's 0.5, so the trees fit the spread, not the level.
  double mean = 0;
  for (const float y : labels) mean += y;
  mean /= static_cast<double>(labels.size());
  check(XGBoosterSetParam(booster, "base_score", fmt::format("{:.9g}", mean).c_str()), "XGBoosterSetParam");
  for (int round = 0; round < kRounds; ++round) check(XGBoosterUpdateOneIter(booster, round, data), "XGBoosterUpdateOneIter");
  bst_ulong length = 0;
  const char* text = nullptr;
  check(XGBoosterSaveModelToBuffer(booster, R"({"format": "json"})", &length, &text), "XGBoosterSaveModelToBuffer");
  return std::string(text, length);
}

// The model file's "fitted_on": which jobs, and how.
std::string fit_description(const std::string& jobs, std::size_t rows) {
  nlohmann::ordered_json j;
  j["jobs"] = jobs;
  j["rows"] = rows;
  j["target"] = "log(duration_s)";
  j["rounds"] = kRounds;
  for (const auto& [name, value] : kParams) j["params"][name] = value;
  return j.dump();
}
#endif

// A digest of what a fit depends on in `jobs`, to fit once per process for the same jobs.
std::uint64_t digest(std::span<const trace::JobSpec> jobs) {
  Fnv1a h;
  for (const auto& j : jobs) {
    for (const Seconds s : {j.submit, j.duration, j.requested_time}) h.add(&s, sizeof s);
    for (const int i : {j.gpus, j.cpus}) h.add(&i, sizeof i);
    for (const std::string* s : {&j.user, &j.vc}) h.add(s->data(), s->size() + 1);  // with the terminating 0: "a"+"b" != "ab"+""
  }
  return h.value();
}

}  // namespace

std::vector<RuntimeFeatures> history_rows(std::span<const trace::JobSpec> jobs, int predict_last) {
  RuntimeHistory history(predict_last);
  // Jobs that will have ended, by end time then index (as the engine ends them: completions in order).
  using End = std::pair<Seconds, std::size_t>;
  std::priority_queue<End, std::vector<End>, std::greater<>> ends;
  std::vector<RuntimeFeatures> rows;
  rows.reserve(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const trace::JobSpec& job = jobs[i];
    while (!ends.empty() && ends.top().first <= job.submit) {  // completions before arrivals at the same time
      const trace::JobSpec& done = jobs[ends.top().second];
      history.record(done, done.duration);
      ends.pop();
    }
    rows.push_back(history.features(job));
    if (runs(job)) ends.emplace(job.submit + job.duration, i);
  }
  return rows;
}

std::vector<float> xgboost_predictions(const RuntimeModel& model, std::span<const RuntimeFeatures> rows) {
#ifdef RLTUNE_WITH_XGBOOST
  BoosterHandle booster = nullptr;
  check(XGBoosterCreate(nullptr, 0, &booster), "XGBoosterCreate");
  const std::unique_ptr<void, int (*)(BoosterHandle)> booster_owner(booster, XGBoosterFree);
  const std::string& text = model.xgboost_json();
  check(XGBoosterLoadModelFromBuffer(booster, text.data(), text.size()), "XGBoosterLoadModelFromBuffer");
  DMatrixHandle data = matrix_of(rows);
  const std::unique_ptr<void, int (*)(DMatrixHandle)> data_owner(data, XGDMatrixFree);
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* out = nullptr;
  check(XGBoosterPredictFromDMatrix(booster, data, R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false})",
                                    &shape, &dims, &out),
        "XGBoosterPredictFromDMatrix");
  return {out, out + rows.size()};
#else
  (void)model, (void)rows;
  throw InputError("runtime model: this rltune was built without XGBoost");
#endif
}

bool can_fit_runtime_models() {
#ifdef RLTUNE_WITH_XGBOOST
  return true;
#else
  return false;
#endif
}

RuntimeModel fit_runtime_model(std::span<const trace::JobSpec> jobs, int predict_last, const std::string& fitted_on, Seconds known_by) {
#ifdef RLTUNE_WITH_XGBOOST
  const std::vector<RuntimeFeatures> all = history_rows(jobs, predict_last);
  std::vector<RuntimeFeatures> rows;
  std::vector<float> labels;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (!runs(jobs[i]) || jobs[i].submit + jobs[i].duration > known_by) continue;
    rows.push_back(all[i]);
    labels.push_back(static_cast<float>(std::log(static_cast<double>(std::max<Seconds>(jobs[i].duration, 1)))));
  }
  if (rows.size() < 2) throw InputError(fmt::format("runtime model: {} has {} job(s) to learn from; at least 2 are needed", fitted_on, rows.size()));
  const auto started = std::chrono::steady_clock::now();
  RuntimeModel model = make_runtime_model(fit_trees(rows, labels), runtime_columns(jobs), predict_last,
                                          fit_description(fitted_on, rows.size()));
  spdlog::info("runtime model: {} trees fitted on {} jobs ({}) in {:.1f} s", model.trees(), rows.size(), fitted_on,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return model;
#else
  (void)jobs, (void)predict_last, (void)known_by;
  throw InputError(fmt::format("runtime model: this rltune was built without XGBoost, so it cannot fit one on {} "
                               "(install libxgboost-dev and rebuild, or give a fitted model with --runtime-model)",
                               fitted_on));
#endif
}

EngineOptions with_runtime_model(EngineOptions options, std::span<const trace::JobSpec> trace, double train_split) {
  if (options.runtime != RuntimeKnowledge::learned || options.runtime_model) return options;
  check_bounds(options, engine_settings(), "engine");
  static std::mutex mutex;
  const std::lock_guard lock(mutex);  // fits and loads once per process, whichever thread asks first
  if (!options.runtime_model_file.empty()) {
    static std::map<std::string, std::shared_ptr<const RuntimeModel>> loaded;
    auto& model = loaded[options.runtime_model_file];
    if (!model) model = std::make_shared<RuntimeModel>(RuntimeModel::load(options.runtime_model_file));
    if (model->predict_last() != options.predict_last)
      throw InputError(fmt::format("{}: the runtime model was fitted with predict_last {}; the run asks for {} (give --predict-last {})",
                                   options.runtime_model_file, model->predict_last(), options.predict_last, model->predict_last()));
    model->check_columns(trace, "this trace");
    options.runtime_model = model;
    return options;
  }
  // Labelled are the training jobs that had ended (on the trace's own timeline) when the first job
  // after the split arrived: what was known then. The split's own jobs are in-sample.
  const std::size_t train_end = split_range(trace.size(), train_split, Split::train).second;
  const std::span<const trace::JobSpec> train = trace.first(train_end);
  const Seconds known_by = train_end < trace.size() ? trace[train_end].submit : std::numeric_limits<Seconds>::max();
  static std::map<std::tuple<std::uint64_t, std::size_t, int, Seconds>, std::shared_ptr<const RuntimeModel>> fitted;
  auto& model = fitted[{digest(train), train.size(), options.predict_last, known_by}];
  if (!model)
    model = std::make_shared<RuntimeModel>(fit_runtime_model(
        train, options.predict_last, fmt::format("the training split: jobs 0..{} of {}, those ended by {} s", train_end, trace.size(), known_by),
        known_by));
  options.runtime_model = model;
  return options;
}

std::size_t in_sample_jobs(const EngineOptions& options, std::size_t jobs, double train_split) {
  if (options.runtime != RuntimeKnowledge::learned || !options.runtime_model_file.empty()) return 0;
  return split_range(jobs, train_split, Split::train).second;
}

bool warn_in_sample(std::size_t in_sample, std::size_t first, std::size_t last) {
  if (first >= in_sample || first >= last) return false;
  const std::string message =
      fmt::format("predicted:learned: the runtime model is fitted on jobs 0..{} of this trace, and jobs {}..{} are measured: the "
                  "estimates of {} of them are in-sample, better than a scheduler could make (measure jobs from {} on, or give "
                  "--runtime-model a model fitted on other jobs)",
                  in_sample, first, last, std::min(last, in_sample) - first, in_sample);
  static std::mutex mutex;
  static std::set<std::string> said;
  const std::lock_guard lock(mutex);
  if (said.insert(message).second) spdlog::warn("{}", message);
  return true;
}

}  // namespace rltune::sim
