#include "trace/reader.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "core/csv.h"
#include "core/error.h"

namespace rltune::trace {

// Defined in canonical_reader.cpp and rltune_reader.cpp.
void read_canonical(std::istream& in, const ReadOptions& options, RowSink& sink);
bool detect_canonical(const std::string& first_line);
void read_rltune(std::istream& in, const ReadOptions& options, RowSink& sink);
bool detect_rltune(const std::string& first_line);

RowSink::RowSink(const std::string& file, const ReadOptions& options, Trace& trace)
    : file_(file), options_(options), trace_(trace) {}

void RowSink::bad_row(long line, const std::string& field, const std::string& value, const std::string& message) {
  const InputError error = InputError::at(file_, line, field, value, message);
  if (!options_.skip_invalid) throw error;
  trace_.skipped.add(field.empty() ? message : field + ": " + message, error.what());
}

void RowSink::add(JobSpec job) {
  const long line = job.source_line;
  if (job.id.empty()) return bad_row(line, "job_id", "", "is empty");
  if (job.submit < 0) return bad_row(line, "submit_time", std::to_string(job.submit), "must be >= 0");
  if (job.gpus < 0) return bad_row(line, "num_gpus", std::to_string(job.gpus), "must be >= 0");
  // About 31,700 years: far beyond any trace, and far from overflowing time arithmetic.
  constexpr Seconds kMaxTime = 1'000'000'000'000;
  for (const auto& [field, value] : {std::pair{"submit_time", job.submit}, std::pair{"duration", job.duration},
                                     std::pair{"requested_time", job.requested_time}})
    if (value > kMaxTime || value < -kMaxTime)
      return bad_row(line, field, std::to_string(value), "is out of range (at most 1e12 seconds)");
  const auto [it, inserted] = line_of_id_.emplace(job.id, line);
  if (!inserted)
    return bad_row(line, "job_id", job.id, fmt::format("is a duplicate of the job on line {}", it->second));
  trace_.jobs.push_back(std::move(job));
}

const std::vector<ReaderInfo>& readers() {
  static const std::vector<ReaderInfo> all = {
      {"canonical", "rltune's canonical CSV with a header row (DESIGN.md section 3)", read_canonical, detect_canonical},
      {"rltune", "the RLTune reference 19/20-column CSV without header (SPEC section 1)", read_rltune, detect_rltune},
  };
  return all;
}

static std::string known_reader_names() {
  std::string names;
  for (const auto& r : readers()) names += (names.empty() ? "" : ", ") + r.name;
  return names;
}

const ReaderInfo& reader(const std::string& name) {
  for (const auto& r : readers())
    if (r.name == name) return r;
  throw InputError(fmt::format("unknown trace format '{}' (known: auto, {})", name, known_reader_names()));
}

static std::string first_data_line(std::istream& in) {
  std::string line;
  const auto start = in.tellg();
  while (std::getline(in, line)) {
    const auto t = csv::trim(line);
    if (!t.empty() && t.front() != ';' && t.front() != '#') break;
    line.clear();
  }
  in.clear();
  in.seekg(start);
  return line;
}

Trace read_trace(std::istream& in, const std::string& name, const ReadOptions& options) {
  Trace trace;
  trace.source = name;
  const ReaderInfo* chosen = nullptr;
  if (options.format == "auto") {
    const std::string first = first_data_line(in);
    if (first.empty()) throw InputError(fmt::format("{}: the trace has no jobs", name));
    for (const auto& r : readers())
      if (r.detect(first)) {
        chosen = &r;
        break;
      }
    if (!chosen)
      throw InputError(fmt::format("{}: cannot tell the trace format from its first line; pass --format ({})",
                                   name, known_reader_names()));
  } else {
    chosen = &reader(options.format);
  }
  trace.format = chosen->name;
  RowSink sink(name, options, trace);
  chosen->read(in, options, sink);
  if (trace.jobs.empty() && trace.skipped.skipped == 0) throw InputError(fmt::format("{}: the trace has no jobs", name));
  sort_by_submit(trace.jobs);
  return trace;
}

Trace read_trace(const std::string& path, const ReadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the trace file", path));
  if (in.tellg() < 0) {  // a pipe: auto-detection must re-read the first line, so buffer it all
    std::stringstream buffered;
    buffered << in.rdbuf();
    return read_trace(buffered, path, options);
  }
  return read_trace(in, path, options);
}

void write_canonical(std::ostream& out, const std::vector<JobSpec>& jobs) {
  out << "job_id,submit_time,duration,num_gpus,vc,gpu_type,user,num_cpus,memory_mib,requested_time,status\n";
  const auto opt = [](long long v) { return v < 0 ? std::string() : std::to_string(v); };
  for (const auto& j : jobs) {
    csv::write_field(out, j.id);
    out << ',' << j.submit << ',' << j.duration << ',' << j.gpus << ',';
    csv::write_field(out, j.vc);
    out << ',';
    csv::write_field(out, join_gpu_types(j.gpu_types));
    out << ',';
    csv::write_field(out, j.user);
    out << ',' << opt(j.cpus) << ',' << opt(j.memory_mib) << ',' << opt(j.requested_time) << ',';
    csv::write_field(out, j.status);
    out << '\n';
  }
}

}  // namespace rltune::trace
