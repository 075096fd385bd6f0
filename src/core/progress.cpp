#include "core/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace rltune {

namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<long long>(std::max(0.0, seconds));
  return s >= 3600 ? fmt::format("{}h{:02}m", s / 3600, s / 60 % 60) : fmt::format("{}m{:02}s", s / 60, s % 60);
}

}  // namespace

Progress::Progress(std::string label, double total, double plain_interval_s)
    : label_(std::move(label)), total_(std::max(total, 1e-9)), plain_interval_s_(plain_interval_s),
      terminal_(isatty(fileno(stderr)) != 0), start_(std::chrono::steady_clock::now()), last_line_(start_) {}

void Progress::update(double done, const std::string& message) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double fraction = std::clamp(done / total_, 0.0, 1.0);
  const std::string eta = fraction > 0 ? clock_text(elapsed * (1 - fraction) / fraction) : "?";
  if (terminal_) {
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(fraction * kWidth);
    std::fputs(fmt::format("\r\033[K{} [{}{}] {:3.0f}% {} ETA {} {}", label_, std::string(static_cast<std::size_t>(filled), '#'),
                           std::string(static_cast<std::size_t>(kWidth - filled), '.'), 100 * fraction,
                           clock_text(elapsed), eta, message)
                   .c_str(),
               stderr);
    std::fflush(stderr);
    printed_ = true;
  } else if (std::chrono::duration<double>(now - last_line_).count() >= plain_interval_s_ || fraction >= 1) {
    std::fputs(fmt::format("{} {:.0f}% elapsed {} ETA {} {}\n", label_, 100 * fraction, clock_text(elapsed), eta, message).c_str(),
               stderr);
    last_line_ = now;
  }
}

void Progress::finish(const std::string& message) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fputs(fmt::format("{}{} done in {} {}\n", terminal_ && printed_ ? "\r\033[K" : "", label_, clock_text(elapsed), message).c_str(),
             stderr);
}

}  // namespace rltune
