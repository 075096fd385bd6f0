#include "rl/env.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "rl/policy_net.h"

namespace rltune::rl {

Score parse_score(const std::string& name) {
  if (name == "bsld") return Score::bsld;
  if (name == "wait") return Score::wait;
  if (name == "jct") return Score::jct;
  if (name == "sld") return Score::sld;
  if (name == "util") return Score::util;
  throw InputError("--score: unknown score '" + name + "' (known: bsld, wait, jct, sld, util)");
}

const char* to_string(Score score) {
  switch (score) {
    case Score::bsld: return "bsld";
    case Score::wait: return "wait";
    case Score::jct: return "jct";
    case Score::sld: return "sld";
    case Score::util: return "util";
  }
  return "?";
}

double score(const sim::Engine& e, Score s) {
  double sum = 0, work = 0;
  std::size_t n = 0;
  Seconds first_submit = kForever, last_end = 0;
  for (std::size_t i = 0; i < e.job_count(); ++i) {
    const sim::SimJob& j = e.job(static_cast<JobIndex>(i));
    if (j.state != sim::JobState::completed) continue;
    const double wait = static_cast<double>(j.start - j.spec->submit), jct = static_cast<double>(j.end - j.spec->submit);
    const double duration = static_cast<double>(j.spec->duration);
    switch (s) {
      case Score::bsld: sum += std::max(1.0, jct / std::max(duration, 10.0)); break;
      case Score::wait: sum += wait; break;
      case Score::jct: sum += jct; break;
      case Score::sld: sum += jct / std::max(duration, 1.0); break;
      case Score::util: break;
    }
    work += duration * j.spec->gpus;
    first_submit = std::min(first_submit, j.spec->submit);
    last_end = std::max(last_end, j.end);
    ++n;
  }
  if (n == 0) return 0;
  if (s != Score::util) return sum / static_cast<double>(n);
  const double span = std::max<double>(1, static_cast<double>(last_end - first_submit));
  return -work / (span * e.cluster_spec().total_gpus());  // lower is better, like the others
}

Env::Env(const cluster::ClusterSpec& cluster, std::span<const trace::JobSpec> jobs, EnvOptions options)
    : cluster_(cluster), jobs_(jobs), options_(std::move(options)) {
  if (options_.window_len < 1 || static_cast<std::size_t>(options_.window_len) > jobs_.size())
    throw InputError(fmt::format("--window-len {} must be between 1 and the trace's {} jobs", options_.window_len, jobs_.size()));
  if (!(options_.train_split > 0 && options_.train_split < 1)) throw InputError("--train-split must be between 0 and 1");
  order_ = policy::make_priority(options_.baseline, options_.profile.priority_options);
  placement_ = policy::make_placement(options_.profile);
}

Split parse_split(const std::string& name) {
  if (name == "train") return Split::train;
  if (name == "validation") return Split::validation;
  if (name == "test") return Split::test;
  if (name == "all") return Split::all;
  throw InputError("--split: unknown split '" + name + "' (known: train, validation, test, all)");
}

const char* to_string(Split split) {
  switch (split) {
    case Split::train: return "train";
    case Split::validation: return "validation";
    case Split::test: return "test";
    case Split::all: return "all";
  }
  return "?";
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

const Observation& Env::reset(Rng& rng, Split split) {
  return reset_at(draw_window(rng, jobs_.size(), options_.train_split, split, static_cast<std::size_t>(options_.window_len)));
}

const Observation& Env::reset_at(std::size_t start) {
  const auto len = static_cast<std::size_t>(options_.window_len);
  RLTUNE_CHECK(start + len <= jobs_.size(), "the window lies inside the trace");
  window_start_ = start;
  ranked_.clear();
  const auto window = jobs_.subspan(start, len);
  // The baseline: the same window, placement and options, with the baseline's priority.
  policy::ProfileOptions baseline = options_.profile;
  baseline.priority = options_.baseline;
  auto scheduler = policy::make_profile(baseline);
  sim::Engine reference(cluster_, window, options_.engine);
  reference.run(*scheduler);
  baseline_score_ = score(reference, options_.score);
  engine_ = std::make_unique<sim::Engine>(cluster_, window, options_.engine);
  order_->reset();
  committed_ = -1;
  unblock();
  agent_score_ = 0;
  RLTUNE_CHECK(next_decision(), "a window has at least one job to decide");
  return observation_;
}

void Env::unblock() { pass_.reset(cluster_.pools.size()); }

void Env::block(JobIndex j) { pass_.block(*engine_, j, options_.profile, *placement_); }

void Env::rank(const Observation& obs) {
  std::array<int, kSlots> slots;
  if (ranker_) {
    ranker_(obs, logits_);
    order_by_logits(logits_, obs.visible, slots);
  } else {
    std::iota(slots.begin(), slots.begin() + obs.visible, 0);
  }
  ranked_.clear();
  for (int i = 0; i < obs.visible; ++i) ranked_.push_back(obs.jobs[static_cast<std::size_t>(slots[static_cast<std::size_t>(i)])]);
}

void Env::collect_upcoming(JobIndex j) {
  upcoming_.clear();
  seen_.assign(engine_->job_count(), 0);
  bool after = false;
  const auto visit = [&](JobIndex q) {
    if (seen_[static_cast<std::size_t>(q)] || engine_->job(q).state != sim::JobState::queued) return;
    seen_[static_cast<std::size_t>(q)] = 1;
    if (q == j) after = true;
    else if (after && static_cast<int>(upcoming_.size()) < placement_->lookahead())
      upcoming_.push_back({cluster::request_of(*engine_->job(q).spec), engine_->job(q).eligible});
  };
  if (committed_ >= 0) visit(committed_);
  for (const JobIndex q : ranked_) visit(q);
  for (const JobIndex q : order_->order(*engine_)) visit(q);
}

bool Env::start_in(JobIndex j, std::span<const PoolId> pools) {
  if (pools.empty()) return false;
  if (placement_->lookahead() > 0) collect_upcoming(j);
  const policy::PlaceResult r = placement_->place(engine_->cluster(), cluster::request_of(*engine_->job(j).spec), pools, upcoming_);
  if (r.status != policy::PlaceStatus::placed) return false;
  const std::string problem = engine_->start(j, r.placement);
  RLTUNE_CHECK(problem.empty(), "the engine refused a placement: " + problem);
  unblock();  // a start begins a new pass over the queue, as in the simulator
  return true;
}

bool Env::try_start(JobIndex j) {
  const sim::SimJob& job = engine_->job(j);
  pass_.open_pools(job, pools_);
  if (start_in(j, pools_)) return true;
  if (!options_.profile.backfill) return false;
  pass_.backfill_pools(job, engine_->now(), pools_);
  return start_in(j, pools_);
}

bool Env::serve_unseen() {
  int seen = 0;
  for (const JobIndex j : order_->order(*engine_)) {
    if (pass_.all_blocked() && !options_.profile.backfill) return false;
    if (engine_->job(j).state != sim::JobState::queued) continue;
    if (++seen <= observation_.visible || j == committed_) continue;
    if (try_start(j)) return true;
    block(j);
  }
  return false;
}

bool Env::next_decision() {
  for (;;) {
    if (engine_->queue().empty()) {
      if (!engine_->advance()) return false;
      unblock();
      continue;
    }
    observe(*engine_, order_->order(*engine_), observation_, options_.observation);
    // Ranked as the `rl` policy ranks it in the simulator: every visible job, before legality masks it.
    if (placement_->lookahead() > 0) rank(observation_);
    // The committed job goes first; if it does not fit, it blocks (every pool, or its own). A failed
    // try changes nothing, so the observation and ranking stay current.
    if (committed_ >= 0 && engine_->job(committed_).state == sim::JobState::queued) {
      if (try_start(committed_)) {
        committed_ = -1;
        continue;
      }
      block(committed_);
    }
    bool open = false;
    for (int s = 0; s < observation_.visible; ++s) {
      const bool ok = pass_.may_pick(*engine_, observation_.jobs[static_cast<std::size_t>(s)], options_.profile.backfill, *placement_, pools_);
      observation_.mask[static_cast<std::size_t>(s)] = ok;
      open = open || ok;
    }
    // Waiting is a choice only while something is still to happen (else it would change nothing).
    observation_.mask[kSkip] = options_.skip && engine_->event_pending();
    if (open) return true;
    // Unless the agent may wait, the jobs it cannot see get their turn, as in the simulator.
    if (!observation_.mask[kSkip] && serve_unseen()) continue;
    // Nothing can start before the next event.
    RLTUNE_CHECK(engine_->advance(), "a queued job always has an event to wait for");
    unblock();
  }
}

Env::Step Env::step(int slot) {
  RLTUNE_CHECK(slot >= 0 && slot < kActions && observation_.mask[static_cast<std::size_t>(slot)] == 1,
               fmt::format("action {} is masked", slot));
  if (slot == kSkip) {
    engine_->wake_at(engine_->now() + kSkipTime);
    RLTUNE_CHECK(engine_->advance(), "skip is allowed only while something is still to happen");
    unblock();
    return finish_step();
  }
  const JobIndex j = observation_.jobs[static_cast<std::size_t>(slot)];
  // A job that does not fit now is a commitment (SPEC 3.4) unless one is pending: it starts first as
  // soon as it fits, and meanwhile blocks every pool (global) or its own (pool).
  if (!try_start(j)) {
    if (options_.commit && (committed_ < 0 || engine_->job(committed_).state != sim::JobState::queued)) committed_ = j;
    block(j);
  } else if (committed_ == j) {
    committed_ = -1;
  }
  return finish_step();
}

Env::Step Env::finish_step() {
  if (next_decision()) return {};
  agent_score_ = score(*engine_, options_.score);
  const double base = baseline_score_, rl = agent_score_;
  return {true, (base - rl) / std::max({base, rl, 1.0})};
}

}  // namespace rltune::rl
