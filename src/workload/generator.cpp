#include "workload/generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
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

int largest_job(const cluster::PoolSpec& pool) {
  const int total = pool.total_gpus();
  return pool.accepts.max_gpus > 0 ? std::min(pool.accepts.max_gpus, total) : total;
}

bool fits(const cluster::PoolSpec& pool, int gpus) { return gpus >= pool.accepts.min_gpus && gpus <= largest_job(pool); }

// One target per pool when every pool names its VCs or every pool has its own GPU type; else one target.
std::vector<Target> targets_for(const WorkloadModel& model, const cluster::ClusterSpec& cluster) {
  const auto& pools = cluster.pools;
  const bool by_vc = pools.size() > 1 && std::all_of(pools.begin(), pools.end(), [](const auto& p) { return !p.accepts.vc.empty(); });
  std::set<std::string> types;
  for (const auto& p : pools) types.insert(p.gpu_type);
  const bool by_type = !by_vc && pools.size() > 1 && types.size() == pools.size() && !types.count("");
  std::vector<Target> targets;
  const auto add_target = [&](const std::vector<const cluster::PoolSpec*>& members, Target t) {
    double share = 0, work = 0;
    for (std::size_t s = 0; s < model.sizes.size(); ++s) {
      const auto& size = model.sizes[s];
      if (size.share <= 0 || std::none_of(members.begin(), members.end(), [&](const auto* p) { return fits(*p, size.gpus); }))
        continue;
      t.sizes.push_back(static_cast<int>(s));
      share += size.share;
      t.cumulative.push_back(share);
      work += size.share * size.gpus * mean_duration(size);
    }
    int capacity = 0;
    for (const auto* p : members) capacity += p->total_gpus();
    // Equal offered load per target: jobs in proportion to capacity over mean work per job.
    if (share > 0 && work > 0) t.weight = capacity / (work / share);
    for (auto& c : t.cumulative) c /= share;
    targets.push_back(std::move(t));
  };
  if (by_vc || by_type) {
    for (const auto& p : pools) {
      Target t;
      if (by_vc) t.vc = p.accepts.vc.front();
      else t.gpu_type = p.gpu_type;
      add_target({&p}, std::move(t));
    }
  } else {
    std::vector<const cluster::PoolSpec*> all;
    for (const auto& p : pools) all.push_back(&p);
    add_target(all, Target{});
  }
  double total = 0;
  for (const auto& t : targets) total += t.weight;
  if (total <= 0)
    throw InputError(fmt::format("workload {}: no GPU count of the model fits any pool of cluster {}", model.name, cluster.name));
  for (auto& t : targets) t.weight /= total;
  return targets;
}

std::size_t pick(const std::vector<double>& cumulative, double u) {
  const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
  return std::min<std::size_t>(static_cast<std::size_t>(it - cumulative.begin()), cumulative.size() - 1);
}

}  // namespace

trace::Trace generate(const WorkloadModel& model, const cluster::ClusterSpec& cluster, const GenerateOptions& o) {
  if (o.jobs < 1 || !(o.load > 0) || !std::isfinite(o.load))
    throw InputError("generate: --jobs must be at least 1 and --load positive");
  const std::vector<Target> targets = targets_for(model, cluster);
  std::vector<double> target_cumulative;
  double acc = 0;
  for (const auto& t : targets) target_cumulative.push_back(acc += t.weight);

  Rng rng(o.seed);
  trace::Trace trace;
  trace.source = fmt::format("generated(like={},jobs={},load={},seed={},cluster={})", model.name, o.jobs, o.load,
                             o.seed, cluster.name);
  trace.format = "generated";
  trace.jobs.resize(static_cast<std::size_t>(o.jobs));
  double work = 0;
  for (int i = 0; i < o.jobs; ++i) {
    trace::JobSpec& j = trace.jobs[static_cast<std::size_t>(i)];
    const Target& target = targets[pick(target_cumulative, rng.uniform())];
    const SizeClass& size = model.sizes[static_cast<std::size_t>(target.sizes[pick(target.cumulative, rng.uniform())])];
    j.id = fmt::format("job{:07d}", i);
    j.source_line = i + 1;
    j.gpus = size.gpus;
    j.duration = std::llround(duration_at(size, rng.uniform()));
    const double estimate = static_cast<double>(j.duration) * (1 + (model.max_overestimate - 1) * rng.uniform());
    const auto rounds = static_cast<long long>(std::ceil(estimate / static_cast<double>(model.estimate_round_s)));
    j.requested_time = std::max(1LL, rounds) * model.estimate_round_s;
    j.vc = target.vc;
    if (!target.gpu_type.empty()) j.gpu_types = {target.gpu_type};
    j.user = fmt::format("u{}", rng.uniform_int(1, model.users));
    work += static_cast<double>(j.duration) * j.gpus;
  }

  // Arrivals: a Poisson process in "operational time" whose mean gap makes the offered load o.load,
  // mapped to clock time through the daily cycle (clock runs slower where the hourly weight is high).
  const double gap = o.jobs > 1 ? work / (o.load * cluster.total_gpus() * (o.jobs - 1)) : 0;
  double operational = 0, hour_start_op = 0;
  long long hour = 0;
  for (std::size_t i = 0; i < trace.jobs.size(); ++i) {
    if (i > 0) operational += rng.exponential(gap);
    double w = model.hourly_weights[static_cast<std::size_t>(hour % 24)];
    while (w <= 0 || hour_start_op + w * 3600 < operational) {
      hour_start_op += w * 3600;
      ++hour;
      w = model.hourly_weights[static_cast<std::size_t>(hour % 24)];
    }
    const double clock = static_cast<double>(hour) * 3600 + (operational - hour_start_op) / w;
    trace.jobs[i].submit = std::llround(clock);
  }
  const Seconds first = trace.jobs.front().submit;  // an empty first hour must not delay the start
  for (auto& j : trace.jobs) j.submit -= first;
  return trace;
}

}  // namespace rltune::workload
