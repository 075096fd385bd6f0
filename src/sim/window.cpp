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

std::size_t draw_window(Rng& rng, std::size_t jobs, double train_split, Split split, std::size_t len) {
  const auto [first, last] = split_range(jobs, train_split, split);
  if (last - first < len)
    throw InputError(fmt::format("the {} split holds {} of the trace's {} jobs, fewer than --window-len {}", to_string(split),
                                 last - first, jobs, len));
  return first + static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(last - first - len)));
}

WarmWindow warm_window(std::span<const trace::JobSpec> jobs, std::size_t start, std::size_t length, std::size_t warmup) {
  RLTUNE_CHECK(start + length <= jobs.size(), "the window lies inside the trace");
  const std::size_t warm = std::min(warmup, start);
  return {jobs.subspan(start - warm, warm + length), warm};
}

}  // namespace rltune::sim
