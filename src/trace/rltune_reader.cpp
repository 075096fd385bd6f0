// The RLTune reference CSV (SPEC section 1): no header, ';' comment lines, 19 or 20 comma-separated
// columns, -1 = missing. Unlike the reference it tolerates blank lines and decimals in integer columns (B3),
// and keeps the requested time of column 8 instead of overwriting it with the runtime (B2).
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/error.h"
#include "trace/formats.h"

namespace rltune::trace {

namespace {

// GPU-type codes of the reference README: 0=T4, 1=MISC, 2=P100, 3=V100 (16 GB), 4=V100M32.
constexpr std::array<const char*, 5> kGpuTypeCodes = {"T4", "MISC", "P100", "V100", "V100M32"};
constexpr int kJobId = 0, kSubmit = 1, kWait = 2, kRunTime = 3, kGpus = 4, kCpus = 7, kRequestTime = 8, kMemory = 9,
              kStatus = 10, kUser = 11;
constexpr std::size_t kMinColumns = 19, kMaxColumns = 20;
// The reference replaces a missing runtime (-1) by 10 s.
constexpr Seconds kMissingRuntime = 10;

}  // namespace

bool detect_rltune(const std::string& first_line) {
  std::vector<std::string> fields;
  csv::split(first_line, ',', fields);
  if (fields.size() < kMinColumns || fields.size() > kMaxColumns) return false;
  return csv::parse_double(fields[kSubmit]).has_value() && csv::parse_double(fields[kGpus]).has_value();
}

void read_rltune(std::istream& in, const ReadOptions& options, RowSink& sink) {
  // Setting one of them to the other's default column would read each value as both.
  if (options.vc_column >= 0 && options.vc_column == options.gpu_type_column)
    throw InputError(fmt::format("vc_column and gpu_type_column (--vc-column, --gpu-type-column) are both column {}: a column holds one of them (-1 = none)", options.vc_column));
  csv::LineReader lines(in, sink.file(), options.max_line_bytes);
  std::string_view line;
  std::vector<std::string> fields;
  std::size_t widest = 0;  // the most columns a row had: a coded column beyond every row names no column
  while (lines.next(line)) {
    const long line_no = lines.number();
    const auto trimmed = csv::trim(line);
    if (trimmed.empty() || trimmed == "\r" || trimmed.front() == ';') continue;
    csv::split(line, ',', fields);
    if (fields.size() < kMinColumns || fields.size() > kMaxColumns) {
      sink.bad_row(line_no, "", "", fmt::format("has {} columns, expected 19 or 20", fields.size()));
      continue;
    }
    widest = std::max(widest, fields.size());
    bool ok = true;
    // Column c parsed by `parse` (whole numbers rounded, or any number), -1 when it is no number.
    const auto field = [&](int c, const char* name, auto parse) {
      const auto v = parse(fields[c]);
      if (!v) {
        sink.bad_row(line_no, fmt::format("column {} ({})", c, name), std::string(csv::trim(fields[c])),
                     csv::not_a_number_reason(csv::trim(fields[c])));
        ok = false;
      }
      return v.value_or(-1);
    };
    const auto integer = [&](int c, const char* name) { return field(c, name, csv::parse_int_rounding); };
    // Optional coded column: -1 (or beyond the row) = missing.
    const auto code = [&](int c, const char* name) -> long long {
      if (c < 0 || c >= static_cast<int>(fields.size())) return -1;
      return integer(c, name);
    };
    JobSpec job;
    job.source_line = line_no;
    job.id = std::string(csv::trim(fields[kJobId]));
    job.submit = integer(kSubmit, "submit_time");
    const long long runtime = ok ? integer(kRunTime, "run_time") : 0;
    // GPUs may be fractional (decimals are tolerated): rounded up, the fraction kept, as SWF's are.
    const double gpus = ok ? field(kGpus, "num_gpus", csv::parse_double) : 0;
    const long long cpus = ok ? integer(kCpus, "request_cpus") : 0;
    const long long requested = ok ? integer(kRequestTime, "request_time") : 0;
    const long long memory = ok ? integer(kMemory, "request_memory") : 0;
    const long long vc = ok ? code(options.vc_column, "vc") : 0;
    const long long type = ok ? code(options.gpu_type_column, "gpu_type") : 0;
    if (!ok) continue;
    if ((gpus < 0 && gpus != -1) || gpus > 1'000'000) {
      sink.bad_row(line_no, "column 4 (num_gpus)", csv::format_number(gpus), "is out of range");
      continue;
    }
    if (cpus > 1'000'000) {  // negative: none requested
      sink.bad_row(line_no, "column 7 (request_cpus)", std::to_string(cpus), "is out of range (at most 1e6)");
      continue;
    }
    if (type < -1 || type >= static_cast<long long>(kGpuTypeCodes.size())) {
      sink.bad_row(line_no, fmt::format("column {} (gpu_type)", options.gpu_type_column), std::to_string(type),
                   "is not a GPU-type code (0=T4, 1=MISC, 2=P100, 3=V100, 4=V100M32, -1=none)");
      continue;
    }
    job.duration = runtime == -1 ? kMissingRuntime : runtime;
    set_gpus(job, gpus == -1 ? 0 : gpus);
    job.cpus = cpus < 0 ? -1 : static_cast<int>(cpus);
    job.requested_time = requested < 0 ? -1 : requested;
    // Read only by the published multifactor, and as leniently as the rest: a value that is no number
    // counts as unrecorded (that policy then names the job).
    if (const auto wait = csv::parse_int_rounding(fields[kWait])) job.recorded_wait = *wait;
    job.memory_mib = memory < 0 ? -1 : memory;
    if (vc >= 0) job.vc = std::to_string(vc);
    if (type >= 0) job.gpu_types = {kGpuTypeCodes[type]};
    job.status = std::string(csv::trim(fields[kStatus]));
    const auto user = csv::trim(fields[kUser]);
    if (user != "-1") job.user = std::string(user);
    sink.add(std::move(job));
  }
  for (const auto& [column, option] : {std::pair{options.vc_column, "vc_column"}, {options.gpu_type_column, "gpu_type_column"}})
    if (widest > 0 && column >= static_cast<int>(widest))
      throw InputError(fmt::format("{}: {} {} is beyond every row, whose columns are numbered 0 to {}", sink.file(), option, column, widest - 1));
}

}  // namespace rltune::trace
