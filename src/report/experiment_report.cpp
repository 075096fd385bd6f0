#include "report/experiment_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "core/csv.h"
#include "core/error.h"
#include "core/process.h"
#include "metrics/metrics.h"
#include "report/table.h"

namespace rltune::report {

namespace fs = std::filesystem;

CsvTable CsvTable::parse(const std::string& text, const std::string& source) {
  CsvTable t;
  t.source = source;
  // A byte-order mark (an editor's, a spreadsheet's) belongs to no column name.
  std::istringstream in(text.starts_with("\xEF\xBB\xBF") ? text.substr(3) : text);
  std::string line, record;
  std::vector<std::string> fields;
  long number = 0, record_line = 0;  // the line the record being read starts on
  while (std::getline(in, line)) {
    ++number;
    if (record.empty() && (csv::trim(line).empty() || line == "\r")) continue;  // a blank line (one at the end, say) holds no record
    if (record.empty()) record_line = number;
    record += line;
    // A quoted field may hold a newline: keep reading until the quotes balance.
    if (std::count(record.begin(), record.end(), '"') % 2 == 1) {
      record += '\n';
      continue;
    }
    csv::split(record, ',', fields);
    record.clear();
    if (t.header.empty()) {
      t.header = fields;
      continue;
    }
    if (fields.size() != t.header.size())
      throw InputError::at(source, number, "", "", fmt::format("has {} fields, the header {}", fields.size(), t.header.size()));
    t.rows.push_back(fields);
    t.row_lines.push_back(record_line);
  }
  // A quote left open to the end would drop the last record silently (a file cut short).
  if (!record.empty()) throw InputError::at(source, record_line, "", "", "ends inside a quoted field opened here (is the file cut short?)");
  if (t.header.empty()) throw InputError(source + ": empty (no header row)");
  return t;
}

CsvTable CsvTable::read(const std::string& path) {
  const auto text = read_file(path);
  if (!text) throw InputError(path + ": cannot open (is this a finished experiment folder?)");
  return parse(*text, path);
}

std::string CsvTable::to_csv() const {
  std::ostringstream out;
  csv::write_record(out, header);
  for (const auto& row : rows) csv::write_record(out, row);
  return out.str();
}

std::size_t CsvTable::column(const std::string& name) const {
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) throw InputError(fmt::format("{}: no column '{}'", source, name));
  return static_cast<std::size_t>(it - header.begin());
}

namespace {

// A table in a report, rendered as Markdown or HTML.
struct Table {
  std::string caption;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
struct Section {
  std::string heading;
  std::vector<Table> tables;
  std::vector<std::string> figures;  // base names under figures/
};

// A name made safe for a file name (policy labels hold '/', ':' and '@').
std::string file_name(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  return s;
}

// Names made safe and unique as file names: "a/b" after "a:b" (both "a_b") becomes "a_b-2".
std::vector<std::string> unique_file_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::set<std::string> used;
  for (const std::string& name : names) {
    std::string file = file_name(name);
    for (int k = 2; !used.insert(file).second; ++k) file = file_name(name) + fmt::format("-{}", k);
    out.push_back(std::move(file));
  }
  return out;
}

struct WorkloadInfo {
  std::string cluster, trace;
  std::string windows;  // "50 windows of 256 jobs (split test)"
  double gpus = 0;      // of the cluster; 0 = unknown
  std::vector<std::string> policies;
  std::string file;  // unique among the workloads, safe in file names
  const std::string& slug() const { return file; }
};

std::vector<WorkloadInfo> workloads(const Json& config) {
  std::vector<WorkloadInfo> out;
  for (const auto& w : config.at("workloads")) {
    const Json& ws = w.at("windows");
    WorkloadInfo info{w.at("cluster_name").get<std::string>(), w.at("trace").at("name").get<std::string>(),
                      ws.at("length").is_string()  // "all": the whole split
                          ? fmt::format("the whole {} split as one window", ws.at("split").get<std::string>())
                          : fmt::format("{} windows of {} jobs (split {})", ws.at("count").get<long>(),
                                        ws.at("length").get<long>(), ws.at("split").get<std::string>()),
                      0, {}, {}};
    info.gpus = w.value("cluster_gpus", 0.0);
    for (const auto& p : w.at("policies")) info.policies.push_back(p.at("name").get<std::string>());
    out.push_back(std::move(info));
  }
  std::vector<std::string> names;
  for (const auto& info : out) names.push_back(info.cluster + "-" + info.trace);
  const std::vector<std::string> files = unique_file_names(names);
  for (std::size_t i = 0; i < out.size(); ++i) out[i].file = files[i];
  return out;
}

std::vector<std::string> baselines(const Json& config) { return config.at("baselines").get<std::vector<std::string>>(); }

// summary.csv by (cluster, trace, policy, metric).
struct SummaryIndex {
  const CsvTable& table;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::size_t> index;
  explicit SummaryIndex(const CsvTable& t) : table(t) {
    const std::size_t c = t.column("cluster"), tr = t.column("trace"), p = t.column("policy"), m = t.column("metric");
    for (std::size_t i = 0; i < t.rows.size(); ++i) index[{t.rows[i][c], t.rows[i][tr], t.rows[i][p], t.rows[i][m]}] = i;
  }
  bool has(const WorkloadInfo& w, const std::string& policy, const std::string& metric) const {
    return index.count({w.cluster, w.trace, policy, metric}) > 0;
  }
  // The cell, or "" when the row or column is absent.
  std::string get(const WorkloadInfo& w, const std::string& policy, const std::string& metric, const std::string& column) const {
    const auto it = index.find({w.cluster, w.trace, policy, metric});
    const auto col = std::find(table.header.begin(), table.header.end(), column);
    if (it == index.end() || col == table.header.end()) return "";
    return table.rows[it->second][static_cast<std::size_t>(col - table.header.begin())];
  }
  std::optional<double> number(const WorkloadInfo& w, const std::string& policy, const std::string& metric,
                               const std::string& column) const {
    return csv::parse_double(get(w, policy, metric, column));
  }
};

// The summary.csv metrics the report's tables and figures read.
constexpr const char* kReportedMetrics[] = {"avg_wait_s", "p95_wait_s",      "avg_jct_s",        "avg_bsld",
                                            "p95_bsld",   "gpu_utilization", "avg_fragmentation"};

std::vector<Section> summary_sections(const Json& config, const CsvTable& csv) {
  const SummaryIndex s(csv);
  std::vector<Section> sections;
  const auto fixed = [](std::optional<double> v, const char* format) -> std::string {
    return v ? fmt::format(fmt::runtime(format), *v) : "n/a";
  };
  const auto duration = [](std::optional<double> v) { return v ? human_duration(*v) : std::string("n/a"); };
  for (const WorkloadInfo& w : workloads(config)) {
    Section section{fmt::format("{} / {}: {}", w.cluster, w.trace, w.windows), {}, {}};
    Table means{"Means over windows (lower is better, except GPU utilisation)",
                {"policy", "windows", "avg wait", "p95 wait", "avg JCT", "avg bsld", "p95 bsld", "GPU util", "fragmentation"},
                {}};
    for (const auto& p : w.policies) {
      const auto percent = [&](const char* metric) {
        const auto v = s.number(w, p, metric, "mean");
        return v ? fmt::format("{:.1f}%", 100 * *v) : std::string("n/a");
      };
      means.rows.push_back({p, s.get(w, p, "avg_wait_s", "windows"), duration(s.number(w, p, "avg_wait_s", "mean")),
                            duration(s.number(w, p, "p95_wait_s", "mean")), duration(s.number(w, p, "avg_jct_s", "mean")),
                            fixed(s.number(w, p, "avg_bsld", "mean"), "{:.2f}"), fixed(s.number(w, p, "p95_bsld", "mean"), "{:.2f}"),
                            percent("gpu_utilization"), percent("avg_fragmentation")});
    }
    section.tables.push_back(std::move(means));
    for (const auto& b : baselines(config)) {
      Table vs{fmt::format("Improvement over {} in % [95% CI] (positive = better)", b),
               {"policy", "avg wait", "avg JCT", "avg bsld", "GPU util", "pairs"},
               {}};
      for (const auto& p : w.policies) {
        if (p == b) continue;
        std::vector<std::string> row{p};
        for (const char* metric : {"avg_wait_s", "avg_jct_s", "avg_bsld", "gpu_utilization"}) {
          const auto pct = s.number(w, p, metric, "vs_" + b + "_pct");
          const auto lo = s.number(w, p, metric, "vs_" + b + "_ci_low"), hi = s.number(w, p, metric, "vs_" + b + "_ci_high");
          row.push_back(pct && lo && hi ? fmt::format("{:+.1f} [{:+.1f}, {:+.1f}]", *pct, *lo, *hi) : "n/a");
        }
        row.push_back(s.get(w, p, "avg_wait_s", "vs_" + b + "_pairs"));
        vs.rows.push_back(std::move(row));
      }
      section.tables.push_back(std::move(vs));
    }
    sections.push_back(std::move(section));
  }
  return sections;
}

std::string intro_markdown(const Json& config) {
  std::string out = "# " + config.value("name", std::string("experiment")) + "\n\n";
  const std::string description = config.value("description", std::string());
  if (!description.empty()) out += description + "\n\n";
  out += fmt::format("Every policy runs on the same windows of each workload (seed {}); improvements are paired over "
                     "windows, with 95% percentile-bootstrap intervals ({} resamples). rltune {}.\n",
                     config.at("seed").get<unsigned long long>(), config.at("bootstrap").get<long>(),
                     config.value("rltune_version", std::string("unknown")));
  return out;
}

std::string markdown_table(const Table& t) {
  const auto escape = [](std::string s) {
    std::string out;
    for (const char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  std::string out = t.caption + "\n\n|";
  for (const auto& h : t.header) out += fmt::format(" {} |", escape(h));
  out += "\n|";
  for (std::size_t i = 0; i < t.header.size(); ++i) out += i == 0 ? "---|" : "---:|";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const auto& cell : row) out += fmt::format(" {} |", escape(cell));
    out += "\n";
  }
  return out;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string base64(const std::string& bytes) {
  static const char* const kDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out += kDigits[(v >> k) & 63];
  }
  if (i < bytes.size()) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kDigits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string read_text(const fs::path& path) {
  auto text = read_file(path.string());
  if (!text) throw InputError(path.string() + ": cannot open");
  return std::move(*text);
}

// ---- figures ----

// A gnuplot single-quoted string: gnuplot runs `commands` in double-quoted strings and reads escapes
// there, but takes a single-quoted one as written (a quote is doubled), so a policy or trace name in
// a results folder can neither run a command nor break the script.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

// The same colour for a policy in every figure of a workload (Tableau 10); after ten policies the
// colours repeat with dashes (dash types 1, 2, 3: solid, dashed, dotted).
constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr std::size_t kDashes = 3;
// Improvements beyond +-this are cut at the axis and labelled with their value.
constexpr double kImprovementBound = 100;

struct Figure {
  std::string name;        // base name under figures/
  std::string title;       // caption in the reports
  int width = 1000, height = 640;
  std::string body;        // gnuplot commands that draw it (after the terminal is set)
};

struct Script {
  std::string data;        // datablocks
  std::vector<Figure> figures;
  int blocks = 0;
  // Defines a datablock with `rows` and returns its name.
  std::string block(const std::string& rows) {
    const std::string name = fmt::format("$d{}", blocks++);
    data += name + " << EOD\n" + rows + "EOD\n";
    return name;
  }
};

// Box statistics of one policy's per-window values (Tukey whiskers: the furthest values within 1.5 IQR).
struct Box {
  double q1, median, q3, low, high;
  std::vector<double> outliers;
};
Box box(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Box b{metrics::sorted_quantile(v, 0.25), metrics::sorted_quantile(v, 0.5), metrics::sorted_quantile(v, 0.75), 0, 0, {}};
  const double iqr = b.q3 - b.q1, lo = b.q1 - 1.5 * iqr, hi = b.q3 + 1.5 * iqr;
  b.low = b.q1, b.high = b.q3;
  for (const double x : v) {
    if (x < lo || x > hi) b.outliers.push_back(x);
    else b.low = std::min(b.low, x), b.high = std::max(b.high, x);
  }
  return b;
}

std::string xtics(const std::vector<std::string>& labels) {
  std::string out = "set xtics (";
  for (std::size_t i = 0; i < labels.size(); ++i) out += fmt::format("{}{} {}", i ? ", " : "", quoted(labels[i]), i + 1);
  return out + ") rotate by 30 right\n";
}

struct MetricPanel {
  const char* metric;
  const char* label;
  double scale;  // values are multiplied by this before plotting
};
constexpr MetricPanel kBoxPanels[] = {{"avg_wait_s", "average wait per window (h)", 1.0 / 3600},
                                      {"avg_jct_s", "average JCT per window (h)", 1.0 / 3600},
                                      {"avg_bsld", "average bounded slowdown per window", 1},
                                      {"gpu_utilization", "GPU utilisation per window (%)", 100}};

// Cells of `columns` hold numbers where they hold anything.
void check_numbers(const CsvTable& table, const std::vector<std::string>& columns) {
  for (const std::string& name : columns) {
    const std::size_t c = table.column(name);  // InputError naming the file and the column
    for (std::size_t r = 0; r < table.rows.size(); ++r)
      if (const std::string& cell = table.rows[r][c]; !cell.empty() && !csv::parse_double(cell))
        throw InputError::at(table.source, table.row_lines[r], name, cell, "is not a number");
  }
}

// What the experiment writes, row for row: each run of a workload's policy in runs.csv, and each
// summary row the report reads. A file cut or edited by hand would show n/a or a box short of its
// windows, and look complete.
void check_rows(const CsvTable& runs, const SummaryIndex& summary, const std::vector<WorkloadInfo>& infos,
                const std::vector<std::size_t>& windows) {
  const std::string again = "it was cut or edited; `rltune experiment --resume` with the same config writes it again";
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> expected, found;
  for (std::size_t w = 0; w < infos.size(); ++w)
    for (const std::string& p : infos[w].policies) expected[{infos[w].cluster, infos[w].trace, p}] += windows[w];
  std::size_t total = 0;
  for (const auto& [key, n] : expected) total += n;
  if (runs.rows.size() != total)
    throw InputError(fmt::format("{}: holds {} runs where config.json describes {} (workloads x policies x windows): {}", runs.source,
                                 runs.rows.size(), total, again));
  const std::size_t cc = runs.column("cluster"), tc = runs.column("trace"), pc = runs.column("policy");
  for (std::size_t i = 0; i < runs.rows.size(); ++i) {
    const auto& r = runs.rows[i];
    if (!expected.count({r[cc], r[tc], r[pc]}))
      throw InputError::at(runs.source, runs.row_lines[i], "policy", r[pc],
                           fmt::format("is no policy of workload {} / {} in config.json: {}", r[cc], r[tc], again));
    ++found[{r[cc], r[tc], r[pc]}];
  }
  for (const auto& [key, n] : expected)
    if (found[key] != n)
      throw InputError(fmt::format("{}: holds {} runs of {} on {} / {} where config.json describes {}: {}", runs.source, found[key],
                                   std::get<2>(key), std::get<0>(key), std::get<1>(key), n, again));
  for (const WorkloadInfo& w : infos)
    for (const std::string& p : w.policies)
      for (const char* metric : kReportedMetrics)
        if (!summary.has(w, p, metric))
          throw InputError(fmt::format("{}: has no {} row for {} on {} / {}: {}", summary.table.source, metric, p, w.cluster, w.trace,
                                       again));
}

// What the box plots read: a completed run has a finite number in each of these columns. Anything else
// (empty, nan, inf, text) was edited in, and leaving the run out would shrink a box without a word.
void check_run_values(const CsvTable& runs) {
  const std::size_t sc = runs.column("status");
  for (std::size_t i = 0; i < runs.rows.size(); ++i)  // a status edited to "Completed" would drop its run
    if (const std::string& status = runs.rows[i][sc]; status != "completed" && status != "failed")
      throw InputError::at(runs.source, runs.row_lines[i], "status", status, "is neither completed nor failed (what experiment writes)");
  std::vector<const char*> columns{"jobs_completed"};
  for (const auto& panel : kBoxPanels) columns.push_back(panel.metric);
  for (const char* name : columns) {
    const std::size_t mc = runs.column(name);
    for (std::size_t i = 0; i < runs.rows.size(); ++i) {
      const auto& r = runs.rows[i];
      if (r[sc] == "completed" && !csv::parse_double(r[mc]))
        throw InputError::at(runs.source, runs.row_lines[i], name, r[mc],
                             fmt::format("{} (a completed run has a number here)", csv::not_a_number_reason(r[mc])));
    }
  }
}

void box_figure(Script& s, const WorkloadInfo& w, const CsvTable& runs) {
  const std::size_t cc = runs.column("cluster"), tc = runs.column("trace"), pc = runs.column("policy"),
                    sc = runs.column("status"), jc = runs.column("jobs_completed");
  Figure f{"boxes-" + w.slug(), "Per-window metrics across windows: box = quartiles, whiskers = 1.5 IQR, points = outliers",
           1100, 760, ""};
  f.body = fmt::format("set multiplot layout 2,2 title {}\n", quoted(w.cluster + " / " + w.trace));
  for (const auto& panel : kBoxPanels) {
    const std::size_t mc = runs.column(panel.metric);
    std::string boxes, outliers;
    for (std::size_t p = 0; p < w.policies.size(); ++p) {
      std::vector<double> v;
      for (const auto& r : runs.rows)
        // Runs where no job ran (every one rejected) are left out, as the summaries leave them out.
        if (r[cc] == w.cluster && r[tc] == w.trace && r[pc] == w.policies[p] && r[sc] == "completed" &&
            csv::parse_double(r[jc]).value_or(0) > 0)
          if (const auto x = csv::parse_double(r[mc])) v.push_back(*x * panel.scale);
      if (v.empty()) continue;
      const Box b = box(v);
      boxes += fmt::format("{} {} {} {} {} {} {}\n", p + 1, b.q1, b.low, b.high, b.q3, b.median, p + 1);
      for (const double o : b.outliers) outliers += fmt::format("{} {} {}\n", p + 1, o, p + 1);
    }
    f.body += "reset\nset termoption noenhanced\nset grid ytics\nset key off\nset style fill solid 0.35 border\n"
              "set boxwidth 0.6 absolute\nset lmargin 9\nset rmargin 2\nset bmargin 11\n";
    f.body += fmt::format("set title {}\nset xrange [0.4:{}]\n", quoted(panel.label), w.policies.size() + 0.6);
    f.body += xtics(w.policies);
    if (boxes.empty()) {
      f.body += "set label 1 \"no completed run\" at graph 0.5,0.5 center\nplot [0:1][0:1] -1 notitle\n";
      continue;
    }
    const std::string d = s.block(boxes);
    f.body += fmt::format("plot {0} using 1:2:3:4:5:7 with candlesticks whiskerbars 0.5 lc variable notitle, "
                          "{0} using 1:6:6:6:6 with candlesticks lc rgb 'black' lw 2 notitle",
                          d);
    if (!outliers.empty()) f.body += fmt::format(", {} using 1:2:3 with points pt 6 ps 0.6 lc variable notitle", s.block(outliers));
    f.body += "\n";
  }
  f.body += "unset multiplot\n";
  s.figures.push_back(std::move(f));
}

void cdf_figure(Script& s, const WorkloadInfo& w, const CsvTable& cdf) {
  const std::size_t cc = cdf.column("cluster"), tc = cdf.column("trace"), pc = cdf.column("policy"),
                    mc = cdf.column("metric"), qc = cdf.column("quantile"), vc = cdf.column("value");
  Figure f{"cdf-" + w.slug(), "Distribution of job JCT and queueing delay over every window (log scale; zero waits sit below the axis)",
           1100, 440 + 22 * static_cast<int>((w.policies.size() + 2) / 3), ""};
  f.body = fmt::format("set multiplot layout 1,2 title {}\n", quoted(w.cluster + " / " + w.trace));
  for (const auto& [metric, label] : {std::pair{"jct_s", "JCT (s)"}, std::pair{"wait_s", "queueing delay (s)"}}) {
    // The legend goes below the plot, never on the curves.
    f.body += "reset\nset termoption noenhanced\nset grid\nset key below maxcols 3\nset logscale x\nset yrange [0:1]\n";
    f.body += fmt::format("set xlabel {}\nset ylabel \"fraction of jobs\"\n", quoted(label));
    std::vector<std::string> plots;
    for (std::size_t p = 0; p < w.policies.size(); ++p) {
      std::string rows;
      for (const auto& r : cdf.rows)
        if (r[cc] == w.cluster && r[tc] == w.trace && r[pc] == w.policies[p] && r[mc] == metric)
          if (const auto v = csv::parse_double(r[vc]); v && *v > 0) rows += fmt::format("{} {}\n", *v, r[qc]);
      if (rows.empty()) continue;
      plots.push_back(fmt::format("{} using 1:2 with lines lw 2 {} title {}", s.block(rows), series_style(p),
                                  quoted(w.policies[p])));
    }
    if (plots.empty()) {
      f.body += "unset logscale x\nset label 1 \"no positive values\" at graph 0.5,0.5 center\nplot [0:1][0:1] -1 notitle\n";
      continue;
    }
    f.body += "plot ";
    for (std::size_t i = 0; i < plots.size(); ++i) f.body += (i ? ", " : "") + plots[i];
    f.body += "\n";
  }
  f.body += "unset multiplot\n";
  s.figures.push_back(std::move(f));
}

void improvement_figure(Script& s, const WorkloadInfo& w, const SummaryIndex& summary, const std::string& baseline,
                        const std::string& baseline_file) {
  const std::pair<const char*, const char*> metrics[] = {
      {"avg_wait_s", "avg wait"}, {"avg_jct_s", "avg JCT"}, {"avg_bsld", "avg bsld"}, {"gpu_utilization", "GPU util"}};
  std::vector<std::size_t> others;
  for (std::size_t p = 0; p < w.policies.size(); ++p)
    if (w.policies[p] != baseline) others.push_back(p);
  if (others.empty()) return;
  Figure f{fmt::format("improvement-{}-vs-{}", w.slug(), baseline_file),
           fmt::format("Improvement over {} with 95% paired bootstrap intervals (positive = better; values beyond "
                       "+-{:.0f}% are cut at the axis and labelled)", baseline, kImprovementBound),
           1000, 520, ""};
  const double width = 0.8 / static_cast<double>(others.size());
  f.body = "reset\nset termoption noenhanced\nset grid ytics\nset key outside right\nset style fill solid 0.7 border\n";
  f.body += fmt::format("set title {}\nset ylabel \"improvement (%)\"\nset xrange [0.4:{}]\nset boxwidth {}\n",
                        quoted(fmt::format("{} / {}: improvement over {}", w.cluster, w.trace, baseline)),
                        std::size(metrics) + 0.6, width * 0.9);
  f.body += "set xzeroaxis lt -1\nset xtics (";
  for (std::size_t m = 0; m < std::size(metrics); ++m) f.body += fmt::format("{}{} {}", m ? ", " : "", quoted(metrics[m].second), m + 1);
  f.body += ")\n";
  std::vector<std::string> plots;
  std::string labels;  // the true values of cut bars and intervals
  double low_end = 0, high_end = 0;
  for (std::size_t i = 0; i < others.size(); ++i) {
    const std::size_t p = others[i];
    std::string rows;
    for (std::size_t m = 0; m < std::size(metrics); ++m) {
      const auto pct = summary.number(w, w.policies[p], metrics[m].first, "vs_" + baseline + "_pct");
      const auto lo = summary.number(w, w.policies[p], metrics[m].first, "vs_" + baseline + "_ci_low");
      const auto hi = summary.number(w, w.policies[p], metrics[m].first, "vs_" + baseline + "_ci_high");
      if (!pct || !lo || !hi) continue;
      const double x = static_cast<double>(m + 1) + (static_cast<double>(i) - (others.size() - 1) / 2.0) * width;
      const ClippedInterval c = clip_interval(*pct, *lo, *hi, kImprovementBound);
      rows += fmt::format("{} {} {} {}\n", x, c.pct, c.low, c.high);
      low_end = std::min(low_end, c.low);
      high_end = std::max(high_end, c.high);
      if (c.clipped)
        labels += fmt::format("set label {} at {},{} center rotate by 90 front font \",8\"\n",
                              quoted(fmt::format("{:+.0f} [{:+.0f}, {:+.0f}]", *pct, *lo, *hi)), x,
                              c.low <= -kImprovementBound ? -kImprovementBound * 0.75 : kImprovementBound * 0.75);
    }
    if (rows.empty()) continue;
    const std::string d = s.block(rows);
    plots.push_back(fmt::format("{0} using 1:2 with boxes {1} fs {2} title {3}, {0} using 1:2:3:4 with yerrorbars lc rgb 'black' pt -1 notitle",
                                d, series_style(p), p < std::size(kColours) ? "solid 0.7 border" : "pattern 2 border",
                                quoted(w.policies[p])));
  }
  if (plots.empty()) return;
  // The axis covers every interval within the bound, with a margin; cut values are labelled.
  const double pad = std::max(5.0, 0.08 * (high_end - low_end));
  f.body += fmt::format("set yrange [{}:{}]\n", low_end - pad, high_end + pad);
  f.body += labels;
  f.body += "plot ";
  for (std::size_t i = 0; i < plots.size(); ++i) f.body += (i ? ", " : "") + plots[i];
  f.body += "\n";
  s.figures.push_back(std::move(f));
}

// Time-weighted means of a step function (value v[i] holds from t[i] to t[i+1]) over `bins` equal bins of
// [0, end): readable when many policies share a plot, unlike the raw steps.
std::vector<double> binned(const std::vector<std::pair<double, double>>& steps, double end, int bins) {
  std::vector<double> sums(static_cast<std::size_t>(bins), 0.0);
  const double width = end / bins;
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    const double from = steps[i].first, to = steps[i + 1].first, v = steps[i].second;
    for (int b = std::max(0, static_cast<int>(from / width)); b < bins && b * width < to; ++b) {
      const double overlap = std::min(to, (b + 1) * width) - std::max(from, b * width);
      if (overlap > 0) sums[static_cast<std::size_t>(b)] += v * overlap / width;
    }
  }
  return sums;
}

void timeline_figure(Script& s, const WorkloadInfo& w, const CsvTable& series) {
  const std::size_t cc = series.column("cluster"), tc = series.column("trace"), wc = series.column("window"),
                    pc = series.column("policy"), xc = series.column("time_s"), qc = series.column("queue_jobs"),
                    gc = series.column("gpus_busy");
  std::string window;
  for (const auto& r : series.rows)
    if (r[cc] == w.cluster && r[tc] == w.trace) {
      window = r[wc];
      break;
    }
  if (window.empty()) return;
  constexpr int kBins = 80;
  // Per policy: (time h, busy GPUs, queued jobs) at every change.
  std::vector<std::vector<std::pair<double, double>>> busy(w.policies.size()), queued(w.policies.size());
  double end = 0;
  for (const auto& r : series.rows)
    if (r[cc] == w.cluster && r[tc] == w.trace && r[wc] == window) {
      const auto p = std::find(w.policies.begin(), w.policies.end(), r[pc]) - w.policies.begin();
      const auto t = csv::parse_double(r[xc]), g = csv::parse_double(r[gc]), q = csv::parse_double(r[qc]);
      if (!t || !g || !q || p == static_cast<std::ptrdiff_t>(w.policies.size())) continue;
      busy[static_cast<std::size_t>(p)].emplace_back(*t / 3600, w.gpus > 0 ? 100 * *g / w.gpus : *g);
      queued[static_cast<std::size_t>(p)].emplace_back(*t / 3600, *q);
      end = std::max(end, *t / 3600);
    }
  if (end <= 0) return;
  // Small multiples: one panel per policy, its line in its colour over the first policy's (dotted), on
  // shared axes; eleven overlapping lines in one plot could not be told apart.
  const std::size_t n = w.policies.size(), cols = std::min<std::size_t>(n, 4), rows_of_panels = (n + cols - 1) / cols;
  const std::string util_label = w.gpus > 0 ? "GPU utilisation (%)" : "busy GPUs";
  for (const auto& [steps, label, name] : {std::tuple{&busy, util_label, std::string("timeline-")},
                                           std::tuple{&queued, std::string("queued jobs"), std::string("queue-")}}) {
    std::vector<std::string> blocks(n);
    double top = 0;
    for (std::size_t p = 0; p < n; ++p) {
      if ((*steps)[p].empty()) continue;
      const auto means = binned((*steps)[p], end, kBins);
      std::string rows;
      for (int b = 0; b < kBins; ++b) {
        rows += fmt::format("{} {}\n", (b + 0.5) * end / kBins, means[static_cast<std::size_t>(b)]);
        top = std::max(top, means[static_cast<std::size_t>(b)]);
      }
      blocks[p] = s.block(rows);
    }
    Figure f{name + w.slug(),
             fmt::format("{} over time since window {}'s first submit, one panel per policy (dotted: {}); means over {} "
                         "equal time bins", label, window, w.policies.front(), kBins),
             1100, std::max(400, 100 + 240 * static_cast<int>(rows_of_panels)), ""};
    f.body = fmt::format("set multiplot layout {},{} title {}\n", rows_of_panels, cols,
                         quoted(fmt::format("{} / {}, window {}: {}", w.cluster, w.trace, window, label)));
    for (std::size_t p = 0; p < n; ++p) {
      f.body += "reset\nset termoption noenhanced\nset grid\nset key off\nset lmargin 8\nset rmargin 2\n";
      f.body += fmt::format("set title {}\nset xrange [0:{}]\nset yrange [0:{}]\n", quoted(w.policies[p]), end,
                            top > 0 ? top * 1.05 : 1);
      if (p + cols >= n) f.body += "set xlabel \"time (h)\"\n";
      if (blocks[p].empty()) {
        f.body += "set label 1 \"no data\" at graph 0.5,0.5 center\nplot -1 notitle\n";
        continue;
      }
      f.body += "plot ";
      if (p > 0 && !blocks[0].empty()) f.body += fmt::format("{} using 1:2 with lines lw 1 lc rgb 'black' dt 3 notitle, ", blocks[0]);
      f.body += fmt::format("{} using 1:2 with lines lw 1.5 {} notitle\n", blocks[p], series_style(p));
    }
    f.body += "unset multiplot\n";
    s.figures.push_back(std::move(f));
  }
}


}  // namespace

std::string series_style(std::size_t index) {
  return fmt::format("lc rgb '{}' dt {}", kColours[index % std::size(kColours)], 1 + index / std::size(kColours) % kDashes);
}

ClippedInterval clip_interval(double pct, double low, double high, double bound) {
  const auto cut = [&](double v) { return std::clamp(v, -bound, bound); };
  return {cut(pct), cut(low), cut(high), cut(pct) != pct || cut(low) != low || cut(high) != high};
}

std::string summary_markdown(const Json& config, const CsvTable& summary) {
  std::string out = intro_markdown(config);
  for (const Section& s : summary_sections(config, summary)) {
    out += "\n## " + s.heading + "\n";
    for (const Table& t : s.tables) out += fmt::format("\n{}", markdown_table(t));
  }
  return out;
}

// Removes the PNG and SVG files an earlier report left under `figures` that `script` does not draw,
// so that the folder holds what report.md shows; returns their names.
std::vector<std::string> remove_stale_figures(const Script& script, const fs::path& figures) {
  std::set<std::string> drawn;
  for (const Figure& f : script.figures) drawn.insert(f.name);
  std::vector<fs::path> stale;
  std::error_code ec;
  for (fs::directory_iterator it(figures, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if ((p.extension() == ".png" || p.extension() == ".svg") && !drawn.contains(p.stem().string()) && it->is_regular_file(ec))
      stale.push_back(p);
  }
  if (ec) throw InputError(fmt::format("{}: cannot list the folder: {}", figures.string(), ec.message()));
  std::sort(stale.begin(), stale.end());
  std::vector<std::string> removed;
  for (const fs::path& p : stale) {
    if (!fs::remove(p, ec) && ec)
      throw InputError(fmt::format("{}: cannot remove this figure of an earlier report: {}", p.string(), ec.message()));
    removed.push_back(p.filename().string());
  }
  return removed;
}

// Whether gnuplot finished the file: a PNG ends with its IEND chunk, an SVG with its closing tag. A
// full disk cuts a file short, which gnuplot need not notice.
bool complete_figure(const fs::path& path) {
  const auto bytes = read_file(path.string());
  if (!bytes) return false;
  if (path.extension() == ".png") return bytes->ends_with(std::string_view("IEND\xAE\x42\x60\x82", 8));
  const auto end = bytes->rfind("</svg>");
  return end != std::string::npos && bytes->find_first_not_of(" \t\r\n", end + 6) == std::string::npos;
}

// Writes figures.gp for `script` under `figures`, runs gnuplot on it, and checks that every figure was
// drawn as PNG and SVG; then removes an earlier report's figures that it did not draw. gnuplot draws
// into a folder of its own, and the figures move into `figures` only once all are drawn: a failure
// part-way (gnuplot's, a full disk) leaves an earlier report's figures as they were, and no half-drawn one.
ReportOutcome render_figures(const Script& script, const fs::path& figures, const ReportOptions& options) {
  std::error_code ec;
  fs::create_directories(figures, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create the folder: {}", figures.string(), ec.message()));
  const fs::path drawing = figures / ".drawing";
  fs::remove_all(drawing, ec);  // a killed report's
  if (!ec) fs::create_directories(drawing, ec);
  if (ec) throw InputError(fmt::format("{}: cannot make a fresh folder to draw in: {}", drawing.string(), ec.message()));
  const std::unique_ptr<const fs::path, void (*)(const fs::path*)> cleanup(&drawing, [](const fs::path* d) {
    try {
      std::error_code ignored;
      fs::remove_all(*d, ignored);
    } catch (...) {  // (bad_alloc) never out of a destructor
    }
  });
  // The script, drawing into `into`: figures.gp (kept for the user to draw again) into `figures`.
  const auto script_text = [&](const fs::path& into) {
    std::string text = "# Figures of an rltune experiment; rendered by `rltune report` (gnuplot figures.gp).\n";
    text += "set encoding utf8\n";
    // Linetype i is series i's style, for plots that pick colours by `lc variable`.
    for (std::size_t i = 0; i < std::size(kColours) * kDashes; ++i) text += fmt::format("set linetype {} {}\n", i + 1, series_style(i));
    text += fmt::format("set linetype cycle {}\n", std::size(kColours) * kDashes);
    text += script.data;
    for (const Figure& f : script.figures)
      for (const auto& [terminal, ext] : {std::pair{"pngcairo", "png"}, std::pair{"svg", "svg"}}) {
        text += fmt::format("\n# {}\nset terminal {} size {},{} font \"DejaVu Sans,11\" noenhanced{}\n", f.name, terminal, f.width,
                            f.height, std::string(ext) == "svg" ? " background rgb 'white'" : "");
        text += fmt::format("set output {}\n", quoted((into / (f.name + "." + ext)).string()));
        text += f.body + "unset output\n";
      }
    return text;
  };
  const fs::path gp = figures / "figures.gp", log = figures / "gnuplot.log", drawn_gp = drawing / "figures.gp";
  write_file(drawn_gp.string(), script_text(drawing));
  // A generous limit: a large experiment's figures take seconds; a hung gnuplot must not hang the report.
  const ProcessOutput run = run_process({options.gnuplot, drawn_gp.string()}, "", 600);
  // What gnuplot said names figures.gp, which has the same lines (only the output folder differs).
  std::string said = run.out + run.err;
  for (std::size_t at = said.find(drawn_gp.string()); at != std::string::npos; at = said.find(drawn_gp.string(), at + gp.string().size()))
    said.replace(at, drawn_gp.string().size(), gp.string());
  if (run.status != 0) {
    if (run.status == 127 && run.err.starts_with("cannot run"))
      throw InputError(fmt::format("{} not found: install gnuplot (Debian: apt-get install gnuplot-nox)", options.gnuplot));
    // The script that failed and what gnuplot said, to read; the earlier report's figures stay.
    write_file(gp.string(), script_text(figures));
    write_file(log.string(), said);
    std::string tail = said;
    if (tail.size() > 2000) tail = "..." + tail.substr(tail.size() - 2000);
    throw InputError(fmt::format("gnuplot failed on {} (see {}; the earlier figures were kept):\n{}", gp.string(), log.string(), tail));
  }

  std::vector<std::string> names;
  for (const Figure& f : script.figures) {
    for (const char* ext : {".png", ".svg"})
      if (!complete_figure(drawing / (f.name + ext)))
        throw InputError(fmt::format("gnuplot did not finish {} (a full disk?); the earlier figures were kept",
                                     (figures / (f.name + ext)).string()));
    names.push_back(f.name);
  }
  // Each figure is replaced whole (a rename); the script and the log then describe what is in place.
  for (const Figure& f : script.figures)
    for (const char* ext : {".png", ".svg"}) {
      fs::rename(drawing / (f.name + ext), figures / (f.name + ext), ec);
      if (ec) throw InputError(fmt::format("{}: cannot move the drawn figure in place: {}", (figures / (f.name + ext)).string(), ec.message()));
    }
  write_file(gp.string(), script_text(figures));
  write_file(log.string(), said);
  return {names, remove_stale_figures(script, figures)};
}

// report.html: one self-contained page (inline styles, figures as inline SVG) around `body`.
std::string html_page(const Json& config, const std::string& body) {
  const std::string title = config.value("name", std::string("experiment"));
  std::string intro = intro_markdown(config);
  intro = intro.substr(intro.find("\n\n") + 2);  // without the "# name" heading
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<title>" + html_escape(title) + " - rltune report</title>\n<style>\n"
          "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\n"
          "h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}\n"
          "table{border-collapse:collapse;margin:1em 0;font-size:0.92em}caption{text-align:left;font-weight:bold;padding:0.3em 0}\n"
          "th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:right}th:first-child,td:first-child{text-align:left}\n"
          "th{background:#f3f3f3}tr:nth-child(even) td{background:#fafafa}\n"
          "figure{margin:1.5em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:0.9em;color:#555}\n"
          "</style>\n</head>\n<body>\n";
  html += "<h1>" + html_escape(title) + "</h1>\n";
  for (std::string_view rest = intro; !rest.empty();) {
    const auto end = rest.find("\n\n");
    const std::string_view para = rest.substr(0, end);
    if (!para.empty() && para != "\n") html += "<p>" + html_escape(std::string(para)) + "</p>\n";
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 2);
  }
  html += body + "</body>\n</html>\n";
  return html;
}

ReportOutcome make_report(const std::string& dir_text, const ReportOptions& options) {
  const fs::path dir(dir_text);
  Json config;
  try {
    config = Json::parse(read_text(dir / "config.json"));
  } catch (const InputError&) {
    throw InputError(dir_text + ": not an experiment folder (no config.json; run `rltune experiment` first)");
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: unreadable experiment config: {}", (dir / "config.json").string(), e.what()));
  }
  const CsvTable runs = CsvTable::read((dir / "runs.csv").string());
  const CsvTable summary_csv = CsvTable::read((dir / "summary.csv").string());
  const CsvTable cdf = CsvTable::read((dir / "cdf.csv").string());
  const CsvTable series = CsvTable::read((dir / "timeseries.csv").string());
  // Everything the report reads from config.json, read before any figure is drawn: an edited file
  // that lacks a key fails here, with nothing written.
  std::vector<WorkloadInfo> infos;
  std::vector<std::string> bases;
  std::vector<std::size_t> windows;  // per workload
  std::string md;
  try {
    infos = workloads(config);
    for (const auto& w : config.at("workloads"))
      windows.push_back(w.at("windows").at("length").is_string() ? 1 : w.at("windows").at("count").get<std::size_t>());
    bases = baselines(config);
    md = intro_markdown(config);
    html_page(config, "");
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: unreadable experiment config: {}", (dir / "config.json").string(), e.what()));
  }
  // Every column the report reads, with numbers where it has values: a column lost or renamed in an
  // edit would otherwise read as n/a in every table and drop the improvement figures.
  std::vector<std::string> needed{"windows", "mean", "p95"};
  for (const std::string& b : bases)
    for (const char* part : {"_pct", "_ci_low", "_ci_high", "_pairs"}) needed.push_back("vs_" + b + part);
  check_numbers(summary_csv, needed);
  check_numbers(cdf, {"quantile", "value"});
  const SummaryIndex summary(summary_csv);
  check_rows(runs, summary, infos, windows);
  check_run_values(runs);
  const std::vector<Section> sections = summary_sections(config, summary_csv);

  Script script;
  std::vector<std::vector<std::string>> figures_of(infos.size());
  const std::vector<std::string> base_files = unique_file_names(bases);
  for (std::size_t i = 0; i < infos.size(); ++i) {
    const std::size_t before = script.figures.size();
    box_figure(script, infos[i], runs);
    for (std::size_t b = 0; b < bases.size(); ++b) improvement_figure(script, infos[i], summary, bases[b], base_files[b]);
    cdf_figure(script, infos[i], cdf);
    timeline_figure(script, infos[i], series);
    for (std::size_t f = before; f < script.figures.size(); ++f) figures_of[i].push_back(script.figures[f].name);
  }

  const fs::path figures = dir / "figures";
  ReportOutcome outcome = render_figures(script, figures, options);
  std::map<std::string, const Figure*> by_name;
  for (const Figure& f : script.figures) by_name[f.name] = &f;

  std::string body;
  for (std::size_t i = 0; i < sections.size(); ++i) {
    md += "\n## " + sections[i].heading + "\n";
    body += "<section>\n<h2>" + html_escape(sections[i].heading) + "</h2>\n";
    for (const Table& t : sections[i].tables) {
      md += fmt::format("\n{}", markdown_table(t));
      body += "<table>\n<caption>" + html_escape(t.caption) + "</caption>\n<tr>";
      for (const auto& h : t.header) body += "<th>" + html_escape(h) + "</th>";
      body += "</tr>\n";
      for (const auto& row : t.rows) {
        body += "<tr>";
        for (const auto& cell : row) body += "<td>" + html_escape(cell) + "</td>";
        body += "</tr>\n";
      }
      body += "</table>\n";
    }
    for (const auto& name : figures_of[i]) {
      const Figure& f = *by_name.at(name);
      md += fmt::format("\n![{}](figures/{}.png)\n\n*{}*\n", f.title, f.name, f.title);
      body += fmt::format("<figure><img alt=\"{}\" src=\"data:image/svg+xml;base64,{}\"><figcaption>{}</figcaption></figure>\n",
                          html_escape(f.title), base64(read_text(figures / (f.name + ".svg"))), html_escape(f.title));
    }
    body += "</section>\n";
  }
  write_file((dir / "report.md").string(), md);
  write_file((dir / "report.html").string(), html_page(config, body));
  return outcome;
}

}  // namespace rltune::report
