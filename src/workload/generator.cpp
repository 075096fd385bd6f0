#include "workload/generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/log.h"
#include "core/memory.h"
#include "core/rng.h"

namespace rltune::workload {

namespace {

// Where generated jobs may go: a pool (or, without affinity, the whole cluster) and the GPU counts it takes.
struct Target {
  std::string vc, gpu_type;      // set on the job when pools are told apart by VC or type
  std::vector<int> sizes;        // indices into model.sizes that fit
  std::vector<double> cumulative;  // cumulative conditional shares of those sizes
  double weight = 0;             // probability of choosing this target
};

// One target per pool when pools are told apart by VC or GPU type; else one target for the whole cluster.
// A job carries its target's labels, and its GPU count is drawn among the counts the target's pools
// accept for a job with those labels (cluster::accepts), so every generated job is eligible somewhere.
std::vector<Target> targets_for(const WorkloadModel& model, const cluster::ClusterSpec& cluster) {
  const auto& pools = cluster.pools;
  const bool any_vc = std::any_of(pools.begin(), pools.end(), [](const auto& p) { return !p.accepts.vc.empty(); });
  std::set<std::string> types;
  for (const auto& p : pools) types.insert(p.gpu_type);
  const bool distinct_types = pools.size() > 1 && types.size() == pools.size() && !types.count("");
  std::vector<Target> targets;
  const auto add_target = [&](const std::vector<const cluster::PoolSpec*>& members, Target t) {
    double share = 0, work = 0;
    trace::JobSpec probe;
    probe.vc = t.vc;
    if (!t.gpu_type.empty()) probe.gpu_types = {t.gpu_type};
    int capacity = 0;
    for (const auto* p : members) capacity += p->total_gpus();
    for (std::size_t s = 0; s < model.sizes.size(); ++s) {
      const auto& size = model.sizes[s];
      probe.gpus = size.gpus;
      const bool fits = std::any_of(members.begin(), members.end(), [&](const auto* p) {
        return cluster::accepts(*p, probe) && size.gpus <= p->total_gpus();
      });
      if (size.share <= 0 || !fits) continue;
      t.sizes.push_back(static_cast<int>(s));
      share += size.share;
      t.cumulative.push_back(share);
      work += size.share * size.gpus * mean_duration(size);
    }
    if (share <= 0) return;  // no GPU count of the model fits: the target gets no jobs
    for (auto& c : t.cumulative) c /= share;
    t.cumulative.back() = 1.0;
    // Equal offered load per target: jobs in proportion to capacity over mean work per job. A model whose
    // durations are all zero has no work to balance: capacity alone decides.
    t.weight = work > 0 ? capacity / (work / share) : capacity;
    targets.push_back(std::move(t));
  };
  if (any_vc || distinct_types) {
    for (const auto& p : pools) {
      Target t;
      if (!p.accepts.vc.empty()) t.vc = p.accepts.vc.front();
      if (distinct_types) t.gpu_type = p.gpu_type;
      add_target({&p}, std::move(t));
    }
  } else {
    std::vector<const cluster::PoolSpec*> all;
    for (const auto& p : pools) all.push_back(&p);
    add_target(all, Target{});
  }
  if (targets.empty())
    throw InputError(fmt::format("workload {}: no GPU count of the model fits any pool of cluster {}", model.name, cluster.name));
  double total = 0;
  for (const auto& t : targets) total += t.weight;
  for (auto& t : targets) t.weight /= total;
  return targets;
}

// Operational time at clock time t: the integral of the hourly weights (mean 1 over a day).
double operational_at(const WorkloadModel& model, double t) {
  const auto whole_hours = static_cast<long long>(t / 3600);
  double op = static_cast<double>(whole_hours / 24) * 24 * 3600;  // whole days: the weights average 1
  for (long long h = whole_hours / 24 * 24; h < whole_hours; ++h) op += model.hourly_weights[static_cast<std::size_t>(h % 24)] * 3600;
  return op + model.hourly_weights[static_cast<std::size_t>(whole_hours % 24)] * (t - static_cast<double>(whole_hours) * 3600);
}

// prefix + number zero-padded to `width` digits ("job0000042"): ids are made a million at a time, and
// fmt::format costs more than the rest of a job's generation.
std::string label(const char* prefix, long long number, int width) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, number).ptr;
  const int length = static_cast<int>(end - digits);
  std::string out(prefix);
  out.append(static_cast<std::size_t>(std::max(0, width - length)), '0');
  out.append(digits, end);
  return out;
}

std::size_t pick(const std::vector<double>& cumulative, double u) {
  const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
  return std::min<std::size_t>(static_cast<std::size_t>(it - cumulative.begin()), cumulative.size() - 1);
}

// The users of UserBehaviour: each belongs to a target and owns job templates for it.
class Users {
 public:
  Users(const WorkloadModel& model, const std::vector<Target>& targets, const std::vector<double>& target_cumulative, Rng& rng)
      : behaviour_(model.user_behaviour), of_target_(targets.size()), cumulative_(targets.size()) {
    const auto n = static_cast<std::size_t>(model.users);
    templates_.resize(n);
    for (std::size_t u = 0; u < n; ++u) {
      // The first users go one to each target, so that every target has a user; the rest by target weight.
      const std::size_t home = u < targets.size() ? u : pick(target_cumulative, rng.uniform());
      of_target_[home].push_back(u);
      const double weight = 1.0 / std::pow(static_cast<double>(u + 1), behaviour_.activity_skew);
      cumulative_[home].push_back((cumulative_[home].empty() ? 0 : cumulative_[home].back()) + weight);
      for (int k = 0; k < behaviour_.templates; ++k) {
        const Target& t = targets[home];
        const auto size = static_cast<std::size_t>(t.sizes[pick(t.cumulative, rng.uniform())]);
        templates_[u].push_back({size, rng.normal()});
      }
    }
    for (auto& c : cumulative_)
      for (double& x : c) x /= c.back();
  }

  struct Job {
    std::size_t user;
    std::size_t size;   // index into model.sizes
    double duration;    // seconds
  };
  // A job for `target`: a user of it by activity, then one of the user's templates or a fresh draw.
  Job draw(const WorkloadModel& model, std::size_t target, const Target& t, Rng& rng) const {
    const auto fresh_size = [&] { return static_cast<std::size_t>(t.sizes[pick(t.cumulative, rng.uniform())]); };
    if (of_target_[target].empty()) {  // more targets than users: anyone, drawn afresh
      const auto user = static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(templates_.size()) - 1));
      const std::size_t size = fresh_size();
      return {user, size, duration_at(model.sizes[size], rng.uniform())};
    }
    const std::size_t user = of_target_[target][pick(cumulative_[target], rng.uniform())];
    if (rng.uniform() < behaviour_.repeat) {
      const auto& [size, z] = templates_[user][static_cast<std::size_t>(rng.uniform_int(0, behaviour_.templates - 1))];
      const double rho = behaviour_.duration_correlation;
      const double score = rho * z + std::sqrt(1 - rho * rho) * rng.normal();  // N(0, 1) again
      return {user, size, duration_at(model.sizes[size], 0.5 * std::erfc(-score / std::sqrt(2.0)))};
    }
    const std::size_t size = fresh_size();
    return {user, size, duration_at(model.sizes[size], rng.uniform())};
  }

 private:
  struct Template {
    std::size_t size;
    double z;  // the normal score its jobs' durations centre on
  };
  UserBehaviour behaviour_;
  std::vector<std::vector<std::size_t>> of_target_;  // users by home target, in rank order
  std::vector<std::vector<double>> cumulative_;      // their cumulative activity shares
  std::vector<std::vector<Template>> templates_;     // per user
};

}  // namespace

trace::Trace generate(const WorkloadModel& model, const cluster::ClusterSpec& cluster, const GenerateOptions& o) {
  if (o.jobs < kMinJobs || o.jobs > kMaxJobs)
    throw InputError(fmt::format("generate: jobs {} must be between {} and {}", o.jobs, kMinJobs, kMaxJobs));
  if (!(o.load >= kMinLoad && o.load <= kMaxLoad))
    throw InputError(fmt::format("generate: load {} must be between {} and {}", o.load, kMinLoad, kMaxLoad));
  const std::vector<Target> targets = targets_for(model, cluster);
  std::vector<double> target_cumulative;
  double acc = 0;
  for (const auto& t : targets) target_cumulative.push_back(acc += t.weight);
  target_cumulative.back() = 1.0;  // rounding must never leave a draw past the last target

  Rng rng(o.seed);
  trace::Trace trace;
  trace.source = fmt::format("generated(like={},jobs={},load={},seed={},cluster={})", model.name, o.jobs, o.load,
                             o.seed, cluster.name);
  trace.format = "generated";
  trace.jobs.reserve(static_cast<std::size_t>(o.jobs));
  advise_huge_pages(trace.jobs.data(), trace.jobs.capacity() * sizeof(trace::JobSpec));
  trace.jobs.resize(static_cast<std::size_t>(o.jobs));
  double work = 0;
  const std::optional<Users> users =
      model.user_behaviour.on() ? std::optional<Users>(std::in_place, model, targets, target_cumulative, rng) : std::nullopt;
  for (int i = 0; i < o.jobs; ++i) {
    trace::JobSpec& j = trace.jobs[static_cast<std::size_t>(i)];
    const std::size_t target_index = pick(target_cumulative, rng.uniform());
    const Target& target = targets[target_index];
    j.id = label("job", i, 7);
    j.source_line = i + 1;
    std::size_t user = 0;
    if (users) {
      const Users::Job drawn = users->draw(model, target_index, target, rng);
      j.gpus = model.sizes[drawn.size].gpus;
      j.duration = std::llround(drawn.duration);
      user = drawn.user;
    } else {
      const SizeClass& size = model.sizes[static_cast<std::size_t>(target.sizes[pick(target.cumulative, rng.uniform())])];
      j.gpus = size.gpus;
      j.duration = std::llround(duration_at(size, rng.uniform()));
    }
    const double estimate = static_cast<double>(j.duration) * (1 + (model.max_overestimate - 1) * rng.uniform());
    const auto rounds = static_cast<long long>(std::ceil(estimate / static_cast<double>(model.estimate_round_s)));
    j.requested_time = std::max(1LL, rounds) * model.estimate_round_s;
    if (j.requested_time > trace::kMaxTime)  // a trace that no reader, rltune's included, would take back
      throw InputError(fmt::format("workload {}: a job's time limit of {} s is past the {} s a trace may hold: lower its "
                                   "max_overestimate or its durations",
                                   model.name, j.requested_time, trace::kMaxTime));
    j.vc = target.vc;
    if (!target.gpu_type.empty()) j.gpu_types = {target.gpu_type};
    j.user = label("u", users ? static_cast<std::int64_t>(user) + 1 : rng.uniform_int(1, model.users), 0);
    work += static_cast<double>(j.duration) * j.gpus;
  }

  // Arrivals: a Poisson process in "operational time" mapped to clock time through the daily cycle
  // (the clock runs slower where the hourly weight is high). The gaps are then scaled so that the clock
  // span is exactly work / (load x cluster GPUs): the offered load is the target even for short traces.
  // The clock starts at the cycle's first hour with arrivals, so that empty hours before it do not
  // shorten the span.
  if (work <= 0) throw InputError(fmt::format("workload {}: every generated duration is 0, so no load can be set", model.name));
  std::vector<double> operational(trace.jobs.size(), 0);
  for (std::size_t i = 1; i < operational.size(); ++i) operational[i] = operational[i - 1] + rng.exponential(1.0);
  const double span = work / (o.load * cluster.total_gpus());
  const auto first_hour = static_cast<double>(std::ranges::find_if(model.hourly_weights, [](double w) { return w > 0; }) -
                                              model.hourly_weights.begin());
  if (first_hour * 3600 + span > static_cast<double>(trace::kMaxTime))  // and the hour-by-hour walk below would not end
    throw InputError(fmt::format("workload {}: {} jobs at load {} on {} GPUs would arrive over {:.3g} s, past the {} s a trace "
                                 "may span: raise the load, or use fewer or shorter jobs",
                                 model.name, o.jobs, o.load, cluster.total_gpus(), span, trace::kMaxTime));
  const double op_start = operational_at(model, first_hour * 3600), op_end = operational_at(model, first_hour * 3600 + span);
  const double scale = operational.back() > 0 ? (op_end - op_start) / operational.back() : 0;
  double hour_start_op = 0;
  long long hour = 0;
  for (std::size_t i = 0; i < trace.jobs.size(); ++i) {
    const double op = std::min(op_start + operational[i] * scale, op_end);
    double w = model.hourly_weights[static_cast<std::size_t>(hour % 24)];
    // Within rounding of an hour's end, the job stays in that hour: past empty hours it would land a
    // day later (the sum of hours drifts from operational_at by an ulp or so).
    while (w <= 0 || hour_start_op + w * 3600 < op * (1 - 1e-9)) {
      hour_start_op += w * 3600;
      ++hour;
      w = model.hourly_weights[static_cast<std::size_t>(hour % 24)];
    }
    const double clock = static_cast<double>(hour) * 3600 + (op - hour_start_op) / w;
    trace.jobs[i].submit = std::llround(clock);
  }
  const Seconds first = trace.jobs.front().submit;
  for (auto& j : trace.jobs) j.submit -= first;
  // A span that ends in hours without arrivals stops at the last hour with them: fewer hours, more load
  // (1 s spared for the rounding to whole seconds).
  if (const auto arrived = static_cast<double>(trace.jobs.back().submit); trace.jobs.size() > 1 && arrived < 0.99 * span - 1)
    spdlog::warn("workload {}: its daily cycle has hours without arrivals, so the {} jobs arrive over {:.0f} s, not the {:.0f} s "
                 "that load {} needs: the offered load is {:.3g}",
                 model.name, trace.jobs.size(), arrived, span, o.load, o.load * span / std::max(arrived, 1.0));
  return trace;
}

}  // namespace rltune::workload
