// The per-VC Philly traces published with Gavel (`<vc>.trace`): header-less, tab-separated, 7 fields:
// job_type, command, steps_arg, needs_data_dir, total_steps, arrival_time_s, num_gpus. Only the arrival
// time and GPU count are real Philly values, so durations are drawn (with --seed) from a CSV of real
// runtimes given by --duration-source: a `duration_s`, `duration` or `runtime` column, and an optional
// `num_gpus` column. With num_gpus, a job's duration is drawn among source jobs of the same GPU count
// (or the nearest count present, the larger on a tie); without it, among all. The VC is the file name
// without extension; job ids are VC-line; each VC draws from its own seeded sequence.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/rng.h"
#include "trace/csv_rows.h"
#include "trace/formats.h"

namespace rltune::trace {

namespace {

constexpr int kArrival = 5, kGpus = 6, kFields = 7;

// Real runtimes by GPU count (0 = any count, when the source has no num_gpus column).
std::map<int, std::vector<Seconds>> load_durations(const std::string& path) {
  if (path.empty())
    throw InputError("the gavel format has arrival times and GPU counts only: pass --duration-source FILE "
                     "(a CSV of real runtimes, e.g. philly_job_distribution.csv or philly_runtime.csv)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the duration source");
  Trace unused;
  ReadOptions strict;
  RowSink sink(path, strict, unused);
  CsvRows rows(in, sink);
  rows.read_header({}, {"duration_s", "duration", "runtime", "num_gpus"});  // read by name: each at most once
  int duration = rows.column("duration_s");
  if (duration < 0) duration = rows.column("duration");
  if (duration < 0) duration = rows.column("runtime");
  if (duration < 0) throw InputError::at(path, 1, "duration_s", "", "(or duration, runtime) is missing from the header");
  const int gpus = rows.column("num_gpus");
  std::map<int, std::vector<Seconds>> by_gpus;
  while (rows.next()) {
    const auto d = rows.number(duration);
    const auto g = gpus >= 0 ? rows.integer(gpus) : std::optional<std::int64_t>(0);
    if (!rows.ok()) continue;
    if (*d < 0 || *d > 1e12) rows.fail(duration, rows.text(duration), "must be between 0 and 1e12 seconds");
    if (*g < 0 || *g > 1'000'000) rows.fail(gpus, rows.text(gpus), "must be between 0 and 1e6");
    if (rows.ok()) by_gpus[static_cast<int>(*g)].push_back(std::llround(*d));
  }
  if (by_gpus.empty()) throw InputError(path + ": the duration source has no rows");
  return by_gpus;
}

const std::vector<Seconds>& durations_for(const std::map<int, std::vector<Seconds>>& by_gpus, int gpus) {
  if (const auto exact = by_gpus.find(gpus); exact != by_gpus.end()) return exact->second;
  auto best = by_gpus.begin();
  for (auto it = by_gpus.begin(); it != by_gpus.end(); ++it)
    if (std::abs(it->first - gpus) <= std::abs(best->first - gpus)) best = it;
  return best->second;
}

}  // namespace

bool detect_gavel(const std::string& first_line) {
  std::vector<std::string> fields;
  csv::split(first_line, '\t', fields);
  return fields.size() == kFields && csv::parse_double(fields[kArrival]) && csv::parse_double(fields[kGpus]);
}

void read_gavel(std::istream& in, const ReadOptions& options, RowSink& sink) {
  const auto by_gpus = load_durations(options.duration_source);
  const std::string vc = std::filesystem::path(sink.file()).stem().string();
  // Each VC file draws its own sequence (seed mixed with the VC name by FNV-1a, stable across platforms):
  // one shared seed would give job k of every VC the same duration.
  Fnv1a mixed(Fnv1a::kOffsetBasis ^ options.seed);
  mixed.add(vc.data(), vc.size());
  Rng rng(mixed.value());
  CsvRows rows(in, sink, '\t');
  rows.set_names({"job_type", "command", "steps_arg", "needs_data_dir", "total_steps", "arrival_time_s", "num_gpus"});
  while (rows.next()) {
    if (rows.size() != kFields) {
      rows.fail_row(fmt::format("has {} tab-separated fields, expected 7", rows.size()));
      continue;
    }
    const auto arrival = rows.integer(kArrival), gpus = rows.integer(kGpus);
    if (!rows.ok()) continue;
    if (*gpus < 0 || *gpus > 1'000'000) rows.fail(kGpus, rows.text(kGpus), "must be between 0 and 1e6");
    if (!rows.ok()) continue;
    JobSpec job;
    job.source_line = rows.line();
    job.id = fmt::format("{}-{}", vc, rows.line());
    job.vc = vc;
    job.submit = *arrival;
    job.gpus = static_cast<int>(*gpus);
    const auto& pool = durations_for(by_gpus, job.gpus);
    job.duration = pool[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(pool.size()) - 1))];
    sink.add(std::move(job));
  }
}

}  // namespace rltune::trace
