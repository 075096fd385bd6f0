// Alibaba 2023 GPU pod lists (`openb_pod_list_*.csv`, header row): name, cpu_milli, memory_mib, num_gpu,
// gpu_milli, gpu_spec, qos, pod_phase, creation_time, deletion_time, scheduled_time (seconds).
// submit = creation_time; duration = deletion_time - scheduled_time; GPU demand = num_gpu x gpu_milli /
// 1000 (kept in gpu_demand), whole GPUs by ceiling; gpu_spec alternatives ("A|B") become GPU-type
// alternatives; CPUs = ceil(cpu_milli / 1000). Pods never scheduled (no scheduled_time, or phase
// Pending) and pods without a GPU are skipped and counted; pods still Running at the trace's end are
// kept and flagged as censored (their duration is a lower bound).
#include <algorithm>
#include <cmath>

#include "core/csv.h"
#include "trace/csv_rows.h"
#include "trace/formats.h"

namespace rltune::trace {

bool detect_openb(const std::string& first_line) {
  return header_has(first_line, {"gpu_milli", "creation_time", "num_gpu"});
}

void read_openb(std::istream& in, const ReadOptions&, RowSink& sink) {
  CsvRows rows(in, sink);
  rows.read_header({"name", "num_gpu", "gpu_milli", "creation_time", "deletion_time", "scheduled_time"},
                   {"cpu_milli", "memory_mib", "gpu_spec", "pod_phase"});
  const int name = rows.column("name"), cpu = rows.column("cpu_milli"), memory = rows.column("memory_mib"),
            num_gpu = rows.column("num_gpu"), gpu_milli = rows.column("gpu_milli"), spec = rows.column("gpu_spec"),
            phase = rows.column("pod_phase"), created = rows.column("creation_time"),
            deleted = rows.column("deletion_time"), scheduled = rows.column("scheduled_time");
  while (rows.next()) {
    const auto c = rows.integer(created);
    const auto n = rows.integer(num_gpu);
    const auto milli = rows.integer(gpu_milli, 0);
    const auto cpu_m = rows.integer(cpu, -1);
    const auto mem = rows.integer(memory, -1);
    if (!rows.ok()) continue;
    const std::string_view pod_phase = rows.text(phase);
    if (rows.text(scheduled).empty() || pod_phase == "Pending") {
      sink.skip(rows.line(), "never scheduled");
      continue;
    }
    const auto s = rows.integer(scheduled), d = rows.integer(deleted);
    if (!rows.ok()) continue;
    if (*n < 0 || *n > 1'000'000) rows.fail(num_gpu, rows.text(num_gpu), "must be between 0 and 1e6");
    if (*milli < 0 || *milli > 1000) rows.fail(gpu_milli, rows.text(gpu_milli), "must be between 0 and 1000");
    if (*d < *s) rows.fail(deleted, rows.text(deleted), "is before scheduled_time");
    if (*s < *c) rows.fail(scheduled, rows.text(scheduled), "is before creation_time");
    if (*cpu_m < -1 || *cpu_m > 1'000'000'000) rows.fail(cpu, rows.text(cpu), "must be between 0 and 1e9");
    if (*mem < -1) rows.fail(memory, rows.text(memory), "must be >= 0");
    if (!rows.ok()) continue;
    const double demand = static_cast<double>(*n) * static_cast<double>(*milli) / 1000.0;
    if (demand <= 0) {
      sink.skip(rows.line(), "no GPU");
      continue;
    }
    JobSpec job;
    job.source_line = rows.line();
    job.id = std::string(rows.text(name));
    job.submit = *c;
    job.duration = *d - *s;
    job.gpu_demand = demand;
    job.gpus = whole_count(demand);
    job.gpu_types = split_alternatives(rows.text(spec));
    job.cpus = *cpu_m < 0 ? -1 : static_cast<int>((*cpu_m + 999) / 1000);
    job.memory_mib = *mem;
    job.status = std::string(pod_phase);
    job.censored = pod_phase == "Running";
    sink.add(std::move(job));
  }
}

}  // namespace rltune::trace
