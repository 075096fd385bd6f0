// Alibaba PAI 2020 (Weng et al., NSDI'22): two CSV files without header rows. The trace stream is the job
// table; the task table is the file named by --pai-task-table (ReadOptions::pai_task_table).
//   job table:  job_name, inst_id, user, status (Terminated/Failed/Running/Waiting), start_time, end_time
//   task table: job_name, task_name, inst_num, status, start_time, end_time, plan_cpu (percent of a core),
//               plan_mem (GB), plan_gpu (percent of one GPU, per instance), gpu_type
// Times are seconds with a constant offset. Tasks join their job on job_name. Per job:
// - id = inst_id (job_name when inst_id is empty); user and status carried over; no VC.
// - submit = the job's start_time (its submission) minus the earliest start_time of the jobs kept, so the
//   trace starts at 0.
// - duration = latest task end_time - earliest task start_time: from task launch to end. The gap between
//   the job's start_time and its first task launch is queueing, which the simulator reproduces.
// - gpu_demand = sum over tasks of inst_num x plan_gpu / 100, exact (fractions of a GPU are common);
//   gpus = its ceiling, with a small tolerance so that float noise (2.0000001) stays 2.
// - gpu_types = the distinct non-empty gpu_type of the tasks that ask for GPUs (a CPU-only task, such as
//   a parameter server, does not constrain where the job's GPUs are).
// - cpus = ceil(sum inst_num x plan_cpu / 100); memory_mib = round(sum inst_num x plan_mem x 1024); both
//   -1 (unspecified) when no task of the job states them.
// Empty fields occur in the real data: an empty plan_gpu is no GPU, an empty plan_cpu or plan_mem is
// unknown, an empty task start_time or end_time is a task not started or not ended.
// Left out and counted by reason (RowSink::skip): "no start_time" (job), "no tasks in the task table",
// "no GPU", "a task has no start_time or end_time (running or waiting)", and under --skip-invalid "a task
// row of the job is invalid" (its demand would be understated). Tasks of jobs absent from the job table
// are ignored: they are not jobs of this trace.
// Bad rows (errors naming the job table or the task table, the line and the field; counted skips under
// --skip-invalid): a wrong column count, non-numeric or negative numbers, a task ending before it
// starts, sizes beyond 1e6 GPUs or CPUs or 1e12 MiB. Under --skip-invalid a bad task row is counted as
// "task table: <reason>" and the job it belongs to as above.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <unordered_map>

#include "core/csv.h"
#include "core/error.h"
#include "trace/csv_rows.h"
#include "trace/formats.h"

namespace rltune::trace {

namespace {

enum JobColumn { kJobName, kInstId, kUser, kJobStatus, kJobStart, kJobEnd, kJobColumns };
enum TaskColumn { kTaskJob, kTaskName, kInstNum, kTaskStatus, kTaskStart, kTaskEnd, kPlanCpu, kPlanMem, kPlanGpu,
                  kGpuType, kTaskColumns };

constexpr double kMaxCount = 1e6;             // GPUs, CPUs or instances of one job or task
constexpr double kMaxMemoryMib = 1e12;        // about an exabyte

// Everything the jobs need from their tasks, summed while the task table is read.
struct TaskTotals {
  double gpus = 0, cpus = 0, memory_gb = 0;
  bool has_cpus = false, has_memory = false;
  Seconds first_start = std::numeric_limits<Seconds>::max();
  Seconds last_end = std::numeric_limits<Seconds>::min();
  bool unfinished = false;  // a task without start or end time
  bool invalid = false;     // a task row was bad (skipped under --skip-invalid)
  std::vector<std::string> gpu_types;
};

// Reads the task table into per-job totals. Bad rows go through their own RowSink, so that messages name
// the task table; under --skip-invalid they are counted in `task_skips`.
std::unordered_map<std::string, TaskTotals> read_tasks(const std::string& path, const ReadOptions& options,
                                                       Trace& task_skips) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the PAI task table", path));
  RowSink task_sink(path, options, task_skips);
  CsvRows rows(in, task_sink);
  rows.set_names({"job_name", "task_name", "inst_num", "status", "start_time", "end_time", "plan_cpu", "plan_mem",
                  "plan_gpu", "gpu_type"});
  std::unordered_map<std::string, TaskTotals> by_job;  // lookups only, never iterated
  bool any_row = false;
  while (rows.next()) {
    any_row = true;
    TaskTotals& totals = by_job[std::string(rows.text(kTaskJob))];
    if (rows.size() != kTaskColumns) {
      rows.fail_row(fmt::format("has {} columns, expected {} (job_name,task_name,inst_num,status,start_time,"
                                "end_time,plan_cpu,plan_mem,plan_gpu,gpu_type)", rows.size(), int{kTaskColumns}));
      totals.invalid = true;
      continue;
    }
    const bool has_start = !rows.text(kTaskStart).empty(), has_end = !rows.text(kTaskEnd).empty();
    const bool has_cpus = !rows.text(kPlanCpu).empty(), has_memory = !rows.text(kPlanMem).empty();
    const auto inst = rows.number(kInstNum);
    const auto start = rows.integer(kTaskStart, 0), end = rows.integer(kTaskEnd, 0);
    const auto cpu = rows.number(kPlanCpu, 0.0), memory = rows.number(kPlanMem, 0.0), gpu = rows.number(kPlanGpu, 0.0);
    if (rows.ok()) {
      // `value` per instance x inst_num x `scale` must stay within `max` (named `limit` in messages).
      const auto check = [&](int column, double value, double scale, double max, const char* limit) {
        if (value < 0) rows.fail(column, rows.text(column), "must be >= 0");
        else if (*inst * value * scale > max)
          rows.fail(column, rows.text(column), fmt::format("x inst_num asks for more than {}", limit));
      };
      if (*inst < 0 || *inst > kMaxCount) rows.fail(kInstNum, rows.text(kInstNum), "must be between 0 and 1e6");
      check(kPlanGpu, *gpu, 1.0 / 100, kMaxCount, "1e6 GPUs");
      check(kPlanCpu, *cpu, 1.0 / 100, kMaxCount, "1e6 CPUs");
      check(kPlanMem, *memory, 1024, kMaxMemoryMib, "1e12 MiB");
      if (has_start && has_end && *end < *start) rows.fail(kTaskEnd, rows.text(kTaskEnd), "is before start_time");
    }
    if (!rows.ok()) {
      totals.invalid = true;
      continue;
    }
    totals.gpus += *inst * *gpu / 100;
    totals.cpus += *inst * *cpu / 100;
    totals.memory_gb += *inst * *memory;
    totals.has_cpus |= has_cpus;
    totals.has_memory |= has_memory;
    if (has_start) totals.first_start = std::min(totals.first_start, *start);
    if (has_end) totals.last_end = std::max(totals.last_end, *end);
    totals.unfinished |= !has_start || !has_end;
    const std::string type(rows.text(kGpuType));
    auto& types = totals.gpu_types;
    if (*gpu > 0 && !type.empty() && std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
  }
  if (!any_row) throw InputError(fmt::format("{}: the PAI task table is empty", path));
  return by_job;
}

}  // namespace

bool detect_pai(const std::string& first_line) {
  std::vector<std::string> fields;
  csv::split(first_line, ',', fields);
  if (fields.size() != kJobColumns) return false;
  const auto status = csv::trim(fields[kJobStatus]);
  return status == "Terminated" || status == "Failed" || status == "Running" || status == "Waiting";
}

void read_pai(std::istream& in, const ReadOptions& options, RowSink& sink) {
  if (options.pai_task_table.empty())
    throw InputError(fmt::format("{}: the pai format reads a job table and a task table: pass the task table with "
                                 "--pai-task-table",
                                 sink.file()));
  Trace task_skips;
  auto tasks = read_tasks(options.pai_task_table, options, task_skips);
  sink.merge_skips(task_skips.skipped, "task table: ");

  CsvRows rows(in, sink);
  rows.set_names({"job_name", "inst_id", "user", "status", "start_time", "end_time"});
  std::vector<JobSpec> jobs;  // submit times with the trace's offset until the earliest is known
  while (rows.next()) {
    if (rows.size() != kJobColumns) {
      rows.fail_row(fmt::format("has {} columns, expected {} (job_name,inst_id,user,status,start_time,end_time)",
                                rows.size(), int{kJobColumns}));
      continue;
    }
    const std::string name(rows.text(kJobName));
    if (name.empty()) rows.fail(kJobName, "", "is empty");
    const bool has_start = !rows.text(kJobStart).empty();
    const auto start = rows.integer(kJobStart, 0);
    rows.integer(kJobEnd, 0);  // checked only: the job's end comes from its tasks
    if (!rows.ok()) continue;
    const long line = rows.line();
    if (!has_start) {
      sink.skip(line, "no start_time");
      continue;
    }
    const auto found = tasks.find(name);
    if (found == tasks.end()) {
      sink.skip(line, "no tasks in the task table");
      continue;
    }
    const TaskTotals& t = found->second;
    if (t.invalid) {
      sink.skip(line, "a task row of the job is invalid");
      continue;
    }
    if (t.gpus <= 0) {
      sink.skip(line, "no GPU");
      continue;
    }
    if (t.unfinished) {
      sink.skip(line, "a task has no start_time or end_time (running or waiting)");
      continue;
    }
    // Each task is bounded, but their sums may not be: checked before converting to integers.
    const double memory_mib = t.memory_gb * 1024;
    if (t.gpus > kMaxCount) {
      sink.bad_row(line, "gpu_demand", csv::format_number(t.gpus), "(summed over the job's tasks) is beyond 1e6 GPUs");
      continue;
    }
    if (t.cpus > kMaxCount) {
      sink.bad_row(line, "num_cpus", csv::format_number(t.cpus), "(summed over the job's tasks) is beyond 1e6 CPUs");
      continue;
    }
    if (memory_mib > kMaxMemoryMib) {
      sink.bad_row(line, "memory_mib", csv::format_number(memory_mib),
                   "(summed over the job's tasks) is beyond 1e12 MiB");
      continue;
    }
    JobSpec job;
    job.source_line = line;
    job.id = rows.text(kInstId).empty() ? name : std::string(rows.text(kInstId));
    job.user = std::string(rows.text(kUser));
    job.status = std::string(rows.text(kJobStatus));
    job.submit = *start;
    job.duration = t.last_end - t.first_start;
    job.gpu_demand = t.gpus;
    job.gpus = whole_count(t.gpus);
    job.gpu_types = t.gpu_types;
    job.cpus = t.has_cpus ? whole_count(t.cpus) : -1;
    job.memory_mib = t.has_memory ? std::llround(memory_mib) : -1;
    jobs.push_back(std::move(job));
  }
  tasks = {};  // about 200 bytes per job of the real table: freed before the jobs move into the trace
  add_from_earliest(jobs, sink);
}

}  // namespace rltune::trace
