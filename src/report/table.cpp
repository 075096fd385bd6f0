#include "report/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

namespace rltune::report {

std::string human_duration(double s) {
  if (s < 60) return fmt::format("{:.0f} s", s);
  if (s < 3600) return fmt::format("{:.1f} min", s / 60);
  if (s < 86400) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} d", s / 86400);
}

namespace {

struct Column {
  std::string title;
  const metrics::MetricDef& metric;  // its better direction marks the best value
  std::function<std::string(double)> format;
  bool of_jobs = true;  // undefined (n/a) for a run in which no job ran
};

bool ran_jobs(const metrics::Summary& s) { return s.jobs_completed > 0; }

}  // namespace

void print_comparison(std::ostream& out, const std::vector<std::pair<std::string, metrics::Summary>>& rows) {
  const auto count = [](double v) { return fmt::format("{:.0f}", v); };
  const auto ratio = [](double v) { return fmt::format("{:.3f}", v); };
  const auto percent = [](double v) { return fmt::format("{:.1f}%", 100 * v); };
  const auto metric = metrics::summary_metric;
  const std::vector<Column> columns = {
      {"jobs run", metric("jobs_completed"), count, false},
      {"rejected", metric("jobs_rejected"), count, false},
      {"avg wait", metric("avg_wait_s"), human_duration},
      {"p95 wait", metric("p95_wait_s"), human_duration},
      {"avg JCT", metric("avg_jct_s"), human_duration},
      {"avg slowdown", metric("avg_bsld"), ratio},
      {"GPU util", metric("gpu_utilization"), percent},
      {"fragmented", metric("avg_fragmentation"), percent},
      {"decision p50", metric("decision_us_p50"), [](double v) { return fmt::format("{:.2f} us", v); }, false},
  };
  std::vector<std::vector<std::string>> cells(rows.size());
  std::vector<std::size_t> width(columns.size() + 1, 6);
  for (const auto& [name, _] : rows) width[0] = std::max(width[0], name.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    width[c + 1] = std::max(width[c + 1], columns[c].title.size());
    const metrics::MetricDef& m = columns[c].metric;
    const auto defined = [&](std::size_t r) { return !columns[c].of_jobs || ran_jobs(rows[r].second); };
    std::optional<double> best;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const double v = m.of(rows[r].second);
      if (defined(r) && (!best || (m.better == metrics::Better::lower ? v < *best : v > *best))) best = v;
    }
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const double v = m.of(rows[r].second);
      std::string text = defined(r) ? columns[c].format(v) : "n/a";
      if (m.better != metrics::Better::neither && rows.size() > 1)
        text += defined(r) && columns[c].format(v) == columns[c].format(*best) ? "*" : " ";
      width[c + 1] = std::max(width[c + 1], text.size());
      cells[r].push_back(std::move(text));
    }
  }
  out << fmt::format("{:<{}}", "policy", width[0]);
  for (std::size_t c = 0; c < columns.size(); ++c) out << fmt::format("  {:>{}}", columns[c].title, width[c + 1]);
  out << '\n';
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out << fmt::format("{:<{}}", rows[r].first, width[0]);
    for (std::size_t c = 0; c < columns.size(); ++c) out << fmt::format("  {:>{}}", cells[r][c], width[c + 1]);
    out << '\n';
  }
  // Improvement over the first row, for a one-glance reading: the sign convention of evaluate and
  // experiment (positive = better).
  const auto improvement = [&](std::size_t r, const char* key) {
    const auto& metric = metrics::summary_metric(key);
    const double base = metric.of(rows[0].second);
    const std::optional<double> pct = metrics::improvement_pct(metric, base, metric.of(rows[r].second));
    if (!pct || !ran_jobs(rows[0].second) || !ran_jobs(rows[r].second)) return std::string("n/a");
    return std::abs(*pct) < 0.5 ? std::string("0%") : fmt::format("{:+.0f}%", *pct);  // not "-0%" for -0.3
  };
  if (rows.size() > 1) out << fmt::format("\nimprovement over {} (positive = better):\n", rows[0].first);
  for (std::size_t r = 1; r < rows.size(); ++r)
    out << fmt::format("  {:<{}}  avg wait {}, avg JCT {}, avg slowdown {}, GPU util {}\n", rows[r].first, width[0],
                       improvement(r, "avg_wait_s"), improvement(r, "avg_jct_s"), improvement(r, "avg_bsld"),
                       improvement(r, "gpu_utilization"));
  out << "\nwait = start - submit; JCT = end - submit; slowdown = max(1, JCT / max(runtime, 10 s));\n"
         "GPU util = GPU-seconds used / GPU-seconds available from first submit to last end;\n"
         "fragmented = time-weighted share of nodes that are partly used; * = best in column.\n";
}

}  // namespace rltune::report
