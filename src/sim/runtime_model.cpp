#include "sim/runtime_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file.h"

namespace rltune::sim {

namespace {

using nlohmann::json;
constexpr const char* kFormat = "rltune-runtime-model";
constexpr float kNone = std::numeric_limits<float>::quiet_NaN();

// The column's value is given by `job` (the trace has the column when some job gives it).
bool gives(const trace::JobSpec& job, std::size_t column) {
  switch (column) {
    case 0: return !job.user.empty();
    case 1: return !job.vc.empty();
    case 2: return job.cpus > 0;
    default: return job.requested_time > 0;
  }
}

}  // namespace

std::vector<std::string> runtime_columns(std::span<const trace::JobSpec> jobs) {
  std::vector<std::string> columns;
  for (std::size_t c = 0; c < kRuntimeModelColumns.size(); ++c)
    if (std::any_of(jobs.begin(), jobs.end(), [c](const trace::JobSpec& j) { return gives(j, c); }))
      columns.emplace_back(kRuntimeModelColumns[c]);
  return columns;
}

namespace {

// A JSON array of whole numbers that fit an int (a cast of 1e300 would be undefined), else InputError.
std::vector<int> whole_numbers(const json& array, const char* what) {
  if (!array.is_array()) throw InputError(fmt::format("runtime model: {} is not a list", what));
  std::vector<int> out;
  out.reserve(array.size());
  for (const json& v : array) {
    if (!v.is_number_integer()) throw InputError(fmt::format("runtime model: {} holds {}, not a whole number", what, v.dump()));
    const auto n = v.get<std::int64_t>();
    if (n < std::numeric_limits<int>::min() || n > std::numeric_limits<int>::max())
      throw InputError(fmt::format("runtime model: {} holds {}, out of range", what, n));
    out.push_back(static_cast<int>(n));
  }
  return out;
}

// XGBoost writes numbers of the model's parameters as text: "8.1E0" (1.x) or "[8.1E0]" (3.x).
// Read whatever the locale, and all of it.
double number_text(const json& value, const char* what) {
  std::string text = value.get<std::string>();
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  double out = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(out))
    throw InputError(fmt::format("runtime model: {} {} is not a number", what, value.dump()));
  return out;
}

}  // namespace

RuntimeModel make_runtime_model(const std::string& xgboost_json, std::vector<std::string> columns, int predict_last,
                                const std::string& fitted_on) {
  RuntimeModel m;
  m.columns_ = std::move(columns);
  m.predict_last_ = predict_last;
  m.xgboost_json_ = xgboost_json;
  m.fitted_on_ = fitted_on;
  const auto bad = [](const std::string& what) { return InputError("runtime model: " + what); };
  try {
    const json x = json::parse(xgboost_json);
    const json& learner = x.at("learner");
    if (learner.at("objective").at("name") != "reg:squarederror")
      throw bad(fmt::format("objective {} (expected reg:squarederror)", learner.at("objective").at("name").dump()));
    const json& param = learner.at("learner_model_param");
    if (number_text(param.at("num_feature"), "num_feature") != static_cast<double>(kRuntimeFeatureNames.size()))
      throw bad(fmt::format("{} features (expected {})", param.at("num_feature").dump(), kRuntimeFeatureNames.size()));
    if (param.contains("num_target") && number_text(param.at("num_target"), "num_target") != 1)
      throw bad(fmt::format("{} targets (expected 1)", param.at("num_target").dump()));
    m.base_score_ = static_cast<float>(number_text(param.at("base_score"), "base_score"));
    const json& booster = learner.at("gradient_booster");
    if (booster.at("name") != "gbtree") throw bad(fmt::format("booster {} (expected gbtree)", booster.at("name").dump()));
    for (const int group : whole_numbers(booster.at("model").at("tree_info"), "tree_info"))
      if (group != 0) throw bad("trees of several outputs (tree_info)");
    for (const json& t : booster.at("model").at("trees")) {
      const std::vector<int> left = whole_numbers(t.at("left_children"), "left_children");
      const std::vector<int> right = whole_numbers(t.at("right_children"), "right_children");
      const std::vector<int> feature = whole_numbers(t.at("split_indices"), "split_indices");
      const std::vector<int> missing_left = whole_numbers(t.at("default_left"), "default_left");
      std::vector<float> threshold;
      t.at("split_conditions").get_to(threshold);
      if (t.contains("split_type"))
        for (const int type : whole_numbers(t.at("split_type"), "split_type"))
          if (type != 0) throw bad("categorical splits (split_type), which rltune does not walk");
      const std::size_t n = left.size();
      if (n == 0 || right.size() != n || feature.size() != n || threshold.size() != n || missing_left.size() != n)
        throw bad("a tree's node arrays differ in length");
      if (m.nodes_.size() + n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) throw bad("too many nodes");
      const auto base = static_cast<std::int32_t>(m.nodes_.size());
      m.roots_.push_back(base);
      std::vector<int> depth(n, 0);  // children come after their parent: one pass finds every depth
      for (std::size_t i = 0; i < n; ++i) {
        RuntimeModel::Node node;
        const bool leaf = left[i] < 0;
        if (leaf) {
          node.left = node.right = base + static_cast<std::int32_t>(i);
        } else {
          const auto inside = [n](int child) { return child > 0 && static_cast<std::size_t>(child) < n; };
          if (!inside(left[i]) || !inside(right[i]) || feature[i] < 0 || static_cast<std::size_t>(feature[i]) >= kRuntimeFeatureNames.size())
            throw bad("a tree node points outside its tree or its features");
          // Children follow their parent, so a walk always ends.
          if (left[i] <= static_cast<int>(i) || right[i] <= static_cast<int>(i)) throw bad("a tree node's child comes before it");
          node.left = base + left[i];
          node.right = base + right[i];
          node.feature = static_cast<std::int16_t>(feature[i]);
          node.threshold = threshold[i];
          node.missing_left = missing_left[i] != 0;
          depth[static_cast<std::size_t>(left[i])] = depth[static_cast<std::size_t>(right[i])] = depth[i] + 1;
          m.depth_ = std::max(m.depth_, depth[i] + 1);
        }
        m.nodes_.push_back(node);
        m.leaf_value_.push_back(leaf ? threshold[i] : 0.0f);
      }
    }
    // Every prediction walks the deepest path in every tree: no real model comes near this.
    if (m.depth_ > 64) throw bad(fmt::format("a tree {} levels deep (at most 64)", m.depth_));
  } catch (const json::exception& e) {
    throw bad(fmt::format("not an XGBoost JSON model ({})", e.what()));
  }
  return m;
}

RuntimeModel RuntimeModel::parse(const std::string& text, const std::string& source) {
  const auto bad = [&](const std::string& what) { return InputError(fmt::format("{}: {}", source, what)); };
  nlohmann::ordered_json j;  // ordered: the file is written back as it was read
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const json::exception& e) {
    throw bad(fmt::format("not JSON ({})", e.what()));
  }
  try {
    if (!j.is_object() || j.value("format", "") != kFormat) throw bad(fmt::format("not an rltune runtime model (\"format\" is not \"{}\")", kFormat));
    if (j.at("version") != 1) throw bad(fmt::format("runtime model version {} (this rltune reads 1)", j.at("version").dump()));
    std::vector<std::string> features;
    j.at("features").get_to(features);
    if (!std::equal(features.begin(), features.end(), kRuntimeFeatureNames.begin(), kRuntimeFeatureNames.end()))
      throw bad(fmt::format("its features ({}) are not this rltune's ({})", fmt::join(features, ", "), fmt::join(kRuntimeFeatureNames, ", ")));
    std::vector<std::string> columns;
    j.at("columns").get_to(columns);
    for (const auto& c : columns)
      if (std::find(kRuntimeModelColumns.begin(), kRuntimeModelColumns.end(), c) == kRuntimeModelColumns.end())
        throw bad(fmt::format("unknown column '{}' in \"columns\"", c));
    const json& k = j.at("predict_last");
    if (!k.is_number_integer() || k.get<std::int64_t>() < 1 || k.get<std::int64_t>() > 1000)
      throw bad(fmt::format("predict_last {} is not a whole number between 1 and 1000", k.dump()));
    const int last = k.get<int>();
    RuntimeModel m;
    try {
      m = make_runtime_model(j.at("xgboost").dump(), std::move(columns), last, j.value("fitted_on", nlohmann::ordered_json::object()).dump());
    } catch (const InputError& e) {
      throw bad(e.what());
    }
    m.source_ = source;
    return m;
  } catch (const json::exception& e) {
    throw bad(fmt::format("malformed runtime model ({})", e.what()));
  }
}

RuntimeModel RuntimeModel::load(const std::string& path) {
  const auto text = read_file(path);
  if (!text) throw InputError(path + ": cannot read the runtime model");
  return parse(*text, path);
}

std::string RuntimeModel::to_json() const {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = 1;
  j["features"] = kRuntimeFeatureNames;
  j["columns"] = columns_;
  j["predict_last"] = predict_last_;
  j["fitted_on"] = nlohmann::ordered_json::parse(fitted_on_.empty() ? "{}" : fitted_on_);
  j["xgboost"] = nlohmann::ordered_json::parse(xgboost_json_);
  return j.dump() + "\n";
}

float RuntimeModel::log_seconds(const RuntimeFeatures& x) const {
  constexpr std::size_t kInStep = 8;  // trees walked together
  float sum = base_score_;            // from the base score, in float and in tree order, as XGBoost 1.7 sums
  for (std::size_t first = 0; first < roots_.size(); first += kInStep) {
    const std::size_t count = std::min(kInStep, roots_.size() - first);
    std::array<std::int32_t, kInStep> at{};
    std::copy_n(roots_.begin() + static_cast<std::ptrdiff_t>(first), count, at.begin());
    for (int step = 0; step < depth_; ++step)
      for (std::size_t k = 0; k < count; ++k) {
        const Node& node = nodes_[static_cast<std::size_t>(at[k])];
        const float value = x[static_cast<std::size_t>(node.feature)];
        // Arithmetic, not branches: which way a tree goes is a coin toss to the branch predictor.
        const int left = static_cast<int>(value < node.threshold) | (static_cast<int>(std::isnan(value)) & static_cast<int>(node.missing_left));
        at[k] = node.right + (node.left - node.right) * left;
      }
    for (std::size_t k = 0; k < count; ++k) sum += leaf_value_[static_cast<std::size_t>(at[k])];
  }
  return sum;
}

void RuntimeModel::check_columns(std::span<const trace::JobSpec> jobs, const std::string& what) const {
  const std::vector<std::string> given = runtime_columns(jobs);
  for (const auto& c : columns_)
    if (std::find(given.begin(), given.end(), c) == given.end())
      throw InputError(fmt::format("{}: the runtime model was fitted on a trace with the column {}, which {} lack{} "
                                   "(fit one on these jobs: leave out --runtime-model)",
                                   source_, c, what, what.ends_with('s') ? "" : "s"));
}

RuntimeFeatures RuntimeHistory::features(const trace::JobSpec& job) const {
  const HistoryPredictor::Known k = history_.known(job);
  const HistoryPredictor::Estimate h = history_.predict(job);
  float user_all_mean = kNone;
  if (const auto it = by_user_.find(job.user); !job.user.empty() && it != by_user_.end())
    user_all_mean = static_cast<float>(it->second.sum / static_cast<double>(it->second.count));
  constexpr Seconds kDay = 86400;
  const Seconds second_of_day = ((job.submit % kDay) + kDay) % kDay;
  return {static_cast<float>(job.gpus),
          job.cpus > 0 ? static_cast<float>(job.cpus) : kNone,
          job.requested_time > 0 ? static_cast<float>(job.requested_time) : kNone,
          static_cast<float>(second_of_day) / 3600.0f,
          static_cast<float>(h.seconds),
          static_cast<float>(static_cast<int>(h.source)),
          k.user_gpus_vc_mean,
          k.user_gpus_vc_last,
          k.user_mean,
          k.user_last,
          user_all_mean,
          k.vc_mean,
          k.all_mean};
}

void RuntimeHistory::record(const trace::JobSpec& job, Seconds duration) {
  history_.record(job, duration);
  if (job.user.empty()) return;
  Mean& m = by_user_[job.user];
  m.sum += static_cast<double>(duration);
  ++m.count;
}

LearnedPredictor::LearnedPredictor(std::shared_ptr<const RuntimeModel> model)
    : model_(std::move(model)), history_(model_ ? model_->predict_last() : 1) {
  if (!model_) throw InvariantError("predicted:learned: no runtime model was prepared (sim::with_runtime_model)");
}

HistoryPredictor::Estimate LearnedPredictor::predict(const trace::JobSpec& job) const {
  const RuntimeFeatures x = history_.features(job);
  const auto source = static_cast<EstimateSource>(static_cast<int>(x[5]));
  const double margin = model_->log_seconds(x);
  if (!std::isfinite(margin)) return history_.history_estimate(job);  // rather than nonsense
  // At most e^20 s (16,000 years), so that llround cannot overflow.
  const double log_s = std::clamp(margin, 0.0, 20.0);
  Seconds seconds = std::max<Seconds>(1, std::llround(std::exp(log_s)));
  if (job.requested_time > 0) seconds = std::min(seconds, job.requested_time);
  return {seconds, source};
}

}  // namespace rltune::sim
