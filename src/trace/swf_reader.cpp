// The Standard Workload Format of the Parallel Workloads Archive: ';' header comments, then one job per
// line with 18 whitespace-separated fields, -1 = missing. Used: 1 job number, 2 submit time, 4 run time,
// 5 allocated processors (8 requested processors when missing), 9 requested time, 11 status, 12 user,
// 15 queue (kept as the VC). Processors become GPUs through --gpus-per-proc (rounded up), so the classic
// HPC traces of RL-scheduling papers run too. Jobs without a run time or processor count are skipped
// and counted.
#include <cmath>

#include "trace/csv_rows.h"
#include "trace/formats.h"

namespace rltune::trace {

namespace {

enum Field { kJob, kSubmit, kWait, kRun, kProcs, kCpuTime, kMemory, kReqProcs, kReqTime, kReqMemory, kStatus,
             kUser, kGroup, kExecutable, kQueue, kPartition, kPreceding, kThink, kFields };

}  // namespace

bool detect_swf(const std::string& first_line) {
  // Data lines are 18 whitespace-separated numbers (the ';' header is skipped before detection).
  std::size_t count = 0, i = 0;
  const std::string& t = first_line;
  while (i < t.size()) {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r')) ++i;
    if (i == t.size()) break;
    ++count;
    while (i < t.size() && t[i] != ' ' && t[i] != '\t' && t[i] != '\r') {
      if (!(std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '-' || t[i] == '.')) return false;
      ++i;
    }
  }
  return count == kFields;
}

void read_swf(std::istream& in, const ReadOptions& options, RowSink& sink) {
  CsvRows rows(in, sink, ' ');
  rows.set_names({"job number", "submit time", "wait time", "run time", "allocated processors", "cpu time",
                  "used memory", "requested processors", "requested time", "requested memory", "status", "user",
                  "group", "executable", "queue", "partition", "preceding job", "think time"});
  while (rows.next(';')) {
    if (rows.size() != kFields) {
      rows.fail_row("has " + std::to_string(rows.size()) + " fields, expected 18");
      continue;
    }
    const auto submit = rows.integer(kSubmit), run = rows.integer(kRun), procs = rows.integer(kProcs),
               requested_procs = rows.integer(kReqProcs), requested_time = rows.integer(kReqTime),
               status = rows.integer(kStatus);
    if (!rows.ok()) continue;
    const long long p = *procs > 0 ? *procs : *requested_procs;
    if (*run < 0) {
      sink.skip(rows.line(), "no run time");
      continue;
    }
    if (p <= 0) {
      sink.skip(rows.line(), "no processor count");
      continue;
    }
    if (p > 1'000'000) {
      rows.fail(*procs > 0 ? kProcs : kReqProcs, std::to_string(p), "is out of range");
      continue;
    }
    JobSpec job;
    job.source_line = rows.line();
    job.id = std::string(rows.text(kJob));
    job.submit = *submit;
    job.duration = *run;
    // A fraction is kept, as the PAI and openb readers keep theirs.
    set_gpus(job, static_cast<double>(p) * options.gpus_per_proc);
    job.requested_time = *requested_time >= 0 ? *requested_time : -1;
    if (const auto wait = csv::parse_int_rounding(rows.text(kWait))) job.recorded_wait = *wait;  // as the rltune reader
    // SWF status codes: 0 failed, 1 completed, 5 cancelled; others are kept as numbers.
    job.status = *status == 0 ? "failed" : *status == 1 ? "completed" : *status == 5 ? "cancelled"
                                                                                      : std::to_string(*status);
    if (rows.text(kUser) != "-1") job.user = std::string(rows.text(kUser));
    if (rows.text(kQueue) != "-1") job.vc = std::string(rows.text(kQueue));
    sink.add(std::move(job));
  }
}

}  // namespace rltune::trace
