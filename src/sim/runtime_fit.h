#pragma once
// Fitting learned runtime models (predicted:learned) and handing them to engines.
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "sim/engine.h"
#include "sim/runtime_model.h"
#include "trace/job_spec.h"

namespace rltune::sim {

// The model's training rows: each job's features when it is submitted, from the jobs finished by then on
// the trace's own timeline (each job as if it had started on submission: a replay's waits are not known
// before there is a schedule). Causal: row i depends only on jobs that ended by jobs[i].submit.
std::vector<RuntimeFeatures> history_rows(std::span<const trace::JobSpec> jobs, int predict_last);

// Whether this build can fit models (it was built with Debian's libxgboost-dev); any build can run one.
bool can_fit_runtime_models();

// Gradient-boosted trees fitted on `jobs` (log duration from history_rows), single-threaded and
// deterministic; only jobs that ended by `known_by` (submit + duration) are labelled. `fitted_on`
// describes the jobs for the model file. InputError without XGBoost or with fewer than 2 jobs to
// learn from.
RuntimeModel fit_runtime_model(std::span<const trace::JobSpec> jobs, int predict_last, const std::string& fitted_on,
                               Seconds known_by = std::numeric_limits<Seconds>::max());

// XGBoost's own predictions of `model` for `rows` (the model's XGBoost JSON loaded into a booster), to
// check rltune's tree walk against; InputError without XGBoost.
std::vector<float> xgboost_predictions(const RuntimeModel& model, std::span<const RuntimeFeatures> rows);

// `options` with its runtime model when they ask for predicted:learned (else unchanged): the model in
// options.runtime_model_file (read once per process), or one fitted on the training split of `trace`
// (its first `train_split` of the jobs, by index; labelled with those that had ended when the next job
// arrived), fitted once per process for the same jobs. Estimates of the training split's own jobs are
// then in-sample. InputError when the file is bad, was fitted with another predict_last, or uses a
// column that `trace` lacks.
EngineOptions with_runtime_model(EngineOptions options, std::span<const trace::JobSpec> trace, double train_split);

// Under predicted:learned without a model file: the jobs [0, N) of a trace of `jobs` that
// with_runtime_model fits on, whose estimates are in-sample; else 0.
std::size_t in_sample_jobs(const EngineOptions& options, std::size_t jobs, double train_split);
// Warns (once per process for the same words) when measured jobs [first, last) include some of the
// in-sample jobs [0, in_sample); returns whether they do.
bool warn_in_sample(std::size_t in_sample, std::size_t first, std::size_t last);

}  // namespace rltune::sim
