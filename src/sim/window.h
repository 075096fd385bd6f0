#pragma once
// Which jobs of a trace a run sees: the train/validation/test split by job index, windows drawn from a
// split, and warm windows (the jobs before a window, replayed first). Training, evaluate and experiments
// all cut traces this one way.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/names.h"
#include "core/rng.h"
#include "core/settings.h"
#include "trace/job_spec.h"

namespace rltune::sim {

enum class Split { train, validation, test, all };
inline constexpr NameTable<Split, 4> kSplitNames{"split", {{{Split::train, "train"}, {Split::validation, "validation"}, {Split::test, "test"}, {Split::all, "all"}}}};
inline Split parse_split(const std::string& name) { return kSplitNames.parse(name); }  // InputError for unknown names
inline const char* to_string(Split value) { return kSplitNames.name(value); }
// [first, last) job indices of `split` in a trace of `jobs` jobs: the first train_split of the jobs (by
// index) train; the rest is halved into validation and test (B6: they never overlap training).
std::pair<std::size_t, std::size_t> split_range(std::size_t jobs, double train_split, Split split);
// InputError unless the split of `jobs` jobs holds a window of `len`.
void check_split_holds(std::size_t jobs, double train_split, Split split, std::size_t len);
// The start of a window of `len` jobs drawn uniformly from `split` with `rng` (as training and
// evaluation draw them); InputError when the split holds fewer than `len` jobs.
std::size_t draw_window(Rng& rng, std::size_t jobs, double train_split, Split split, std::size_t len);

// How windows are cut, in numbers. One record per setting (window_settings()) gives the flags of train,
// evaluate and simulate, the keys of an experiment's `windows:`, and the bounds they all check.
struct WindowSettings {
  int count = 50;            // windows drawn
  int length = 256;          // jobs per window
  int warmup = 0;            // jobs before a window replayed first (not measured)
  double train_split = 0.7;  // share of the trace (by job index) that training windows come from
};
using WindowSetting = NumberSetting<WindowSettings>;
std::span<const WindowSetting> window_settings();
const WindowSetting& window_setting(std::string_view key);  // by its YAML key; InvariantError if none

// The window [start, start + length) of `jobs` preceded by up to `warmup` jobs (fewer at the trace's start).
struct WarmWindow {
  std::span<const trace::JobSpec> jobs;  // the warm-up jobs, then the window's
  std::size_t warmup = 0;                // how many lead: the measured jobs start at this index
};
WarmWindow warm_window(std::span<const trace::JobSpec> jobs, std::size_t start, std::size_t length, std::size_t warmup);

// A window given as "START:LEN" (0-based, over the submit-sorted trace).
struct LabelledWindow {
  std::size_t start = 0, length = 0;
  std::string label;  // "START:LEN", or "all" for the whole trace
};
// Parses "START:LEN" texts against a trace of `job_count` jobs; none = the whole trace ("all").
// InputError (naming --window or --warmup) for a malformed window, one past the trace's end, one given
// twice, or a `warmup` out of its bounds or with no window after the first job to warm up.
std::vector<LabelledWindow> parse_windows(const std::vector<std::string>& texts, std::size_t job_count, long long warmup = 0);

}  // namespace rltune::sim
