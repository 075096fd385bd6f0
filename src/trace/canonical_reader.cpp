// Canonical CSV: header row required; job_id, submit_time, duration, num_gpus required; optional vc,
// gpu_type (alternatives "A|B"), user, num_cpus, memory_mib, requested_time, status, gpu_demand,
// censored; other columns are ignored.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/csv.h"
#include "trace/csv_rows.h"
#include "trace/formats.h"

namespace rltune::trace {

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

bool detect_canonical(const std::string& first_line) { return header_has(first_line, {"job_id", "num_gpus"}); }

void read_canonical(std::istream& in, const ReadOptions&, RowSink& sink) {
  CsvRows rows(in, sink);
  rows.read_header({"job_id", "submit_time", "duration", "num_gpus"},
                   {"vc", "gpu_type", "user", "num_cpus", "memory_mib", "requested_time", "status", "gpu_demand", "censored",
                    "recorded_wait"});
  const int id = rows.column("job_id"), submit = rows.column("submit_time"), duration = rows.column("duration"),
            gpus = rows.column("num_gpus"), vc = rows.column("vc"), gpu_type = rows.column("gpu_type"),
            user = rows.column("user"), cpus = rows.column("num_cpus"), memory = rows.column("memory_mib"),
            requested = rows.column("requested_time"), status = rows.column("status"),
            demand = rows.column("gpu_demand"), censored = rows.column("censored"), wait = rows.column("recorded_wait");
  while (rows.next()) {
    JobSpec job;
    job.source_line = rows.line();
    job.id = std::string(rows.text(id));
    const auto s = rows.integer(submit), g = rows.integer(gpus);
    auto d = rows.integer(duration);
    const auto c = rows.integer(cpus, -1), m = rows.integer(memory, -1), r = rows.integer(requested, -1);
    const auto f = rows.number(demand, -1.0);
    const auto cens = rows.integer(censored, 0);
    const auto recorded_wait = rows.integer(wait, JobSpec::kUnrecorded);  // as an rltune or SWF trace gave it
    if (!rows.ok()) continue;
    if (*g > 1'000'000 || *g < -1'000'000) rows.fail(gpus, rows.text(gpus), "is out of range");
    // Rounding 0.4 to no GPU or 2.5 to 3 would change the job: a fraction is gpu_demand's to say.
    if (const auto exact = csv::parse_double(rows.text(gpus)); exact && *exact != static_cast<double>(*g))
      rows.fail(gpus, rows.text(gpus), "must be a whole number of GPUs (a fraction of a GPU goes in gpu_demand)");
    // Checked on the text: rounding would show -0.5 as -1, turn a duration of -0.4 into a valid 0, and
    // a count of -1.4 into -1, which means unknown.
    const auto value = [&](int column) { return csv::parse_double(rows.text(column)); };
    const auto negative = [&](int column) { const auto v = value(column); return v && *v < 0; };
    const auto unknown_or_at_least_0 = [&](int column) { const auto v = value(column); return !v || *v >= 0 || *v == -1; };
    if (negative(submit)) rows.fail(submit, rows.text(submit), "must be >= 0");
    if (negative(duration) && *d == 0) d = -1;  // still negative, so rejected at admission as DESIGN.md says
    // num_gpus is what the job holds: its demand rounded up, by whole_count as the other readers round it
    // (or by a plain ceiling).
    if (*f >= 0 && !(*g >= whole_count(*f) && *g <= std::max<double>(whole_count(*f), std::ceil(*f))))
      rows.fail(demand, rows.text(demand), fmt::format("does not round up to num_gpus {}, which must be the demand rounded up", *g));
    if (*c > 1'000'000 || !unknown_or_at_least_0(cpus)) rows.fail(cpus, rows.text(cpus), "must be between 0 and 1e6 (-1 or empty: unknown)");
    if (const auto v = value(cpus); v && *v != static_cast<double>(*c)) rows.fail(cpus, rows.text(cpus), "must be a whole number of CPUs");
    if (!unknown_or_at_least_0(memory)) rows.fail(memory, rows.text(memory), "must be >= 0 (-1 or empty: unknown)");
    if (!unknown_or_at_least_0(requested)) rows.fail(requested, rows.text(requested), "must be >= 0 (-1 or empty: unknown)");
    if (*cens != 0 && *cens != 1) rows.fail(censored, rows.text(censored), "must be 0 or 1 (or empty)");
    if (!rows.ok()) continue;
    job.submit = *s;
    job.duration = *d;
    job.gpus = static_cast<int>(*g);
    job.cpus = static_cast<int>(*c);
    job.memory_mib = *m;
    job.requested_time = *r;
    job.gpu_demand = *f;
    job.censored = *cens == 1;
    job.recorded_wait = *recorded_wait;
    job.vc = std::string(rows.text(vc));
    job.gpu_types = split_alternatives(rows.text(gpu_type));
    job.user = std::string(rows.text(user));
    job.status = std::string(rows.text(status));
    sink.add(std::move(job));
  }
}

}  // namespace rltune::trace
