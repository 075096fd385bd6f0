#pragma once
// Human-readable tables for the terminal.
#include <ostream>
#include <string>
#include <vector>

#include "metrics/metrics.h"

namespace rltune::report {

// "42 s", "13.5 min", "2.1 h", "3.4 d".
std::string human_duration(double seconds);

// One row per policy: completed/rejected jobs, waits, JCT, slowdown, utilisation, fragmentation and
// decision speed, with the best value of each column marked by '*', each row's change against the
// first row, and a legend.
void print_comparison(std::ostream& out, const std::vector<std::pair<std::string, metrics::Summary>>& rows);

}  // namespace rltune::report
