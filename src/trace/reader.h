#pragma once
// Trace readers: one per format behind one interface, a registry by name, and auto-detection.
#include <cstdint>
#include <functional>
#include <istream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/job_spec.h"

namespace rltune::trace {

struct ReadOptions {
  std::string format = "auto";  // a registered reader name, or "auto"
  bool skip_invalid = false;    // skip bad rows (counted by reason) instead of failing on the first
  // rltune format: 0-based columns holding the VC and the GPU-type code; -1 = the trace has none.
  // Defaults follow the reference README (17, 18); the reference Helios loader used 18 for the VC.
  int vc_column = 17;
  int gpu_type_column = 18;
  // gavel format: real runtimes to sample durations from (a CSV with a duration or runtime column, and
  // optionally num_gpus to condition on), and the seed of that sampling.
  std::string duration_source;
  std::uint64_t seed = 1;
  // swf format: GPUs per SWF processor.
  double gpus_per_proc = 1;
  // pai format: the task table (the trace file itself is the job table).
  std::string pai_task_table;
  // Line-based formats: a longer line stops the read (a binary file or a wrong file, not a trace).
  std::size_t max_line_bytes = 1 << 20;
};
// Bounds of the per-format settings, checked by the reader and by the CLI as it parses.
inline constexpr int kMinColumn = -1, kMaxColumn = 19;  // rltune format's vc_column and gpu_type_column
inline constexpr double kMinGpusPerProc = 0.001, kMaxGpusPerProc = 1024;

// Collects rows from one reader: validates each job, applies --skip-invalid, and rejects duplicates.
class RowSink {
 public:
  RowSink(const std::string& file, const ReadOptions& options, Trace& trace);
  // Called for a bad row: throws InputError, or records the skip under --skip-invalid.
  void bad_row(long line, const std::string& field, const std::string& value, const std::string& message);
  // Called for a row the format says to leave out (a pod never scheduled, a job without usable times):
  // always counted under `reason`, never an error.
  void skip(long line, const std::string& reason);
  // Validates a parsed job (id present, times and sizes in range), normalises its GPU-type names, and
  // keeps it (unique ids are checked by finish()).
  void add(JobSpec job);
  const std::string& file() const { return file_; }
  const ReadOptions& options() const { return options_; }
  // After the reader: rejects duplicate job ids (each later occurrence is a bad row).
  void finish();
  // Records the absolute time that submit 0 stands for (see Trace::time_origin).
  void set_time_origin(Seconds origin);
  // Adds the skips of a secondary file (e.g. the PAI task table), reasons prefixed with `prefix`.
  void merge_skips(const SkipReport& other, const std::string& prefix);

 private:
  std::string file_;
  const ReadOptions& options_;
  Trace& trace_;
};

// Reads `in` (named `file` in messages) into `sink`.
using ReaderFn = std::function<void(std::istream& in, const ReadOptions& options, RowSink& sink)>;

struct ReaderInfo {
  std::string name;
  std::string description;
  ReaderFn read;
  // True when the first non-comment line looks like this format (used by --format auto).
  std::function<bool(const std::string& first_line)> detect;
};

const std::vector<ReaderInfo>& readers();
const ReaderInfo& reader(const std::string& name);  // unknown names: InputError listing known ones

// Reads a trace file; errors are InputErrors naming file, line, field and value.
Trace read_trace(const std::string& path, const ReadOptions& options);
// Reads several files of one format into one trace (e.g. the per-VC gavel files); job ids must be unique
// across them.
Trace read_traces(const std::vector<std::string>& paths, const ReadOptions& options);
// The per-format settings (named as ReadOptions' fields and experiment YAML's keys) and the format
// each belongs to: one table for the CLI, experiment configs and Python.
inline constexpr std::pair<std::string_view, std::string_view> kFormatSettings[] = {
    {"vc_column", "rltune"}, {"gpu_type_column", "rltune"}, {"duration_source", "gavel"}, {"gpus_per_proc", "swf"}, {"pai_task_table", "pai"}};
// The format `setting` belongs to (a key of kFormatSettings; InvariantError for another).
std::string format_of_setting(std::string_view setting);

// A per-format setting the user gave, named as the caller spells it ("--vc-column", "vc_column"), and
// the format it belongs to.
struct GivenSetting {
  std::string name;
  std::string format;
};
// read_traces as every front end reads: a PAI task table makes "auto" read PAI; a setting given for
// another format than the one read did nothing, and is an error; so is no job left after skipping rows.
Trace read_traces_as_given(const std::vector<std::string>& paths, ReadOptions options, std::span<const GivenSetting> given);
// Same, from a stream (tests and stdin); `name` is used in messages.
Trace read_trace(std::istream& in, const std::string& name, const ReadOptions& options);

// Writes jobs as canonical CSV (DESIGN.md section 3) with every column.
void write_canonical(std::ostream& out, const std::vector<JobSpec>& jobs);

}  // namespace rltune::trace
