// Canonical CSV: header row required; job_id, submit_time, duration, num_gpus required; optional vc,
// gpu_type (alternatives "A|B"), user, num_cpus, memory_mib, requested_time, status; others ignored.
#include <array>
#include <optional>

#include "core/csv.h"
#include "core/error.h"
#include "trace/reader.h"

namespace rltune::trace {

namespace {

enum Column { kId, kSubmit, kDuration, kGpus, kVc, kGpuType, kUser, kCpus, kMemory, kRequested, kStatus, kColumns };
constexpr std::array<const char*, kColumns> kNames = {"job_id", "submit_time", "duration", "num_gpus", "vc",
                                                      "gpu_type", "user", "num_cpus", "memory_mib",
                                                      "requested_time", "status"};
constexpr int kRequired = 4;

std::vector<std::string> split_alternatives(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t bar = s.find('|', start);
    const auto part = csv::trim(s.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start));
    if (!part.empty()) out.emplace_back(part);
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return out;
}

}  // namespace

bool detect_canonical(const std::string& first_line) {
  std::vector<std::string> fields;
  csv::split(first_line, ',', fields);
  for (const auto& f : fields)
    if (csv::trim(f) == "job_id" || csv::trim(f) == "\xEF\xBB\xBFjob_id") return true;
  return false;
}

void read_canonical(std::istream& in, const ReadOptions&, RowSink& sink) {
  std::string line;
  std::vector<std::string> fields;
  long line_no = 0;
  std::array<int, kColumns> index;
  index.fill(-1);
  bool have_header = false;
  while (std::getline(in, line)) {
    ++line_no;
    const auto trimmed = csv::trim(line);
    if (trimmed.empty() || trimmed == "\r" || trimmed.front() == '#') continue;
    if (!have_header && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 byte-order mark
    csv::split(line, ',', fields);
    if (!have_header) {
      for (std::size_t i = 0; i < fields.size(); ++i)
        for (int c = 0; c < kColumns; ++c)
          if (csv::trim(fields[i]) == kNames[c] && index[c] < 0) index[c] = static_cast<int>(i);
      for (int c = 0; c < kRequired; ++c)
        if (index[c] < 0)
          throw InputError::at(sink.file(), line_no, kNames[c], "",
                               "is missing from the header row (required: job_id,submit_time,duration,num_gpus)");
      have_header = true;
      continue;
    }
    const auto get = [&](int c) -> std::string_view {
      return index[c] >= 0 && index[c] < static_cast<int>(fields.size()) ? csv::trim(fields[index[c]]) : std::string_view();
    };
    bool ok = true;
    // Parses column c as an integer; empty optional columns give `missing`.
    const auto integer = [&](int c, long long missing) -> long long {
      const auto text = get(c);
      if (text.empty()) {
        if (c < kRequired) {
          sink.bad_row(line_no, kNames[c], "", "is empty");
          ok = false;
        }
        return missing;
      }
      const auto v = csv::parse_int_rounding(text);
      if (!v) {
        sink.bad_row(line_no, kNames[c], std::string(text), "is not a number");
        ok = false;
        return missing;
      }
      return *v;
    };
    JobSpec job;
    job.source_line = line_no;
    job.id = std::string(get(kId));
    job.submit = integer(kSubmit, 0);
    if (ok) job.duration = integer(kDuration, 0);
    if (ok) {
      const long long gpus = integer(kGpus, 0);
      if (ok && (gpus > 1'000'000 || gpus < -1'000'000)) {
        sink.bad_row(line_no, "num_gpus", std::string(get(kGpus)), "is out of range");
        ok = false;
      }
      job.gpus = static_cast<int>(gpus);
    }
    if (ok) job.cpus = static_cast<int>(integer(kCpus, -1));
    if (ok) job.memory_mib = integer(kMemory, -1);
    if (ok) job.requested_time = integer(kRequested, -1);
    if (!ok) continue;
    if (job.cpus < -1 || job.memory_mib < -1 || job.requested_time < -1) {
      sink.bad_row(line_no, job.cpus < -1 ? "num_cpus" : job.memory_mib < -1 ? "memory_mib" : "requested_time", "",
                   "must be >= 0 (or empty)");
      continue;
    }
    job.vc = std::string(get(kVc));
    job.gpu_types = split_alternatives(get(kGpuType));
    job.user = std::string(get(kUser));
    job.status = std::string(get(kStatus));
    sink.add(std::move(job));
  }
  if (!have_header) throw InputError::at(sink.file(), 0, "", "", "has no header row");
}

}  // namespace rltune::trace
