// Learned runtime prediction (predicted:learned): the training rows are causal, the fit is deterministic,
// rltune's tree walk predicts what XGBoost does, the model file round-trips and refuses what does not
// fit, and in the engine a job's estimate depends only on jobs finished before it arrived.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "helpers.h"
#include "sim/runtime_fit.h"
#include "workload/generator.h"

namespace rltune::sim {
namespace {

using testing::job;

using testing::user_job;

// Generated jobs of users who repeat themselves (configs/workloads/helios-users.yaml) on the helios preset.
testing::GeneratedWorkload users_workload(int jobs, double load, std::uint64_t seed) {
  testing::GeneratedWorkload w("helios", 1, 1.0, seed);
  w.trace = workload::generate(workload::load_model("helios-users"), w.cluster, {.jobs = jobs, .load = load, .seed = seed});
  return w;
}

bool same(const RuntimeFeatures& a, const RuntimeFeatures& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

TEST(RuntimeHistory, FeaturesAreWhatTheHistoryHoldsAndNanWhereNothing) {
  RuntimeHistory h(2);
  const trace::JobSpec j = user_job("j", 3 * 3600 + 1800, 0, 4, "u", "a", 900);
  RuntimeFeatures x = h.features(j);
  EXPECT_EQ(x[0], 4);                                 // gpus
  EXPECT_TRUE(std::isnan(x[1]));                      // no CPU count
  EXPECT_EQ(x[2], 900);                               // requested
  EXPECT_FLOAT_EQ(x[3], 3.5f);                        // hour of day
  EXPECT_EQ(x[4], 900);                               // the history predictor's: the request
  EXPECT_EQ(x[5], static_cast<float>(EstimateSource::requested));
  for (std::size_t i = 6; i < x.size(); ++i) EXPECT_TRUE(std::isnan(x[i])) << kRuntimeFeatureNames[i];
  h.record(user_job("a", 0, 0, 4, "u", "a"), 100);
  h.record(user_job("b", 0, 0, 4, "u", "a"), 300);
  h.record(user_job("c", 0, 0, 4, "u", "a"), 500);
  h.record(user_job("d", 0, 0, 1, "u", "b"), 2000);
  h.record(user_job("e", 0, 0, 1, "v", "a"), 7000);
  x = h.features(j);
  EXPECT_EQ(x[6], 400);   // user+gpus+vc: the last 2 (300, 500)
  EXPECT_EQ(x[7], 500);   // its last
  EXPECT_EQ(x[8], 1250);  // the user's last 2 (500, 2000)
  EXPECT_EQ(x[9], 2000);
  EXPECT_EQ(x[10], 2900 / 4.0f);        // the mean of all the user's finished jobs
  EXPECT_EQ(x[11], 7900 / 4.0f);        // VC a: 100, 300, 500, 7000
  EXPECT_EQ(x[12], 9900 / 5.0f);        // all
  EXPECT_EQ(x[4], 400);                 // history: user+gpus+vc's mean, under the request
}

// Row i is the history at job i's submit time on the trace's own timeline: altering a job that ends
// after that (or any later job) leaves it unchanged.
TEST(RuntimeHistory, TrainingRowsAreCausal) {
  const testing::GeneratedWorkload w = users_workload(600, 1.0, 3);
  const auto& jobs = w.trace.jobs;
  const auto rows = history_rows(jobs, 2);
  ASSERT_EQ(rows.size(), jobs.size());
  const std::size_t i = 400;
  std::vector<trace::JobSpec> altered = jobs;
  int changed = 0;
  for (auto& j : altered)
    if (j.submit + j.duration > jobs[i].submit) j.duration = j.duration * 2 + 11, ++changed;
  ASSERT_GT(changed, 10);
  const auto again = history_rows(altered, 2);
  for (std::size_t k = 0; k <= i; ++k) ASSERT_TRUE(same(rows[k], again[k])) << "row " << k;
  int later = 0;
  for (std::size_t k = i + 1; k < jobs.size(); ++k) later += !same(rows[k], again[k]);
  EXPECT_GT(later, 0);  // the alteration is visible once those jobs have ended
}

// Hand-made: one user whose jobs run 10 min in the morning and 10 h in the afternoon. The history
// predictor averages the two; the fitted trees learn the hour.
TEST(LearnedRuntime, LearnsWhatTheHistoryCannotTell) {
  if (!can_fit_runtime_models()) GTEST_SKIP() << "built without XGBoost";
  std::vector<trace::JobSpec> jobs;
  for (int day = 0; day < 60; ++day)
    for (int hour : {2, 5, 9, 14, 18, 22}) {
      const Seconds submit = day * 86400 + hour * 3600;
      jobs.push_back(user_job(std::to_string(jobs.size()), submit, hour < 12 ? 600 : 36000, 1, "u", "a"));
    }
  const std::size_t train = jobs.size() * 7 / 10;
  const RuntimeModel model = fit_runtime_model(std::span(jobs).first(train), 2, "test");
  const auto rows = history_rows(jobs, 2);
  double learned_error = 0, history_error = 0;
  for (std::size_t k = train; k < jobs.size(); ++k) {
    const double truth = std::log(static_cast<double>(jobs[k].duration));
    learned_error += std::abs(model.log_seconds(rows[k]) - truth);
    history_error += std::abs(std::log(static_cast<double>(rows[k][4])) - truth);
  }
  const double n = static_cast<double>(jobs.size() - train);
  EXPECT_LT(learned_error / n, 0.05);  // within 5% of the true duration, on average, on jobs it never saw
  EXPECT_GT(history_error / n, 1.0);   // the history is off by e^1 or more
}

TEST(LearnedRuntime, FitIsDeterministicAndTheFileRoundTripsAndAgreesWithXgboost) {
  if (!can_fit_runtime_models()) GTEST_SKIP() << "built without XGBoost";
  const testing::GeneratedWorkload w = users_workload(1500, 1.0, 4);
  const auto train = std::span(w.trace.jobs).first(1000);
  const RuntimeModel a = fit_runtime_model(train, 2, "first 1000");
  const RuntimeModel b = fit_runtime_model(train, 2, "first 1000");
  EXPECT_EQ(a.to_json(), b.to_json());
  EXPECT_EQ(a.trees(), 100u);  // one per round
  EXPECT_EQ(a.columns(), runtime_columns(train));
  EXPECT_EQ(a.columns().front(), "user");

  const testing::TempDir dir("runtime-model");
  const std::string path = dir.path + "/runtime-model.json";
  {
    std::ofstream out(path);
    out << a.to_json();
  }
  const RuntimeModel loaded = RuntimeModel::load(path);
  EXPECT_EQ(loaded.to_json(), a.to_json());
  EXPECT_EQ(loaded.source(), path);
  const auto rows = history_rows(w.trace.jobs, 2);
  const std::vector<float> theirs = xgboost_predictions(loaded, rows);
  ASSERT_EQ(theirs.size(), rows.size());
  int differ = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const float ours = loaded.log_seconds(rows[k]);
    EXPECT_EQ(ours, a.log_seconds(rows[k]));
    EXPECT_NEAR(ours, theirs[k], 1e-4f) << "row " << k;
    differ += ours != theirs[0];
  }
  EXPECT_GT(differ, 100);  // the predictions vary: the comparison says something
}

TEST(LearnedRuntime, AModelFileThatDoesNotFitIsAClearError) {
  const testing::TempDir dir("runtime-model-bad");
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = dir.path + "/" + name;
    std::ofstream(path) << text;
    return path;
  };
  const auto message = [](const std::string& path) {
    try {
      RuntimeModel::load(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto has = [](const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; };
  EXPECT_TRUE(has(message(dir.path + "/missing.json"), "cannot read"));
  EXPECT_TRUE(has(message(write("text.json", "hello")), "not JSON"));
  EXPECT_TRUE(has(message(write("other.json", R"({"format": "something"})")), "not an rltune runtime model"));
  const std::string features = R"(["gpus", "cpus"])";
  const std::string head = R"({"format": "rltune-runtime-model", "version": 1, "columns": [], "predict_last": 2, "features": )";
  EXPECT_TRUE(has(message(write("features.json", head + features + R"(, "xgboost": {}})")), "are not this rltune's"));
  nlohmann::json names = kRuntimeFeatureNames;
  EXPECT_TRUE(has(message(write("xgb.json", head + names.dump() + R"(, "xgboost": {"learner": 1}})")), "not an XGBoost JSON model"));

  // XGBoost's own part: a one-leaf tree reads (also with 3.x's bracketed base score); a number that is
  // not a whole one where node indices belong, a categorical split or several outputs are refused.
  const auto xgboost = [&](const std::string& base_score, const std::string& left, const std::string& extra) {
    return head + names.dump() + R"(, "xgboost": {"learner": {"objective": {"name": "reg:squarederror"}, "learner_model_param": {"num_feature": "13", "base_score": ")" +
           base_score + R"("}, "gradient_booster": {"name": "gbtree", "model": {"tree_info": [0], "trees": [{"left_children": )" + left +
           R"(, "right_children": [-1], "split_indices": [0], "split_conditions": [0.25], "default_left": [0])" + extra + "}]}}}}}";
  };
  const RuntimeModel leaf = RuntimeModel::load(write("leaf.json", xgboost("[5E-1]", "[-1]", "")));
  EXPECT_FLOAT_EQ(leaf.log_seconds(RuntimeFeatures{}), 0.75f);
  EXPECT_TRUE(has(message(write("huge.json", xgboost("5E-1", "[1e300]", ""))), "not a whole number")) << message(dir.path + "/huge.json");
  EXPECT_TRUE(has(message(write("score.json", xgboost("5E-1x", "[-1]", ""))), "base_score"));
  EXPECT_TRUE(has(message(write("categorical.json", xgboost("5E-1", "[-1]", R"(, "split_type": [1])"))), "categorical"));
  std::string two = xgboost("5E-1", "[-1]", "");
  two.replace(two.find(R"("tree_info": [0])"), 16, R"("tree_info": [1])");
  EXPECT_TRUE(has(message(write("outputs.json", two)), "several outputs"));

  if (!can_fit_runtime_models()) return;
  // Fitted on jobs with requested times, run on jobs without: refused, naming the column.
  std::vector<trace::JobSpec> with, without;
  for (int k = 0; k < 50; ++k) {
    with.push_back(user_job(std::to_string(k), k * 100, 50 + k, 1, "u", "", 200));
    without.push_back(user_job(std::to_string(k), k * 100, 50 + k, 1, "u"));
  }
  const std::string path = write("fitted.json", fit_runtime_model(with, 2, "with requests").to_json());
  EngineOptions options{.runtime = RuntimeKnowledge::learned, .runtime_model_file = path};
  EXPECT_NO_THROW(with_runtime_model(options, with, 0.7));
  EngineOptions other_k = options;
  other_k.predict_last = 3;  // its features average another number of jobs than the model's did
  try {
    with_runtime_model(other_k, with, 0.7);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "fitted with predict_last 2; the run asks for 3")) << e.what();
  }
  try {
    with_runtime_model(options, without, 0.7);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "requested_time")) << e.what();
    EXPECT_TRUE(has(e.what(), path)) << e.what();
  }
}

// The model fitted for a trace depends only on what had ended when the first job after its training
// split arrived: altering jobs that end later (also training jobs) leaves it the same.
TEST(LearnedRuntime, TheFitUsesOnlyJobsEndedBeforeTheHeldOutJobsArrive) {
  if (!can_fit_runtime_models()) GTEST_SKIP() << "built without XGBoost";
  const testing::GeneratedWorkload w = users_workload(1000, 1.0, 8);
  const EngineOptions learned{.runtime = RuntimeKnowledge::learned};
  const auto model = with_runtime_model(learned, w.trace.jobs, 0.7).runtime_model;
  const Seconds known_by = w.trace.jobs[700].submit;
  std::vector<trace::JobSpec> altered = w.trace.jobs;
  int training_altered = 0;
  for (std::size_t i = 0; i < altered.size(); ++i)
    if (altered[i].submit + altered[i].duration > known_by) {
      altered[i].duration = altered[i].duration * 2 + 5;
      training_altered += i < 700;
    }
  ASSERT_GT(training_altered, 0);
  const auto again = with_runtime_model(learned, altered, 0.7).runtime_model;
  EXPECT_NE(again, model);  // fitted anew: the training jobs differ
  EXPECT_EQ(again->to_json(), model->to_json());
  EXPECT_EQ(in_sample_jobs(learned, 1000, 0.7), 700u);
  EXPECT_EQ(in_sample_jobs({.runtime = RuntimeKnowledge::learned, .runtime_model_file = "m.json"}, 1000, 0.7), 0u);
  EXPECT_TRUE(warn_in_sample(700, 600, 900));
  EXPECT_FALSE(warn_in_sample(700, 700, 900));
}

TEST(LearnedRuntime, AnEngineRefusesLearnedRuntimesWithoutAModel) {
  const auto cluster = testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 1, gpus_per_node: 4}\n");
  const std::vector<trace::JobSpec> jobs{user_job("a", 0, 10, 1, "u")};
  EXPECT_THROW(Engine(cluster, jobs, {.runtime = RuntimeKnowledge::learned}), InvariantError);
  EXPECT_EQ(parse_runtime_knowledge("predicted:learned"), RuntimeKnowledge::learned);
  try {
    parse_runtime_knowledge("predicted:unknown");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("predicted:learned"), std::string::npos) << e.what();
  }
}

// In a replay, a job's learned estimate is made when it arrives, from the jobs finished by then: jobs
// that end later can be altered without changing it. The same model and jobs give the same estimates.
TEST(LearnedRuntime, EstimatesInTheEngineAreCausalAndDeterministic) {
  if (!can_fit_runtime_models()) GTEST_SKIP() << "built without XGBoost";
  const testing::GeneratedWorkload w = users_workload(800, 1.1, 6);
  const EngineOptions options = with_runtime_model({.runtime = RuntimeKnowledge::learned}, w.trace.jobs, 0.7);
  ASSERT_TRUE(options.runtime_model);
  const testing::ArrivalValueCheck c =
      testing::check_arrival_values(w.cluster, w.trace.jobs, options, 500, [](const SimJob& j) { return j.estimate; });
  EXPECT_EQ(c.changed_before, 0);
  EXPECT_GT(c.changed_after, 0);
  EXPECT_TRUE(c.deterministic);
  // Fitted once per process for the same jobs: the same model object.
  EXPECT_EQ(with_runtime_model({.runtime = RuntimeKnowledge::learned}, w.trace.jobs, 0.7).runtime_model, options.runtime_model);
}

}  // namespace
}  // namespace rltune::sim
