#pragma once
// Progress of long work on stderr: a bar with ETA redrawn in place on a terminal; a plain line at most
// every `plain_interval_s` seconds (and at the end) otherwise, so logs stay readable.
#include <chrono>
#include <string>

namespace rltune {

class Progress {
 public:
  Progress(std::string label, double total, double plain_interval_s = 10);
  // `done` of total units; `message` = the latest results, shown after the bar.
  void update(double done, const std::string& message);
  void finish(const std::string& message);

 private:
  std::string label_;
  double total_;
  double plain_interval_s_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_, last_line_;
  bool printed_ = false;
};

}  // namespace rltune
