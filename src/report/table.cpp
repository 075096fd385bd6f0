#include "report/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

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
  std::function<double(const metrics::Summary&)> value;
  std::function<std::string(double)> format;
  int best;  // -1: lower is better, +1: higher is better, 0: no marker
};

}  // namespace

void print_comparison(std::ostream& out, const std::vector<std::pair<std::string, metrics::Summary>>& rows) {
  const auto count = [](double v) { return fmt::format("{:.0f}", v); };
  const auto ratio = [](double v) { return fmt::format("{:.3f}", v); };
  const auto percent = [](double v) { return fmt::format("{:.1f}%", 100 * v); };
  const std::vector<Column> columns = {
      {"jobs run", [](const auto& s) { return double(s.jobs_completed); }, count, 0},
      {"rejected", [](const auto& s) { return double(s.jobs_rejected); }, count, 0},
      {"avg wait", [](const auto& s) { return s.avg_wait_s; }, human_duration, -1},
      {"p95 wait", [](const auto& s) { return s.p95_wait_s; }, human_duration, -1},
      {"avg JCT", [](const auto& s) { return s.avg_jct_s; }, human_duration, -1},
      {"avg slowdown", [](const auto& s) { return s.avg_bsld; }, ratio, -1},
      {"GPU util", [](const auto& s) { return s.gpu_utilization; }, percent, +1},
      {"fragmented", [](const auto& s) { return s.avg_fragmentation; }, percent, -1},
      {"decision p50", [](const auto& s) { return s.decision_us_p50; }, [](double v) { return fmt::format("{:.2f} us", v); }, 0},
  };
  std::vector<std::vector<std::string>> cells(rows.size());
  std::vector<std::size_t> width(columns.size() + 1, 6);
  for (const auto& [name, _] : rows) width[0] = std::max(width[0], name.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    width[c + 1] = std::max(width[c + 1], columns[c].title.size());
    double best = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const double v = columns[c].value(rows[r].second);
      if (r == 0 || (columns[c].best < 0 ? v < best : v > best)) best = v;
    }
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const double v = columns[c].value(rows[r].second);
      std::string text = columns[c].format(v);
      if (columns[c].best != 0 && rows.size() > 1) text += columns[c].format(v) == columns[c].format(best) ? "*" : " ";
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
  // Relative change against the first row, for a one-glance reading.
  const auto change = [](double v, double base) { return base == 0 ? std::string("n/a") : fmt::format("{:+.0f}%", 100 * (v - base) / base); };
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& s = rows[r].second;
    const auto& b = rows[0].second;
    if (r == 1) out << '\n';
    out << fmt::format("{} vs {}: avg wait {}, avg JCT {}, avg slowdown {}, GPU util {}\n", rows[r].first, rows[0].first,
                       change(s.avg_wait_s, b.avg_wait_s), change(s.avg_jct_s, b.avg_jct_s), change(s.avg_bsld, b.avg_bsld),
                       change(s.gpu_utilization, b.gpu_utilization));
  }
  out << "\nwait = start - submit; JCT = end - submit; slowdown = max(1, JCT / max(runtime, 10 s));\n"
         "GPU util = GPU-seconds used / GPU-seconds available from first submit to last end;\n"
         "fragmented = time-weighted share of nodes that are partly used; * = best in column.\n";
}

}  // namespace rltune::report
