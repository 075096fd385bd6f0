#include "rl/env.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "metrics/metrics.h"
#include "sim/runtime_fit.h"

namespace rltune::rl {

double score(const sim::Engine& e, Score s, std::size_t first_scored) {
  double sum = 0, work = 0;
  std::size_t n = 0;
  Seconds first_submit = kForever, last_end = 0;
  for (std::size_t i = first_scored; i < e.job_count(); ++i) {
    const sim::SimJob& j = e.job(static_cast<JobIndex>(i));
    if (j.state != sim::JobState::completed) continue;
    const double wait = static_cast<double>(j.start - j.spec->submit), jct = static_cast<double>(j.end - j.spec->submit);
    const double duration = static_cast<double>(j.spec->duration);
    switch (s) {
      case Score::bsld: sum += metrics::bounded_slowdown(jct, duration); break;
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

namespace {

AgentOptions agent_options(const EnvOptions& o) {
  return {o.observation, o.skip, o.commit, o.profile.priority_options.serves_heads};
}

// `o` checked, with its learned runtime model (fitted on the training split of `jobs`) where it asks for one.
EnvOptions checked(EnvOptions o, std::span<const trace::JobSpec> jobs) {
  check_bounds(o.window, sim::window_settings(), "window");
  if (static_cast<std::size_t>(o.window.length) > jobs.size())
    throw InputError(fmt::format("window.length {}: must be at most the trace's {} jobs", o.window.length, jobs.size()));
  const std::string conflict = reference_conflict(agent_options(o));
  if (!conflict.empty()) throw InputError(conflict);
  o.engine = sim::with_runtime_model(std::move(o.engine), jobs, o.window.train_split);
  return o;
}

}  // namespace

Env::Env(const cluster::ClusterSpec& cluster, std::span<const trace::JobSpec> jobs, EnvOptions options)
    : cluster_(cluster),
      jobs_(jobs),
      options_(checked(std::move(options), jobs)),
      pass_(options_.profile.blocking, options_.profile.backfill, policy::make_placement(options_.profile)),
      agent_(policy::make_priority(options_.baseline, options_.profile.priority_options), agent_options(options_)),
      warmup_(options_.window.warmup > 0 ? policy::make_profile(policy::warmup_profile(options_.profile)) : nullptr) {}

void Env::set_ranker(Ranker ranker) {
  // Only look-ahead placements read the ranking: without one, the agent's scores are not worth computing.
  agent_.set_ranker(pass_.placement().lookahead() > 0 ? std::move(ranker) : Ranker{});
}

void Env::check_windows_run(Split split) const {
  const auto length = static_cast<std::size_t>(options_.window.length);
  sim::check_split_holds(jobs_.size(), options_.window.train_split, split, length);
  // Then the agent also decides on other jobs: the published loop offers rejected jobs too, and a
  // warm-up may leave its own jobs queued. A window without any is said at its reset.
  if (options_.profile.priority_options.serves_heads || options_.window.warmup > 0) return;
  const auto [first, last] = sim::split_range(jobs_.size(), options_.window.train_split, split);
  std::vector<PoolId> eligible;
  std::vector<int> admitted(last - first);
  for (std::size_t i = first; i < last; ++i) admitted[i - first] = cluster::admission_problem(cluster_, jobs_[i], eligible).empty();
  int in_window = 0;  // admitted jobs in [start, start + length), slid over every start a draw can give
  for (std::size_t i = 0; i < length; ++i) in_window += admitted[i];
  for (std::size_t start = first;; ++start) {
    if (in_window == 0)
      throw InputError(fmt::format("window {}:{} of the {} split: none of its jobs can run on cluster {} (each is rejected at "
                                   "admission; `rltune trace-stats --cluster ...` tells why), so an episode drawn there could not start",
                                   start, length, sim::to_string(split), cluster_.name));
    if (start + length == last) return;
    in_window += admitted[start + length - first] - admitted[start - first];
  }
}

const Observation& Env::reset(Rng& rng, Split split) {
  return reset_at(sim::draw_window(rng, jobs_.size(), options_.window.train_split, split, static_cast<std::size_t>(options_.window.length)));
}

const Observation& Env::reset_at(std::size_t start) {
  const sim::WarmWindow window =
      sim::warm_window(jobs_, start, static_cast<std::size_t>(options_.window.length), static_cast<std::size_t>(options_.window.warmup));
  window_start_ = start;
  warm_jobs_ = window.warmup;
  agent_from_ = warm_jobs_ > 0 ? window.jobs[warm_jobs_].submit : std::numeric_limits<Seconds>::min();
  // The baseline: the same window, warm-up, placement and options, with the baseline's priority.
  policy::ProfileOptions baseline = options_.profile;
  baseline.priority = options_.baseline;
  auto scheduler = policy::make_profile(baseline);
  sim::Engine reference(cluster_, window.jobs, options_.engine);
  if (warm_jobs_ == 0) {
    reference.run(*scheduler);
  } else {
    sim::WarmStart warm(*warmup_, *scheduler, agent_from_);
    reference.run(warm);
  }
  baseline_score_ = score(reference, options_.score, warm_jobs_);
  engine_ = std::make_unique<sim::Engine>(cluster_, window.jobs, options_.engine);
  if (options_.profile.priority_options.serves_heads) engine_->follow_published_loop();  // as the baseline's run()
  if (warm_jobs_ > 0) warmup_->begin_run(*engine_);
  agent_.begin_run();
  pass_.begin(*engine_);
  agent_score_ = 0;
  // Only a window whose every job is rejected at admission (wrong VC, GPU type or size for this
  // cluster) leaves nothing to decide: the trace does not fit the cluster.
  if (!next_decision())
    throw InputError(fmt::format("window {}:{}: none of its jobs can run on cluster {} (each is rejected at admission; "
                                 "`rltune trace-stats --cluster ...` tells why)",
                                 start, options_.window.length, cluster_.name));
  return observation();
}

bool Env::next_decision() {
  for (;;) {
    if (engine_->now() < agent_from_) {  // the warm-up: fcfs decides until the window's first job arrives
      if (!engine_->queue().empty()) warmup_->decide(*engine_);
    } else if (agent_.await_pick(pass_)) {
      return true;
    }
    if (!engine_->advance()) return false;
    pass_.begin(*engine_);
  }
}

Env::Step Env::step(int slot) {
  if (!agent_.pick(pass_, slot)) {  // the agent waits
    RLTUNE_CHECK(engine_->advance(), "skip is allowed only while something is still to happen");
    pass_.begin(*engine_);
  }
  return finish_step();
}

Env::Step Env::finish_step() {
  if (next_decision()) return {};
  agent_score_ = score(*engine_, options_.score, warm_jobs_);
  const double base = baseline_score_, rl = agent_score_;
  return {true, (base - rl) / std::max({base, rl, 1.0})};
}

}  // namespace rltune::rl
