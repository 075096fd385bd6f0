#pragma once
// Workload models for the generator: a GPU-count mix with an empirical duration distribution per GPU
// count, and a daily arrival cycle. Models are data: the families (philly, helios, alibaba) are YAML files
// under configs/workloads/ compiled into the binary; any trace can be fitted into a model (fit_model).
#include <array>
#include <string>
#include <vector>

#include "trace/job_spec.h"

namespace rltune::workload {

// Duration quantiles are stored at probabilities 0, 1/(kQuantiles-1), ..., 1 (every 5%).
inline constexpr int kQuantiles = 21;

struct SizeClass {
  int gpus = 1;
  double share = 0;                         // probability of this GPU count (shares sum to 1)
  std::vector<double> duration_quantiles;   // seconds, kQuantiles values, non-decreasing
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
