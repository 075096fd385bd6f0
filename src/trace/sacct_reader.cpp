// Slurm accounting: `sacct --parsable2 --allocations --format=JobID,Submit,Start,End,Elapsed,AllocTRES,
// ReqTRES,Partition,User,State,Timelimit` ('|'-separated, header row; extra columns are ignored).
// - GPUs from AllocTRES (what the job got), else ReqTRES: gres/gpu=N, type from gres/gpu:TYPE=N; CPUs
//   from cpu=N, memory from mem=N[KMGT].
// - Duration = Elapsed ([D-]HH:MM:SS), else End - Start. Jobs that never started (Start Unknown/None) and
//   jobs still running (their duration is not known yet) are skipped and counted.
// - Timelimit becomes the requested time (UNLIMITED and Partition_Limit: none); Partition is the VC.
// - Times are read as written (sacct prints local time without a zone); the trace starts at the earliest
//   submit, so only differences matter (a daylight-saving change inside the history shifts by an hour).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <vector>

#include "core/csv.h"
#include "core/datetime.h"
#include "core/error.h"
#include "trace/csv_rows.h"
#include "trace/formats.h"

namespace rltune::trace {

namespace {

// "[D-]HH:MM:SS", "D-HH[:MM]", "MM:SS" or "SS" (optionally with ".fff") -> seconds; nullopt when malformed, or when
// minutes or seconds reach 60 or hours reach 24 after a day count (sacct never prints those).
std::optional<std::int64_t> slurm_duration(std::string_view text) {
  std::int64_t days = 0;
  const auto dash = text.find('-');
  if (dash != std::string_view::npos) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + dash, days);
    if (ec != std::errc() || end != text.data() + dash || days < 0 || days > 1'000'000) return std::nullopt;
    text.remove_prefix(dash + 1);
  }
  const auto dot = std::min(text.find('.'), text.size());
  const auto half_up = rounded_fraction(text.substr(dot));  // "00:00:10.9": 11 s, as times are rounded
  if (!half_up) return std::nullopt;
  text = text.substr(0, dot);
  std::vector<std::int64_t> parts;  // most significant first
  while (!text.empty()) {
    const auto colon = text.find(':');
    const std::string_view part = text.substr(0, colon);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size() || part.empty() || v < 0) return std::nullopt;
    parts.push_back(v);
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  if (parts.empty() || parts.size() > 3) return std::nullopt;
  if (dash != std::string_view::npos) parts.resize(3, 0);  // after a day count: "D-HH" and "D-HH:MM" too
  std::int64_t total = 0;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const bool leading = k == 0;  // the leading part may exceed its unit (e.g. 90:00 minutes), except hours after days
    const bool hours = parts.size() == 3 && k == 0;
    if (!leading && parts[k] >= 60) return std::nullopt;
    if (hours && dash != std::string_view::npos && parts[k] >= 24) return std::nullopt;
    if (parts[k] > 1'000'000'000) return std::nullopt;
    total = total * 60 + parts[k];
  }
  return days * 86400 + total + *half_up;
}

struct Tres {
  int gpus = -1;  // -1 = no gres/gpu entry
  std::string gpu_type;
  int cpus = -1;
  long long memory_mib = -1;
};

// "billing=1,cpu=4,gres/gpu:v100=2,gres/gpu=2,mem=16G,node=1" (GPUs: the total, else the typed ones
// summed). Fractional GPU and CPU counts round up, as in the other readers. `problem` says what is
// wrong when a used value is malformed or out of range.
std::optional<Tres> parse_tres(std::string_view text, std::string& problem) {
  constexpr double kMaxCount = 1e6, kMaxMemoryMib = 1e12;
  Tres t;
  int total = -1, typed = 0;  // gres/gpu=N, and the sum of gres/gpu:TYPE=N
  std::set<std::string> types;
  std::vector<std::string> items;
  csv::split(text, ',', items);
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    const bool gpus = key == "gres/gpu" || key.starts_with("gres/gpu:");
    if (!gpus && key != "cpu" && key != "mem") continue;
    const auto number = csv::parse_double(value.substr(0, value.find_first_of("KMGT")));
    if (!number || *number < 0) {
      problem = fmt::format("{} is not a non-negative number", item);
      return std::nullopt;
    }
    const auto count = [&](double v) -> std::optional<int> {
      if (v > kMaxCount) {
        problem = fmt::format("{} is out of range (0 to {:.0f})", item, kMaxCount);
        return std::nullopt;
      }
      return static_cast<int>(std::ceil(v - 1e-9));
    };
    if (gpus) {
      const std::optional<int> n = count(*number);
      if (!n) return std::nullopt;
      if (key == "gres/gpu") {
        total = *n;
      } else {
        typed += *n;
        types.insert(key.substr(9));
        if (typed > kMaxCount) {  // before many entries could wrap it
          problem = fmt::format("{} GPUs of several types is out of range (0 to {:.0f})", typed, kMaxCount);
          return std::nullopt;
        }
      }
    } else if (key == "cpu") {
      const std::optional<int> n = count(*number);
      if (!n) return std::nullopt;
      t.cpus = *n;
    } else {
      const char unit = value.empty() ? 'M' : value.back();
      const double scale = unit == 'K' ? 1.0 / 1024 : unit == 'G' ? 1024 : unit == 'T' ? 1024.0 * 1024 : 1;
      if (*number * scale > kMaxMemoryMib) {
        problem = fmt::format("{} is out of range (at most {:.0f} MiB)", item, kMaxMemoryMib);
        return std::nullopt;
      }
      t.memory_mib = static_cast<long long>(*number * scale);
    }
  }
  // GPUs of several types ("gres/gpu:a100=1,gres/gpu:v100=1") are not one type's: no type is kept.
  t.gpus = total >= 0 ? total : types.empty() ? -1 : typed;
  if (types.size() == 1) t.gpu_type = *types.begin();
  return t;
}

}  // namespace

bool detect_sacct(const std::string& first_line) {
  return first_line.find('|') != std::string::npos && first_line.find("JobID") != std::string::npos &&
         first_line.find("Submit") != std::string::npos;
}

void read_sacct(std::istream& in, const ReadOptions&, RowSink& sink) {
  CsvRows rows(in, sink, '|');
  rows.read_header({"JobID", "Submit", "Start"}, {"End", "Elapsed", "AllocTRES", "ReqTRES", "Partition", "User", "State", "Timelimit"});
  const int id = rows.column("JobID"), submit = rows.column("Submit"), start = rows.column("Start"),
            end = rows.column("End"), elapsed = rows.column("Elapsed"), alloc = rows.column("AllocTRES"),
            req = rows.column("ReqTRES"), partition = rows.column("Partition"), user = rows.column("User"),
            state = rows.column("State"), limit = rows.column("Timelimit");
  if (alloc < 0 && req < 0) throw InputError(sink.file() + ": needs an AllocTRES or ReqTRES column (the GPUs)");
  std::vector<JobSpec> jobs;
  while (rows.next()) {
    JobSpec job;
    job.source_line = rows.line();
    job.id = std::string(rows.text(id));
    if (job.id.find('.') != std::string::npos) {  // a step (batch, extern, 0...): without --allocations
      sink.skip(rows.line(), "job step, not an allocation (use sacct --allocations)");
      continue;
    }
    const std::string status(rows.text(state).substr(0, rows.text(state).find(' ')));  // "CANCELLED by 0"
    const std::string_view started = rows.text(start);
    if (started.empty() || started == "Unknown" || started == "None") {
      sink.skip(rows.line(), "never started");
      continue;
    }
    if (status == "RUNNING" || status == "PENDING" || status == "REQUEUED" || status == "SUSPENDED") {
      sink.skip(rows.line(), "still running (duration not known yet)");
      continue;
    }
    const auto s = rows.datetime(submit);
    std::optional<std::int64_t> d;
    if (!rows.text(elapsed).empty()) {
      d = slurm_duration(rows.text(elapsed));
      if (!d) rows.fail(elapsed, rows.text(elapsed), "is not [D-]HH:MM:SS");
    } else {
      const auto b = rows.datetime(start), e = rows.datetime(end);
      if (rows.ok()) d = *e - *b;
    }
    const int tres_column = alloc >= 0 && !rows.text(alloc).empty() ? alloc : req;
    std::string problem;
    const std::optional<Tres> tres = parse_tres(rows.text(tres_column), problem);
    if (!tres) rows.fail(tres_column, rows.text(tres_column), problem);
    const std::string_view lim = rows.text(limit);
    std::optional<std::int64_t> requested = -1;
    if (!lim.empty() && lim != "UNLIMITED" && lim != "Partition_Limit" && lim != "INVALID") {
      requested = slurm_duration(lim);
      if (!requested) rows.fail(limit, lim, "is not [D-]HH:MM:SS, UNLIMITED or Partition_Limit");
    }
    if (!rows.ok()) continue;
    if (*d < 0) {  // only End - Start can be (Elapsed is never negative)
      rows.fail(end, rows.text(end), "is before Start");
      continue;
    }
    job.submit = *s;
    job.duration = *d;
    job.gpus = std::max(0, tres->gpus);
    if (!tres->gpu_type.empty()) job.gpu_types = {tres->gpu_type};
    job.cpus = tres->cpus;
    job.memory_mib = tres->memory_mib;
    job.requested_time = *requested;
    job.vc = std::string(rows.text(partition));
    job.user = std::string(rows.text(user));
    job.status = status;
    jobs.push_back(std::move(job));
  }
  add_from_earliest(jobs, sink);
}

}  // namespace rltune::trace
