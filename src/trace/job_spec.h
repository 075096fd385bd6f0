#pragma once
// A job as read from a trace: immutable, normalised, independent of any cluster.
#include <limits>
#include <string>
#include <vector>

#include "core/types.h"

namespace rltune::trace {

// The most a trace's times may be (submit_time, duration, requested_time), about 31,700 years: far
// beyond any trace, and far from overflowing time arithmetic. Readers reject more; generators never make it.
inline constexpr Seconds kMaxTime = 1'000'000'000'000;

struct JobSpec {
  static constexpr Seconds kUnrecorded = std::numeric_limits<Seconds>::min();

  std::string id;                      // unique within a trace
  Seconds submit = 0;                  // seconds, >= 0
  Seconds duration = 0;                // true runtime; negative values are rejected at admission
  int gpus = 0;                        // GPUs requested; 0 is rejected at admission
  std::string vc;                      // virtual cluster / partition, "" = unspecified
  std::vector<std::string> gpu_types;  // acceptable GPU types ("A|B" in CSV), empty = any
  std::string user;                    // "" = unspecified
  int cpus = -1;                       // -1 = unspecified
  long long memory_mib = -1;           // -1 = unspecified
  Seconds requested_time = -1;         // user's runtime estimate (time limit); -1 = unspecified
  // The wait the source trace recorded (SWF column 3), as written (-1 there means unknown); kUnrecorded
  // when the format has no such column. Only the published RLTune's multifactor reads it (B4).
  Seconds recorded_wait = kUnrecorded;
  std::string status;                  // status in the source trace, "" = unspecified
  double gpu_demand = -1;              // exact GPU demand where the source has fractions (0.46); -1 = gpus
  bool censored = false;               // duration is a lower bound (the job was still running at trace end)
  long source_line = 0;                // line in the source file, for messages
};

// Why a row of a trace was skipped under --skip-invalid (reason -> count, plus the first examples).
struct SkipReport {
  std::size_t skipped = 0;
  std::vector<std::pair<std::string, std::size_t>> by_reason;  // in order of first occurrence
  std::vector<std::string> examples;                           // the first few full messages
  void add(const std::string& reason, const std::string& message);
  void merge(const SkipReport& other);
};

struct Trace {
  std::string source;  // file path or "sample(...)"
  std::string format;  // reader name
  std::vector<JobSpec> jobs;  // stably sorted by submit time
  SkipReport skipped;
  // Formats with calendar times start the trace at its earliest submit: this is that time (seconds since
  // 1970, UTC), so several files can be put back on one clock. 0 = times are as written in the file.
  Seconds time_origin = 0;
};

// Joins GPU-type alternatives as written in CSV ("A|B").
std::string join_gpu_types(const std::vector<std::string>& types);

// A demand in fractions (GPUs, CPUs) as whole units, rounding up: at least 1 when it is positive, and
// within 1e-6 of a whole number (float noise in summed shares) as that number. Every reader that turns
// a fractional demand into a count uses it, and the canonical reader accepts what it gives.
int whole_count(double demand);
// Sets `job.gpus` to whole_count(demand), and keeps a demand that is not a whole number in gpu_demand.
void set_gpus(JobSpec& job, double demand);

// Sorts jobs stably by submit time (trace order among equal submit times is kept).
void sort_by_submit(std::vector<JobSpec>& jobs);

}  // namespace rltune::trace
