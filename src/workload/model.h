#pragma once
// Workload models for the generator: a GPU-count mix with an empirical duration distribution per GPU
// count, and a daily arrival cycle. Models are data: the families (philly, helios, alibaba) are YAML files
// under configs/workloads/ compiled into the binary; any trace can be fitted into a model (fit_model).
#include <array>
#include <string>
#include <vector>

#include "trace/job_spec.h"

namespace rltune::workload {

// Duration quantiles are stored at these probabilities: every 5%, then a finer tail, because the last
// few percent of jobs carry most of the GPU time and interpolating up to the maximum from p95 would
// grossly overstate it.
inline constexpr int kQuantiles = 25;
inline constexpr double kQuantileProbabilities[kQuantiles] = {
    0.00, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60,
    0.65, 0.70, 0.75, 0.80, 0.85, 0.90, 0.95, 0.975, 0.99, 0.995, 0.999, 1.00};

struct SizeClass {
  int gpus = 1;
  double share = 0;                         // probability of this GPU count (shares sum to 1)
  std::vector<double> duration_quantiles;   // seconds at kQuantileProbabilities, non-decreasing
};

// Users that repeat themselves, so that a user's history predicts their next job. Each user belongs to
// one target (a VC or GPU-type pool, or the cluster) and owns `templates` job templates: a GPU count
// drawn from the model's shares and a normal score z. A user's job follows one of their templates with
// probability `repeat`, else it is drawn afresh. A template's jobs have durations at quantile
// Phi(rho z + sqrt(1 - rho^2) e) of the size's distribution, e a fresh normal per job (a Gaussian
// copula): over traces, a job's duration follows the model exactly, and jobs of one template are
// correlated by rho = `duration_correlation`. Within one trace the mix leans towards the templates of
// the most active users. Users are picked with Zipf weights 1/rank^skew.
struct UserBehaviour {
  int templates = 0;                 // per user; 0 = off
  double repeat = 0.8;               // share of a user's jobs that follow a template
  double activity_skew = 1.0;        // Zipf exponent of user activity; 0 = every user equally active
  double duration_correlation = 0.9; // rho: 1 = a template's jobs all last the same, 0 = independent
  bool on() const { return templates > 0; }
};

struct WorkloadModel {
  std::string name;
  std::string source;                       // where the numbers come from
  std::array<double, 24> hourly_weights{};  // relative arrival rate per hour of day; mean 1
  std::vector<SizeClass> sizes;             // ascending GPU counts
  // User runtime estimates: duration x U(1, max_overestimate), rounded up to estimate_round_s.
  double max_overestimate = 3;
  long long estimate_round_s = 600;
  int users = 40;                           // users named u1..uN
  UserBehaviour user_behaviour;             // off (templates 0): every job's user is drawn uniformly
};

// Parses and validates a model (errors name the file, line and key).
WorkloadModel parse_model(const std::string& yaml, const std::string& file);
// A family name (philly, helios, alibaba) or a model YAML file.
WorkloadModel load_model(const std::string& name_or_path);
std::vector<std::string> family_names();
// The family for a cluster: the one named like the cluster's preset (helios, philly, alibaba), else philly.
std::string default_family(const std::string& cluster_source);
// YAML that parse_model reads back to the same model (numbers written with full precision).
std::string to_yaml(const WorkloadModel& model, const std::string& header_comment);

// Fits a model to a trace: GPU-count shares, duration quantiles per GPU count (counts with fewer than
// kMinJobsPerSize jobs use the quantiles of all jobs), hourly weights from submit time of day.
inline constexpr std::size_t kMinJobsPerSize = 30;
WorkloadModel fit_model(const trace::Trace& trace, const std::string& name);

// The duration at probability u in [0, 1): log-linear interpolation between the stored quantiles.
double duration_at(const SizeClass& size, double u);
// Mean duration of a size class (numerical integral of duration_at).
double mean_duration(const SizeClass& size);

}  // namespace rltune::workload
