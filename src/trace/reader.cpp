#include "trace/reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>

#include "core/csv.h"
#include "core/error.h"
#include "core/memory.h"
#include "trace/formats.h"
#include "trace/gpu_types.h"

namespace rltune::trace {


RowSink::RowSink(const std::string& file, const ReadOptions& options, Trace& trace)
    : file_(file), options_(options), trace_(trace) {}

void RowSink::bad_row(long line, const std::string& field, const std::string& value, const std::string& message) {
  const InputError error = InputError::at(file_, line, field, value, message);
  if (!options_.skip_invalid) throw error;
  trace_.skipped.add(field.empty() ? message : field + ": " + message, error.what());
}

void RowSink::skip(long line, const std::string& reason) {
  trace_.skipped.add(reason, line > 0 ? fmt::format("{}:{}: {}", file_, line, reason) : file_ + ": " + reason);
}

namespace {
// A name with a control character (a newline from a JSON string, say) would break every CSV written
// from the trace, ours included; shown escaped, since the message is one line.
std::optional<std::string> with_control_character(std::string_view text) {
  if (std::none_of(text.begin(), text.end(), csv::is_control)) return std::nullopt;
  std::string shown;
  for (const char c : text) shown += csv::is_control(c) ? fmt::format("\\x{:02x}", static_cast<unsigned char>(c)) : std::string(1, c);
  return shown;
}
}  // namespace

void RowSink::add(JobSpec job) {
  const long line = job.source_line;
  if (job.id.empty()) return bad_row(line, "job_id", "", "is empty");
  for (const auto& [field, text] : {std::pair{"job_id", &job.id}, {"vc", &job.vc}, {"user", &job.user}, {"status", &job.status}})
    if (const auto shown = with_control_character(*text)) return bad_row(line, field, *shown, "has a control character");
  for (const std::string& type : job.gpu_types)
    if (const auto shown = with_control_character(type)) return bad_row(line, "gpu_type", *shown, "has a control character");
  if (job.submit < 0) return bad_row(line, "submit_time", std::to_string(job.submit), "must be >= 0");
  if (job.gpus < 0) return bad_row(line, "num_gpus", std::to_string(job.gpus), "must be >= 0");
  // What the canonical reader accepts, so that every conversion reads back (SWF processors x
  // --gpus-per-proc, or sacct's typed GPUs summed, may pass it).
  if (job.gpus > 1'000'000) return bad_row(line, "num_gpus", std::to_string(job.gpus), "is out of range (at most 1e6 GPUs)");
  if (job.cpus > 1'000'000) return bad_row(line, "num_cpus", std::to_string(job.cpus), "is out of range (at most 1e6 CPUs)");
  for (const auto& [field, value] : {std::pair{"submit_time", job.submit}, std::pair{"duration", job.duration},
                                     std::pair{"requested_time", job.requested_time}})
    if (value > kMaxTime || value < -kMaxTime)
      return bad_row(line, field, std::to_string(value), "is out of range (at most 1e12 seconds)");
  if (job.gpu_demand != -1 && !(job.gpu_demand >= 0 && job.gpu_demand <= 1e6))
    return bad_row(line, "gpu_demand", csv::format_number(job.gpu_demand), "must be between 0 and 1e6 (or empty)");
  std::vector<std::string> types;
  for (const auto& t : job.gpu_types) {
    std::string name = normalize_gpu_type(t);
    if (!name.empty() && std::find(types.begin(), types.end(), name) == types.end()) types.push_back(std::move(name));
  }
  job.gpu_types = std::move(types);
  trace_.jobs.push_back(std::move(job));
}

void RowSink::set_time_origin(Seconds origin) { trace_.time_origin = origin; }

void RowSink::merge_skips(const SkipReport& other, const std::string& prefix) {
  SkipReport prefixed = other;
  for (auto& entry : prefixed.by_reason) entry.first = prefix + entry.first;
  trace_.skipped.merge(prefixed);
}

bool header_has(const std::string& first_line, std::initializer_list<std::string_view> names) {
  std::string_view line = first_line;
  if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
  std::vector<std::string> fields;
  csv::split(line, ',', fields);
  return std::all_of(names.begin(), names.end(), [&](std::string_view name) {
    return std::any_of(fields.begin(), fields.end(), [&](const std::string& f) { return csv::trim(f) == name; });
  });
}

void add_from_earliest(std::vector<JobSpec>& jobs, RowSink& sink) {
  Seconds earliest = std::numeric_limits<Seconds>::max();
  for (const auto& j : jobs) earliest = std::min(earliest, j.submit);
  if (!jobs.empty()) sink.set_time_origin(earliest);
  for (auto& j : jobs) {
    j.submit -= earliest;
    sink.add(std::move(j));
  }
  jobs.clear();
}

void RowSink::finish() {
  // Duplicate ids, found by sorting (hash, position) pairs: far cheaper than a string hash map per row.
  auto& jobs = trace_.jobs;
  std::vector<std::pair<std::size_t, std::size_t>> keys(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) keys[i] = {std::hash<std::string>{}(jobs[i].id), i};
  std::sort(keys.begin(), keys.end());
  std::vector<std::pair<std::size_t, std::size_t>> duplicates;  // (later job, first job with that id)
  for (std::size_t a = 0; a < keys.size();) {
    std::size_t b = a + 1;
    while (b < keys.size() && keys[b].first == keys[a].first) ++b;
    for (std::size_t i = a + 1; i < b; ++i)  // equal hashes: compare the ids themselves
      for (std::size_t k = a; k < i; ++k)
        if (jobs[keys[i].second].id == jobs[keys[k].second].id) {
          duplicates.emplace_back(keys[i].second, keys[k].second);
          break;
        }
    a = b;
  }
  if (duplicates.empty()) return;
  std::sort(duplicates.begin(), duplicates.end());  // report in file order
  std::vector<bool> drop(jobs.size(), false);
  for (const auto& [later, first] : duplicates) {
    drop[later] = true;
    bad_row(jobs[later].source_line, "job_id", jobs[later].id,
            fmt::format("is a duplicate of the job on line {}", jobs[first].source_line));
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (drop[i]) continue;
    if (kept != i) jobs[kept] = std::move(jobs[i]);  // never self-move: that may empty the strings
    ++kept;
  }
  jobs.resize(kept);
}

const std::vector<ReaderInfo>& readers() {
  static const std::vector<ReaderInfo> all = {
      {"canonical", "rltune's canonical CSV with a header row (see the README, Traces)", read_canonical, detect_canonical},
      {"rltune", "the RLTune reference 19/20-column CSV without header (docs/published-rltune.md)", read_rltune, detect_rltune},
      {"helios", "SenseTime Helios cluster_log.csv", read_helios, detect_helios},
      {"sacct", "Slurm accounting: sacct --parsable2 --allocations (see the README for the fields)", read_sacct,
       detect_sacct},
      {"openb", "Alibaba 2023 GPU pod list (openb_pod_list_*.csv)", read_openb, detect_openb},
      {"swf", "Standard Workload Format of the Parallel Workloads Archive (--gpus-per-proc)", read_swf, detect_swf},
      {"gavel", "Gavel's per-VC Philly traces (<vc>.trace; durations from --duration-source)", read_gavel,
       detect_gavel},
      {"philly", "Microsoft Philly cluster_job_log (JSON array of jobs)", read_philly, detect_philly},
      {"pai", "Alibaba PAI 2020 job table (the trace) + task table (--pai-task-table)", read_pai, detect_pai},
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

// The first line that is not blank or a comment, up to 64 KiB of it (enough to tell any format): a
// single-line JSON file of 45 MB is neither read whole nor copied here. NUL bytes in it mean binary
// input, whatever the format.
static std::string first_data_line(std::istream& in, const std::string& name) {
  constexpr std::size_t kMaxDetect = 64 * 1024;
  std::string line;
  const auto start = in.tellg();
  const auto is_data = [](std::string_view t) { return !t.empty() && t != "\r" && t.front() != ';' && t.front() != '#'; };
  while (in) {
    line.clear();
    char c;
    while (in.get(c) && c != '\n') {
      if (line.size() < kMaxDetect) line += c;
      else if (is_data(csv::trim(line))) break;  // a long data line: its start is enough
    }
    if (line.find('\0') != std::string::npos)
      throw InputError(fmt::format("{}: holds NUL bytes: binary data or UTF-16 text, not a UTF-8 trace", name));
    if (is_data(csv::trim(line))) break;
    line.clear();
  }
  in.clear();
  in.seekg(start);
  return line;
}

// Lines that end in CR alone (old Mac text) read as one long line, which each format would misname
// ("no jobs": one comment line; "has 91 columns"): said at once, whatever the format.
static void refuse_cr_only_lines(std::istream& in, const std::string& name) {
  const auto start = in.tellg();
  if (start < 0) return;
  std::string line;
  for (char c; line.size() < 64 * 1024 && in.get(c) && c != '\n';) line += c;
  in.clear();
  in.seekg(start);
  if (const auto cr = line.find('\r'); cr != std::string::npos && cr + 1 < line.size())
    throw InputError(fmt::format("{}: line 1: ends its lines with CR only (old Mac text): convert them to LF", name));
}

Trace read_trace(std::istream& in, const std::string& name, const ReadOptions& options) {
  // The CLI checks these as it parses; callers from elsewhere (Python, configs) are checked here.
  for (const auto& [what, column] : {std::pair{"vc_column", options.vc_column}, std::pair{"gpu_type_column", options.gpu_type_column}})
    if (column < kMinColumn || column > kMaxColumn)
      throw InputError(fmt::format("{} {}: must be between {} (none) and {}", what, column, kMinColumn, kMaxColumn));
  if (!(options.gpus_per_proc >= kMinGpusPerProc && options.gpus_per_proc <= kMaxGpusPerProc))
    throw InputError(fmt::format("gpus_per_proc {}: must be between {} and {}", options.gpus_per_proc, kMinGpusPerProc, kMaxGpusPerProc));
  // A UTF-8 byte-order mark belongs to no field, whatever the format: step over it once, here.
  if (const auto start = in.tellg(); start >= 0) {
    char mark[3] = {};
    if (!(in.read(mark, 3) && std::string_view(mark, 3) == "\xEF\xBB\xBF")) {
      in.clear();
      in.seekg(start);
    }
  }
  refuse_cr_only_lines(in, name);
  Trace trace;
  trace.source = name;
  const ReaderInfo* chosen = nullptr;
  if (options.format == "auto") {
    const std::string first = first_data_line(in, name);
    if (first.empty()) throw InputError(fmt::format("{}: the trace has no jobs", name));
    for (const auto& r : readers())
      if (r.detect(first)) {
        chosen = &r;
        break;
      }
    // A header of lower-case names written in other letter case ("Job_ID"): that format's reader says
    // which column is misnamed, better than "cannot tell".
    std::string lowered = first;
    std::transform(lowered.begin(), lowered.end(), lowered.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const auto& r : readers())
      if (!chosen && r.detect(lowered)) chosen = &r;
    if (!chosen)
      throw InputError(fmt::format("{}: cannot tell the trace format from its first line; pass --format ({})",
                                   name, known_reader_names()));
  } else {
    chosen = &reader(options.format);
  }
  trace.format = chosen->name;
  // Reserving from the input's size saves most of the cost of growing a million-job vector; rows are
  // rarely shorter than 32 bytes. Capped at 256 MB of jobs, so a large file in a verbose format (JSON)
  // does not reserve far more than it holds.
  if (const auto start = in.tellg(); start >= 0 && in.seekg(0, std::ios::end)) {
    const auto bytes = static_cast<std::size_t>(in.tellg() - start);
    in.seekg(start);
    trace.jobs.reserve(std::min<std::size_t>(bytes / 32 + 1, (256u << 20) / sizeof(JobSpec)));
    advise_huge_pages(trace.jobs.data(), trace.jobs.capacity() * sizeof(JobSpec));
  }
  in.clear();
  RowSink sink(name, options, trace);
  chosen->read(in, options, sink);
  sink.finish();
  if (trace.jobs.empty() && trace.skipped.skipped == 0) throw InputError(fmt::format("{}: the trace has no jobs", name));
  sort_by_submit(trace.jobs);
  return trace;
}

Trace read_traces(const std::vector<std::string>& paths, const ReadOptions& options) {
  if (paths.empty()) throw InputError("no trace file given");
  if (paths.size() == 1) return read_trace(paths.front(), options);
  Trace all;
  std::unordered_map<std::string, std::string> file_of_id;  // duplicate detection only, never iterated
  bool calendar = false;  // some file had calendar times: put every file back on that clock
  for (const auto& path : paths) {
    Trace part = read_trace(path, options);
    if (all.format.empty()) all.format = part.format;
    if (part.format != all.format)
      throw InputError(fmt::format("{}: format {} differs from the first file's ({}); pass --format", path,
                                   part.format, all.format));
    calendar = calendar || part.time_origin != 0;
    for (auto& job : part.jobs) {
      const auto [it, inserted] = file_of_id.emplace(job.id, path);
      if (!inserted) {
        const InputError error = InputError::at(path, job.source_line, "job_id", job.id, "is also a job of " + it->second);
        if (!options.skip_invalid) throw error;
        all.skipped.add("job_id: is also a job of another file", error.what());
        continue;
      }
      job.submit += part.time_origin;  // back on the calendar clock (a no-op for relative formats)
      all.jobs.push_back(std::move(job));
    }
    all.skipped.merge(part.skipped);
  }
  // One clock for all files: the earliest submit of any file is 0 again.
  Seconds earliest = std::numeric_limits<Seconds>::max();
  for (const auto& j : all.jobs) earliest = std::min(earliest, j.submit);
  if (calendar && !all.jobs.empty()) {
    for (auto& j : all.jobs) j.submit -= earliest;
    all.time_origin = earliest;
  }
  all.source = paths.size() == 2 ? paths[0] + "," + paths[1]
                                 : fmt::format("{} (+{} more files)", paths[0], paths.size() - 1);
  sort_by_submit(all.jobs);
  return all;
}

std::string format_of_setting(std::string_view setting) {
  for (const auto& [name, format] : kFormatSettings)
    if (name == setting) return std::string(format);
  throw InvariantError(fmt::format("no per-format setting {}", setting));
}

Trace read_traces_as_given(const std::vector<std::string>& paths, ReadOptions options, std::span<const GivenSetting> given) {
  if (!options.pai_task_table.empty() && options.format == "auto") options.format = "pai";
  Trace t = read_traces(paths, options);
  for (const GivenSetting& s : given)
    if (t.format != s.format)
      throw InputError(fmt::format("{} applies only to the {} format; {} was read as {}", s.name, s.format, t.source, t.format));
  if (t.jobs.empty()) {  // why, in the message itself: a caller may not show the skipped rows' warnings
    std::vector<std::string> reasons;
    for (const auto& [reason, count] : t.skipped.by_reason) reasons.push_back(fmt::format("{} x {}", count, reason));
    throw InputError(fmt::format("{}: no valid job left after skipping {} rows{}{}", t.source, t.skipped.skipped,
                                 reasons.empty() ? "" : ": ", fmt::join(reasons, ", ")));
  }
  return t;
}

Trace read_trace(const std::string& path, const ReadOptions& options) {
  if (std::filesystem::is_directory(path)) throw InputError(fmt::format("{}: is a folder, not a trace file", path));
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
  // The wait an rltune or SWF trace recorded (the reference multifactor reads it), only when one did.
  const bool waits = std::ranges::any_of(jobs, [](const JobSpec& j) { return j.recorded_wait != JobSpec::kUnrecorded; });
  out << "job_id,submit_time,duration,num_gpus,vc,gpu_type,user,num_cpus,memory_mib,requested_time,status,"
         "gpu_demand,censored"
      << (waits ? ",recorded_wait\n" : "\n");
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
    out << ',' << (j.gpu_demand < 0 ? std::string() : csv::format_number(j.gpu_demand)) << ','
        << (j.censored ? "1" : "");
    if (waits) out << ',' << (j.recorded_wait == JobSpec::kUnrecorded ? std::string() : std::to_string(j.recorded_wait));
    out << '\n';
  }
}

}  // namespace rltune::trace
