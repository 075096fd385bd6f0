#pragma once
// Reports of an experiment folder (written by `rltune experiment`): the summary tables in Markdown and
// HTML, and figures rendered with gnuplot. Reads only the folder's files (config.json, runs.csv,
// summary.csv, cdf.csv, timeseries.csv), so a report can be made again, or elsewhere, at any time.
#include <map>
#include <string>
#include <vector>

#include "report/outputs.h"

namespace rltune::report {

// A CSV file with a header row, read whole. InputError names the file when it is missing or malformed.
struct CsvTable {
  std::string source;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<long> row_lines;  // the line each row starts on, for messages (parse and read only)
  static CsvTable parse(const std::string& text, const std::string& source);
  static CsvTable read(const std::string& path);
  // The table as CSV text: the header, then the rows, each field quoted only where CSV needs it.
  std::string to_csv() const;
  // Index of a column; InputError naming the file when absent.
  std::size_t column(const std::string& name) const;
};

// summary.md: the experiment's name and description, then per workload a table of means over windows
// and, per baseline, a table of improvements with their 95% intervals. `config` is config.json.
std::string summary_markdown(const Json& config, const CsvTable& summary);

// The line style of a figure's series `index` (a policy): the Tableau 10 colours, then the same
// colours dashed, then dotted, so that up to 30 policies stay apart, e.g. "lc rgb '#4e79a7' dt 1".
std::string series_style(std::size_t index);

// An improvement and its interval, cut to [-bound, bound] so that one extreme interval does not
// flatten a chart; `clipped` says that a value was cut (the chart then labels the true value).
struct ClippedInterval {
  double pct, low, high;
  bool clipped;
};
ClippedInterval clip_interval(double pct, double low, double high, double bound);

struct ReportOptions {
  std::string gnuplot = "gnuplot";  // the program that renders the figures
};

struct ReportOutcome {
  std::vector<std::string> figures;  // base names under figures/, each written as .png and .svg
  std::vector<std::string> removed;  // files under figures/ that an earlier report drew and this one did not
};

// Writes DIR/figures/*.png and *.svg (with the gnuplot script that drew them, figures.gp), DIR/report.md
// and DIR/report.html (one self-contained page: inline SVG figures and tables, no external files).
// InputError when the folder is not a finished experiment or gnuplot is missing or fails.
ReportOutcome make_report(const std::string& dir, const ReportOptions& options = {});

}  // namespace rltune::report
