#include "sim/window.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace rltune::sim {

std::span<const WindowSetting> window_settings() {
  static const WindowSetting settings[] = {
      {"--windows", "count", "windows drawn", 1, 1e6, &WindowSettings::count},
      {"--window-len", "length", "jobs per window", 1, 1e8, &WindowSettings::length},
      {"--warmup", "warmup", "jobs before each window replayed first, not measured", 0, 1e8, &WindowSettings::warmup},
      {"--train-split", "train_split", "share of the trace (by job index) that training windows come from", 1e-9, 1 - 1e-9,
       &WindowSettings::train_split},
  };
  return settings;
}

const WindowSetting& window_setting(std::string_view key) {
  for (const WindowSetting& s : window_settings())
    if (key == s.key) return s;
  RLTUNE_CHECK(false, fmt::format("no window setting {}", key));
  return window_settings().front();
}

std::pair<std::size_t, std::size_t> split_range(std::size_t n, double train_split, Split split) {
  const auto train_end = static_cast<std::size_t>(std::floor(train_split * static_cast<double>(n)));
  const std::size_t validation_end = train_end + (n - train_end) / 2;
  switch (split) {
    case Split::train: return {0, train_end};
    case Split::validation: return {train_end, validation_end};
    case Split::test: return {validation_end, n};
    case Split::all: return {0, n};
  }
  return {0, 0};
}

void check_split_holds(std::size_t jobs, double train_split, Split split, std::size_t len) {
  const auto [first, last] = split_range(jobs, train_split, split);
  if (last - first < len)
    throw InputError(fmt::format("the {} split holds {} of the trace's {} jobs, fewer than a window's {}", to_string(split),
                                 last - first, jobs, len));
}

std::size_t draw_window(Rng& rng, std::size_t jobs, double train_split, Split split, std::size_t len) {
  check_split_holds(jobs, train_split, split, len);
  const auto [first, last] = split_range(jobs, train_split, split);
  return first + static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(last - first - len)));
}

WarmWindow warm_window(std::span<const trace::JobSpec> jobs, std::size_t start, std::size_t length, std::size_t warmup) {
  RLTUNE_CHECK(start <= jobs.size() && length <= jobs.size() - start, "the window lies inside the trace");
  const std::size_t warm = std::min(warmup, start);
  return {jobs.subspan(start - warm, warm + length), warm};
}

std::vector<LabelledWindow> parse_windows(const std::vector<std::string>& texts, std::size_t job_count, long long warmup) {
  const WindowSetting& bounds = window_setting("warmup");
  if (warmup < bounds.min || warmup > bounds.max)
    throw InputError(fmt::format("--warmup {}: must be between {} and {}", warmup, bounds.min, bounds.max));
  std::vector<LabelledWindow> windows;
  if (texts.empty()) windows.push_back({0, job_count, "all"});
  for (const auto& text : texts) {
    const auto colon = text.find(':');
    long long start = -1, length = -1;
    try {
      std::size_t used1 = 0, used2 = 0;
      if (colon != std::string::npos) {
        start = std::stoll(text.substr(0, colon), &used1);
        length = std::stoll(text.substr(colon + 1), &used2);
        if (used1 != colon || used2 != text.size() - colon - 1) start = -1;
      }
    } catch (const std::exception&) {
      start = -1;
    }
    if (start < 0 || length < 1)
      throw InputError(fmt::format("--window '{}': expected START:LEN with START >= 0 and LEN >= 1", text));
    if (static_cast<std::size_t>(start) >= job_count || static_cast<std::size_t>(length) > job_count - start)
      throw InputError(fmt::format("--window '{}': the trace has only {} jobs", text, job_count));
    LabelledWindow w{static_cast<std::size_t>(start), static_cast<std::size_t>(length), fmt::format("{}:{}", start, length)};
    // Its rows would appear twice in jobs.csv and count twice in the aggregate.
    if (std::any_of(windows.begin(), windows.end(), [&](const LabelledWindow& o) { return o.label == w.label; }))
      throw InputError(fmt::format("--window '{}': window {} is given twice", text, w.label));
    windows.push_back(std::move(w));
  }
  // Warm-up jobs are those before a window: with none, a warm-up would be accepted and do nothing.
  if (warmup > 0 && std::all_of(windows.begin(), windows.end(), [](const LabelledWindow& w) { return w.start == 0; }))
    throw InputError(fmt::format("--warmup {}: no window starts after the trace's first job, so no job comes before one to warm "
                                 "it up (give --window START:LEN with START > 0)",
                                 warmup));
  return windows;
}

}  // namespace rltune::sim
