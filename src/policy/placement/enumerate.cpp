#include "policy/placement/enumerate.h"

#include <algorithm>

namespace rltune::policy {

PoolSnapshot snapshot(const cluster::ClusterState& state, PoolId pool, const cluster::Request& request) {
  const auto& spec = state.spec().pools[pool];
  PoolSnapshot s{pool, spec.first_node, spec.gpus_per_node, state.pool_free(pool), {}, cluster::fewest_nodes(spec, request)};
  if (cluster::other_resources_bind(spec, request))
    for (NodeId n = spec.first_node; n < spec.first_node + spec.nodes; ++n) s.caps.push_back(state.max_share(n, request));
  return s;
}

namespace {

struct Group {
  int free;
  int cap;                  // the most GPUs of the request one of these nodes can take
  std::vector<NodeId> ids;  // ascending
};

struct PatternPart {
  int group;
  int k;
  std::vector<int> shares;  // non-increasing, k entries
};

class Enumerator {
 public:
  Enumerator(const PoolSnapshot& pool, int gpus, bool relax,
             const std::function<void(std::span<const cluster::Share>)>& emit)
      : emit_(emit) {
    const int gpn = pool.gpus_per_node;
    std::vector<std::vector<NodeId>> by_free(gpn + 1);  // one pass over the nodes, ids stay ascending
    int usable = 0;
    for (std::size_t i = 0; i < pool.free.size(); ++i)
      if (pool.cap(i) > 0) {
        by_free[pool.free[i]].push_back(pool.first_node + static_cast<NodeId>(i));
        ++usable;
      }
    const auto cap = [&](NodeId n) { return pool.cap(static_cast<std::size_t>(n - pool.first_node)); };
    for (int c = gpn; c >= 1; --c) {
      auto& ids = by_free[c];
      // Split by what the nodes can take, most first (one group when CPUs and memory do not bind).
      if (!pool.caps.empty()) std::stable_sort(ids.begin(), ids.end(), [&](NodeId a, NodeId b) { return cap(a) > cap(b); });
      for (auto it = ids.begin(); it != ids.end();) {
        const auto end = std::find_if(it, ids.end(), [&](NodeId n) { return cap(n) != cap(*it); });
        groups_.push_back({c, cap(*it), {it, end}});
        it = end;
      }
    }
    nmin_ = pool.fewest;
    if (nmin_ > usable) return;  // too few nodes can take a share
    nmax_ = relax ? std::min(nmin_ + 1, usable) : nmin_;
    rec(0, gpus, 0);
  }

 private:
  void rec(int g, int rem, int used) {
    if (rem == 0) {
      if (used >= nmin_ && used <= nmax_) output();
      return;
    }
    if (g == static_cast<int>(groups_.size())) return;
    rec(g + 1, rem, used);
    const int cap = groups_[g].cap;
    const int kmax = std::min({static_cast<int>(groups_[g].ids.size()), nmax_ - used, rem});
    for (int k = 1; k <= kmax; ++k) {
      const int total = std::min(k * cap, rem);
      plan_.push_back({g, k, {}});
      partitions(total, k, cap, g, rem - total, used + k);
      plan_.pop_back();
    }
  }

  // Every non-increasing vector of k positive ints <= cap summing to total, largest first element first.
  void partitions(int total, int k, int cap, int g, int rem_after, int used_after) {
    // By index, not reference: the recursion below appends to plan_ and may reallocate it.
    const std::size_t part = plan_.size() - 1;
    if (k == 0) {
      if (total == 0) rec(g + 1, rem_after, used_after);
      return;
    }
    const int hi = std::min(cap, total - (k - 1));
    const int lo = (total + k - 1) / k;
    for (int first = hi; first >= lo; --first) {
      plan_[part].shares.push_back(first);
      partitions(total - first, k - 1, first, g, rem_after, used_after);
      plan_[part].shares.pop_back();
    }
  }

  void output() {
    out_.clear();
    for (const auto& part : plan_)
      for (int i = 0; i < part.k; ++i) out_.push_back({groups_[part.group].ids[i], part.shares[i]});
    std::sort(out_.begin(), out_.end());
    emit_(out_);
  }

  const std::function<void(std::span<const cluster::Share>)>& emit_;
  std::vector<Group> groups_;
  std::vector<PatternPart> plan_;
  std::vector<cluster::Share> out_;
  int nmin_ = 0, nmax_ = 0;
};

}  // namespace

void enumerate(const PoolSnapshot& pool, int gpus, bool relax,
               const std::function<void(std::span<const cluster::Share>)>& emit) {
  if (gpus <= 0) return;
  Enumerator(pool, gpus, relax, emit);
}

namespace {

// Change in the pool's partially free nodes if `shares` were placed.
int frag_delta(const PoolSnapshot& pool, std::span<const cluster::Share> shares) {
  int delta = 0;
  for (const auto& s : shares) {
    const int before = pool.free[static_cast<std::size_t>(s.node - pool.first_node)], after = before - s.gpus;
    delta += (after > 0 && after < pool.gpus_per_node) - (before < pool.gpus_per_node);
  }
  return delta;
}

// The tier of a pattern over `nodes_used` nodes: 1, 2 (relax only: one node more and no more partially
// free nodes) or 0 (neither). `frag` is called only when it matters.
template <typename Frag>
int tier_of(const PoolSnapshot& pool, bool relax, int nodes_used, const Frag& frag) {
  if (nodes_used == pool.fewest) return 1;
  return relax && nodes_used == pool.fewest + 1 && frag() <= 0 ? 2 : 0;
}

}  // namespace

TierSizes count_tiers(const PoolSnapshot& pool, int gpus, bool relax) {
  TierSizes out;
  enumerate(pool, gpus, relax, [&](std::span<const cluster::Share> shares) {
    const int tier = tier_of(pool, relax, static_cast<int>(shares.size()), [&] { return frag_delta(pool, shares); });
    out.tier1 += tier == 1;
    out.tier2 += tier == 2;
  });
  return out;
}

void collect_candidates(const PoolSnapshot& pool, int gpus, bool relax, Candidates& out) {
  const long long g = pool.gpus_per_node;
  // Sums over the nodes with free GPUs (the reference's free list); y = used GPUs of a node.
  long long n = 0, waste = 0, y1 = 0, y2 = 0;
  for (const int x : pool.free)
    if (x > 0) {
      ++n;
      if (x < g) waste += g - x;
      y1 += g - x;
      y2 += (g - x) * (g - x);
    }
  const long long var_before = n * y2 - y1 * y1;  // = n^2 g^2 Var(u): exact in integers
  enumerate(pool, gpus, relax, [&](std::span<const cluster::Share> shares) {
    ++out.assignments;
    Candidate c;
    c.placement.pool = pool.pool;
    c.placement.shares.assign(shares.begin(), shares.end());
    c.nodes_used = static_cast<int>(shares.size());
    long long w2 = waste, s1 = y1, s2 = y2;
    for (const auto& s : shares) {
      const long long before = pool.free[s.node - pool.first_node], after = before - s.gpus;
      w2 += (after > 0 && after < g ? g - after : 0) - (before < g ? g - before : 0);
      s1 += s.gpus;
      s2 += (g - after) * (g - after) - (g - before) * (g - before);
    }
    c.frag_delta = frag_delta(pool, shares);
    c.waste_delta = static_cast<int>(w2 - waste);
    c.lb = n <= 1 ? 0.0 : static_cast<double>(n * s2 - s1 * s1 - var_before) / static_cast<double>(n * n * g * g);
    const int tier = tier_of(pool, relax, c.nodes_used, [&] { return c.frag_delta; });
    if (tier == 1) out.tier1.push_back(std::move(c));
    else if (tier == 2) out.tier2.push_back(std::move(c));
  });
}

namespace {

bool node_ids_less(const Candidate& a, const Candidate& b) {
  return std::lexicographical_compare(a.placement.shares.begin(), a.placement.shares.end(), b.placement.shares.begin(),
                                      b.placement.shares.end(),
                                      [](const cluster::Share& x, const cluster::Share& y) { return x.node < y.node; });
}

}  // namespace

void sort_defrag(std::vector<Candidate>& c) {
  std::stable_sort(c.begin(), c.end(), [](const Candidate& a, const Candidate& b) {
    if (a.frag_delta != b.frag_delta) return a.frag_delta < b.frag_delta;
    if (a.waste_delta != b.waste_delta) return a.waste_delta < b.waste_delta;
    if (a.lb != b.lb) return a.lb < b.lb;
    if (a.nodes_used != b.nodes_used) return a.nodes_used < b.nodes_used;
    return node_ids_less(a, b);
  });
}

void sort_balance(std::vector<Candidate>& c) {
  std::stable_sort(c.begin(), c.end(), [](const Candidate& a, const Candidate& b) {
    if (a.lb != b.lb) return a.lb < b.lb;
    if (a.frag_delta != b.frag_delta) return a.frag_delta < b.frag_delta;
    if (a.waste_delta != b.waste_delta) return a.waste_delta < b.waste_delta;
    if (a.nodes_used != b.nodes_used) return a.nodes_used < b.nodes_used;
    return node_ids_less(a, b);
  });
}

bool lexicographically_less(std::span<const cluster::Share> a, std::span<const cluster::Share> b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace rltune::policy
