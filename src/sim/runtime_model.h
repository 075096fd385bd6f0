#pragma once
// Learned runtime prediction (`--runtime predicted:learned`): gradient-boosted regression trees over
// the same causal history that HistoryPredictor keeps, predicting log(duration). The trees are fitted
// with XGBoost (runtime_fit.cpp) on a trace's training split and evaluated here, without XGBoost: a
// walk of ~200 small trees per arriving job, deterministic and thread-safe.
//
// A model file is JSON: {"format": "rltune-runtime-model", "version": 1, "features": [...],
// "columns": [...], "predict_last": k, "fitted_on": {...}, "xgboost": <XGBoost's own JSON model>}.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/runtime_predictor.h"
#include "trace/job_spec.h"

namespace rltune::sim {

// What the model sees of a job when it arrives; NaN where nothing is known (no finished job of that
// user, no requested time ...). The names are the model file's "features", in this order.
// Only means and recent values of the history, no counts: a window's engine starts its history at the
// window's warm-up, the fit at the trace's start, and a count would tell them apart.
inline constexpr std::array<const char*, 13> kRuntimeFeatureNames{
    "gpus",       "cpus",        "requested_s",   "hour_of_day", "history_s",       "history_source", "user_gpus_vc_mean_s",
    "user_gpus_vc_last_s", "user_mean_s", "user_last_s", "user_all_mean_s", "vc_mean_s", "all_mean_s"};
using RuntimeFeatures = std::array<float, kRuntimeFeatureNames.size()>;

// The optional trace columns a model can use; a model fitted with one is refused on a trace without it.
inline constexpr std::array<const char*, 4> kRuntimeModelColumns{"user", "vc", "num_cpus", "requested_time"};
// The columns of kRuntimeModelColumns that some job of `jobs` gives.
std::vector<std::string> runtime_columns(std::span<const trace::JobSpec> jobs);

class RuntimeModel {
 public:
  // Reads a model file's JSON text; InputError naming `source` for anything malformed or from another
  // feature set.
  static RuntimeModel parse(const std::string& text, const std::string& source);
  static RuntimeModel load(const std::string& path);  // InputError when unreadable or malformed
  std::string to_json() const;                        // the file's text (parse(to_json()) predicts the same)

  // log(duration) predicted for `features` (the XGBoost margin: base score plus the trees' leaves).
  float log_seconds(const RuntimeFeatures& features) const;

  // InputError when the model uses a column that `jobs` do not give (`what` names them for people).
  void check_columns(std::span<const trace::JobSpec> jobs, const std::string& what) const;

  int predict_last() const { return predict_last_; }
  const std::vector<std::string>& columns() const { return columns_; }
  std::size_t trees() const { return roots_.size(); }
  const std::string& source() const { return source_; }
  const std::string& xgboost_json() const { return xgboost_json_; }

 private:
  friend RuntimeModel make_runtime_model(const std::string& xgboost_json, std::vector<std::string> columns, int predict_last,
                                         const std::string& fitted_on);
  // Every tree's nodes in one array, each tree's root first. A split node goes to `left` when the
  // value of `feature` is below `threshold` (`missing_left` says where NaN goes), else to `right`; a
  // leaf points to itself, so that a walk of `depth_` steps ends on the leaf, whose value is in
  // `leaf_value`. Walking several trees in step keeps the processor busy while each waits on its loads.
  struct Node {
    float threshold = 0;
    std::int32_t left = 0, right = 0;
    std::int16_t feature = 0;
    bool missing_left = false;
  };
  std::vector<Node> nodes_;
  std::vector<float> leaf_value_;
  std::vector<std::int32_t> roots_;
  int depth_ = 0;  // the deepest leaf's depth
  float base_score_ = 0;
  std::vector<std::string> columns_;
  int predict_last_ = 2;
  std::string xgboost_json_;  // kept to write the file back
  std::string fitted_on_;     // JSON text: what it was fitted on
  std::string source_;        // the file it came from, or "fitted on ..."
};

// A RuntimeModel from XGBoost's JSON model text (what the fit returns); InputError when malformed.
RuntimeModel make_runtime_model(const std::string& xgboost_json, std::vector<std::string> columns, int predict_last,
                                const std::string& fitted_on);

// The history a learned estimate is made from, kept causally like HistoryPredictor's (which it holds).
class RuntimeHistory {
 public:
  explicit RuntimeHistory(int last) : history_(last) {}
  RuntimeFeatures features(const trace::JobSpec& job) const;
  HistoryPredictor::Estimate history_estimate(const trace::JobSpec& job) const { return history_.predict(job); }
  void record(const trace::JobSpec& job, Seconds duration);

 private:
  struct Mean {
    double sum = 0;
    long long count = 0;
  };
  HistoryPredictor history_;
  std::unordered_map<std::string, Mean> by_user_;
};

// predicted:learned: the model's estimate from the history, capped by a requested time like
// HistoryPredictor's; the source is the history estimate's (what the model mostly leans on).
class LearnedPredictor {
 public:
  explicit LearnedPredictor(std::shared_ptr<const RuntimeModel> model);
  HistoryPredictor::Estimate predict(const trace::JobSpec& job) const;
  void record(const trace::JobSpec& job, Seconds duration) { history_.record(job, duration); }

 private:
  std::shared_ptr<const RuntimeModel> model_;
  RuntimeHistory history_;
};

}  // namespace rltune::sim
