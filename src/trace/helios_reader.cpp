// SenseTime Helios `cluster_log.csv` (header row): job_id, user, vc, gpu_num, cpu_num, node_num, state,
// submit_time, start_time, end_time ("YYYY-MM-DD HH:MM:SS"), duration (s), queue (s).
// Submit time becomes seconds since the earliest submit in the file; the duration comes from the
// `duration` column, or end_time - start_time when it is empty; jobs with neither are skipped and counted.
// CPU-only jobs (gpu_num 0) are kept: the simulator rejects them at admission with a reason, so nothing is
// lost silently.
#include <algorithm>
#include <limits>

#include "core/csv.h"
#include "trace/csv_rows.h"
#include "trace/formats.h"

namespace rltune::trace {

bool detect_helios(const std::string& first_line) {
  return header_has(first_line, {"job_id", "gpu_num", "submit_time", "state"});
}

void read_helios(std::istream& in, const ReadOptions&, RowSink& sink) {
  CsvRows rows(in, sink);
  rows.read_header({"job_id", "gpu_num", "submit_time"}, {"user", "vc", "cpu_num", "state", "start_time", "end_time", "duration"});
  const int id = rows.column("job_id"), user = rows.column("user"), vc = rows.column("vc"),
            gpus = rows.column("gpu_num"), cpus = rows.column("cpu_num"), state = rows.column("state"),
            submit = rows.column("submit_time"), start = rows.column("start_time"), end = rows.column("end_time"),
            duration = rows.column("duration");
  std::vector<JobSpec> jobs;
  while (rows.next()) {
    JobSpec job;
    job.source_line = rows.line();
    job.id = std::string(rows.text(id));
    const auto s = rows.datetime(submit);
    const auto g = rows.number(gpus);  // a fraction is rounded up and kept, as in the rltune and SWF formats
    const auto c = rows.integer(cpus, -1);
    auto d = rows.integer(duration, -1);
    if (rows.ok() && *d < 0 && rows.text(duration).empty()) {
      // No duration: from the start and end times; a job that never started or never ended has none.
      const auto b = rows.datetime(start, -1), e = rows.datetime(end, -1);
      if (!rows.ok()) continue;
      if (*b < 0 || *e < 0) {
        sink.skip(rows.line(), *b < 0 ? "never started (no duration, no start_time)" : "no duration and no end_time");
        continue;
      }
      d = *e - *b;
      if (*d < 0) rows.fail(end, rows.text(end), "is before start_time (no duration given)");  // one reason for every such row
    }
    if (!rows.ok()) continue;
    if (*d < 0) rows.fail(duration, rows.text(duration), "must be >= 0");
    if (!(*g >= 0 && *g <= 1'000'000)) rows.fail(gpus, rows.text(gpus), "must be between 0 and 1e6");
    if (*c < -1 || *c > 1'000'000) rows.fail(cpus, rows.text(cpus), "must be between 0 and 1e6");
    if (!rows.ok()) continue;
    job.submit = *s;
    job.duration = *d;
    set_gpus(job, *g);
    job.cpus = static_cast<int>(*c);
    job.vc = std::string(rows.text(vc));
    job.user = std::string(rows.text(user));
    job.status = std::string(rows.text(state));
    jobs.push_back(std::move(job));
  }
  add_from_earliest(jobs, sink);
}

}  // namespace rltune::trace
