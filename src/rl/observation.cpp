#include "rl/observation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "policy/placement/enumerate.h"

namespace rltune::rl {

namespace {

constexpr float kEmpty[kMaxFeatures] = {0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1};

double bounded(double v) { return std::clamp(v, 0.0, 1.0 - kEps); }

}  // namespace

std::size_t ObservationCache::KeyHash::operator()(const Key& k) const {
  std::size_t h = std::hash<long long>()(k.request.memory_mib);
  for (const long long v : {static_cast<long long>(k.pool), static_cast<long long>(k.request.gpus), static_cast<long long>(k.request.cpus)})
    h = h * 1000003 ^ std::hash<long long>()(v);
  return h;
}

ObservationCache::Tiers ObservationCache::tiers(const cluster::ClusterState& state, PoolId pool, const cluster::Request& request) {
  // Where CPUs and memory do not bind, requests of one GPU count have the same candidates.
  const Key key{pool, cluster::other_resources_bind(state.spec().pools[pool], request) ? request : cluster::Request(request.gpus)};
  for (const auto& [k, t] : seen_)
    if (k == key) return t;
  const std::uint64_t stamp = state.pool_stamp(pool);
  auto [it, fresh] = tiers_.try_emplace(key, Counted{stamp, {}});
  if (fresh || it->second.stamp != stamp) {
    const policy::TierSizes n = policy::count_tiers(policy::snapshot(state, pool, request), request.gpus, /*relax=*/true);
    it->second = {stamp, {n.tier1, n.tier2}};
  }
  seen_.emplace_back(key, it->second.tiers);
  // Entries of pools that have changed since are dead weight: a long run keeps only the recent ones.
  if (tiers_.size() > 4096) tiers_.clear();
  return seen_.back().second;
}

float ObservationCache::runtime(JobIndex j, Seconds estimate, double runtime_scale_s) {
  constexpr Seconds kNone = std::numeric_limits<Seconds>::min();
  if (runtime_scale_s != runtime_scale_s_) {
    runtime_.clear();
    runtime_scale_s_ = runtime_scale_s;
  }
  const auto i = static_cast<std::size_t>(j);
  if (i >= runtime_.size()) runtime_.resize(i + 1, {kNone, 0.0f});
  auto& [known, feature] = runtime_[i];
  if (known != estimate) {
    known = estimate;
    feature = static_cast<float>(bounded(std::log1p(static_cast<double>(estimate)) / std::log1p(runtime_scale_s)));
  }
  return feature;
}

void select_visible(const sim::View& view, std::span<const JobIndex> order, Observation& out, const ObservationOptions& options) {
  out.features = feature_count(options.features);
  out.visible = 0;
  out.jobs.fill(-1);
  out.mask.fill(0);
  for (const JobIndex j : order) {
    if (out.visible == kSlots) break;
    if (view.job(j).queued()) {
      out.mask[static_cast<std::size_t>(out.visible)] = 1;
      out.jobs[static_cast<std::size_t>(out.visible++)] = j;
    }
  }
}

void describe_visible(const sim::View& view, Observation& out, const ObservationOptions& options, ObservationCache& cache) {
  const cluster::ClusterState& state = view.cluster();
  const auto& pools = view.cluster_spec().pools;
  cache.begin();
  const int nf = out.features;
  // S: GPUs asked by the visible jobs with the same eligible pools, summed once per distinct pool set
  // (there are few; comparing every pair of slots took most of the observation's time).
  struct PoolSetDemand {
    const std::vector<PoolId>* pools;
    double gpus;
  };
  std::vector<PoolSetDemand> demand;
  std::array<std::size_t, kSlots> demand_of{};
  for (int k = 0; k < out.visible; ++k) {
    const sim::JobView job = view.job(out.jobs[static_cast<std::size_t>(k)]);
    auto d = std::find_if(demand.begin(), demand.end(), [&](const PoolSetDemand& x) { return *x.pools == job.eligible(); });
    if (d == demand.end()) d = demand.insert(demand.end(), {&job.eligible(), 0.0});
    d->gpus += job.gpus();
    demand_of[static_cast<std::size_t>(k)] = static_cast<std::size_t>(d - demand.begin());
  }
  // Free GPUs, GPUs, partly used nodes and nodes with free GPUs of each pool, counted once.
  struct PoolLoad {
    double free = 0, capacity = 0, partial = 0, with_free = 0;
  };
  std::vector<PoolLoad> load(pools.size());
  for (std::size_t p = 0; p < pools.size(); ++p) {
    load[p].free = static_cast<double>(state.pool_free_total(static_cast<PoolId>(p)));
    load[p].capacity = static_cast<double>(pools[p].total_gpus());
    for (const int n : state.pool_free(static_cast<PoolId>(p))) {
      load[p].partial += n > 0 && n < pools[p].gpus_per_node;
      load[p].with_free += n > 0;
    }
  }
  // Each visible job's age rank: how many visible jobs are older (ties: the earlier slot counts as
  // older), from one sort rather than by comparing every pair of slots.
  std::array<int, kSlots> older{};
  const bool extended = nf >= kExtendedFeatures;
  if (extended) {
    std::array<Seconds, kSlots> submit{};
    std::array<int, kSlots> by_age{};
    for (int k = 0; k < out.visible; ++k) submit[static_cast<std::size_t>(k)] = view.job(out.jobs[static_cast<std::size_t>(k)]).submit();
    std::iota(by_age.begin(), by_age.begin() + out.visible, 0);
    std::sort(by_age.begin(), by_age.begin() + out.visible, [&](int a, int b) {
      const Seconds sa = submit[static_cast<std::size_t>(a)], sb = submit[static_cast<std::size_t>(b)];
      return sa < sb || (sa == sb && a < b);
    });
    for (int r = 0; r < out.visible; ++r) older[static_cast<std::size_t>(by_age[static_cast<std::size_t>(r)])] = r;
  }
  for (int slot = 0; slot < kSlots; ++slot) {
    float* f = out.values.data() + static_cast<std::size_t>(slot) * nf;
    if (slot >= out.visible) {
      std::copy(kEmpty, kEmpty + nf, f);
      continue;
    }
    const JobIndex j = out.jobs[static_cast<std::size_t>(slot)];
    const sim::JobView job = view.job(j);
    const int gpus = job.gpus();
    double free = 0, capacity = 0, partial = 0, with_free = 0;
    std::size_t tier1 = 0, tier2 = 0;
    for (const PoolId p : job.eligible()) {
      const PoolLoad& l = load[static_cast<std::size_t>(p)];
      free += l.free;
      capacity += l.capacity;
      partial += l.partial;
      with_free += l.with_free;
      const ObservationCache::Tiers t = cache.tiers(state, p, job.request());
      tier1 += t.tier1;
      tier2 += t.tier2;
    }
    const double asked = demand[demand_of[static_cast<std::size_t>(slot)]].gpus;
    const int ways = (tier1 > 1 ? 2 : tier1 == 1 ? 1 : 0) + (tier2 > 0 ? 1 : 0);
    f[0] = static_cast<float>(bounded(static_cast<double>(view.now() - job.submit()) / options.wait_scale_s));
    f[1] = static_cast<float>(bounded(gpus / options.size_scale));
    f[2] = static_cast<float>(bounded(gpus / std::max(free, kEps) / std::max(capacity, 1.0)));
    f[3] = static_cast<float>(bounded((free - asked + capacity) / (2 * capacity + kEps)));
    f[4] = static_cast<float>(bounded(partial / std::max(with_free, kEps)));
    f[5] = static_cast<float>(ways == 0 ? kEps : bounded(ways / 3.0));
    f[6] = static_cast<float>(tier1 == 0 ? kEps : ways >= 2 ? 1 - kEps : 0.5);
    if (extended) {
      f[7] = cache.runtime(j, job.estimate(), options.runtime_scale_s);
      f[8] = static_cast<float>(out.visible > 1 ? bounded(older[static_cast<std::size_t>(slot)] / static_cast<double>(out.visible - 1)) : 0.0);
      f[9] = static_cast<float>(bounded(1 - free / std::max(capacity, 1.0)));
    }
    if (nf >= kRankedFeatures) f[10] = static_cast<float>(out.visible > 1 ? bounded(slot / static_cast<double>(out.visible - 1)) : 0.0);
    if (nf >= kRealisticFeatures) {
      const float doubt = job.estimate_doubt();
      f[11] = static_cast<float>(doubt == sim::EstimateDoubt::kUnknown ? 1 - kEps : bounded(doubt / 3.0));
      constexpr double kLastSource = static_cast<double>(sim::kEstimateSourceNames.entries.size() - 1);
      f[12] = static_cast<float>(bounded(static_cast<double>(job.estimate_source()) / kLastSource));
    }
  }
}

void observe(const sim::View& view, std::span<const JobIndex> order, Observation& out, const ObservationOptions& options) {
  select_visible(view, order, out, options);
  ObservationCache cache;
  describe_visible(view, out, options, cache);
}

}  // namespace rltune::rl
