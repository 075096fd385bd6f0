#include "rl/policy_net.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"

namespace rltune::rl {

namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const Matrix>;

// rows x in -> rows x out: X W^T + b, optionally ReLU.
Matrix apply(const Dense& d, const Matrix& x, bool relu) {
  const ConstMap w(d.weight.data(), d.out, d.in);
  const Eigen::Map<const Eigen::RowVectorXf> b(d.bias.data(), d.out);
  Matrix y = x * w.transpose();
  y.rowwise() += b;
  if (relu) y = y.cwiseMax(0.0f);
  return y;
}

Dense zeros(int in, int out) {
  return {in, out, std::vector<float>(static_cast<std::size_t>(in) * out, 0.0f), std::vector<float>(static_cast<std::size_t>(out), 0.0f)};
}

}  // namespace

PolicyNet PolicyNet::shaped(Arch arch, int features, bool skip) {
  PolicyNet net;
  net.arch = arch;
  net.features = features;
  net.skip = skip;
  if (arch == Arch::mlp) net.layers.push_back(zeros(features, kHidden1));
  else
    for (int i = 0; i < 3; ++i) net.layers.push_back(zeros(features, kHidden1));
  net.layers.push_back(zeros(kHidden1, kHidden2));
  net.layers.push_back(zeros(kHidden2, kHidden3));
  net.layers.push_back(zeros(kHidden3, 1));
  return net;
}

void PolicyNet::logits(const Observation& obs, std::span<float> out) const {
  RLTUNE_CHECK(out.size() >= static_cast<std::size_t>(kActions), "one logit per action");
  RLTUNE_CHECK(obs.features == features, fmt::format("the model expects {} features per slot, the observation has {}", features, obs.features));
  std::fill(out.begin(), out.end(), -std::numeric_limits<float>::infinity());
  if (skip && obs.mask[kSkip]) out[kSkip] = skip_logit;
  const int n = obs.visible;
  if (n == 0) return;
  const Matrix x = ConstMap(obs.values.data(), n, features);
  Matrix h;
  std::size_t next = 0;
  if (arch == Arch::mlp) {
    h = apply(layers[next++], x, true);
  } else {
    const Matrix q = apply(layers[0], x, true), k = apply(layers[1], x, true), v = apply(layers[2], x, true);
    next = 3;
    // n x n: every visible job is a key, a legal pick or not (a blocked job is context too, and the
    // simulator's rl policy sees the same), but padding never is.
    Matrix a = q * k.transpose();
    for (int r = 0; r < n; ++r) {
      const float m = a.row(r).maxCoeff();
      a.row(r) = (a.row(r).array() - m).exp();
      a.row(r) /= a.row(r).sum();
    }
    h = a * v;
  }
  h = apply(layers[next], h, true);
  h = apply(layers[next + 1], h, true);
  h = apply(layers[next + 2], h, false);
  for (int s = 0; s < n; ++s)
    if (obs.mask[static_cast<std::size_t>(s)]) out[static_cast<std::size_t>(s)] = h(s, 0);
}

int PolicyNet::argmax(const Observation& obs) const {
  std::array<float, kActions> l;
  logits(obs, l);
  return argmax(l, obs);
}

int PolicyNet::sample(const Observation& obs, Rng& rng, double& log_prob) const {
  std::array<float, kActions> l;
  logits(obs, l);
  return sample(l, obs, rng, log_prob);
}

namespace {

// The actions a decision may take, in index order: the visible slots, then skip if allowed. Masked
// slots have logit -infinity, so they weigh nothing.
int actions_of(const Observation& obs, std::array<int, kActions>& out) {
  int m = 0;
  for (int s = 0; s < obs.visible; ++s) out[static_cast<std::size_t>(m++)] = s;
  if (obs.mask[kSkip]) out[static_cast<std::size_t>(m++)] = kSkip;
  return m;
}

}  // namespace

void order_by_logits(std::span<const float> logits, int n, std::span<int> slots) {
  std::iota(slots.begin(), slots.begin() + n, 0);
  std::stable_sort(slots.begin(), slots.begin() + n,
                   [&](int a, int b) { return logits[static_cast<std::size_t>(a)] > logits[static_cast<std::size_t>(b)]; });
}

int PolicyNet::argmax(std::span<const float> l, const Observation& obs) {
  if (obs.visible == 0) return -1;
  std::array<int, kActions> actions;
  const int m = actions_of(obs, actions);
  int best = 0;
  for (int i = 0; i < m; ++i)
    if (l[static_cast<std::size_t>(actions[i])] > l[static_cast<std::size_t>(best)]) best = actions[i];  // ties: the lowest index
  return best;
}

int PolicyNet::sample(std::span<const float> l, const Observation& obs, Rng& rng, double& log_prob) {
  RLTUNE_CHECK(obs.visible > 0, "a decision has at least one queued job");
  std::array<int, kActions> actions;
  const int m = actions_of(obs, actions);
  double top = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < m; ++i) top = std::max<double>(top, l[static_cast<std::size_t>(actions[i])]);
  double total = 0;
  int chosen = -1;  // rounding fallback: the last legal action
  for (int i = 0; i < m; ++i) {
    total += std::exp(l[static_cast<std::size_t>(actions[i])] - top);
    if (obs.mask[static_cast<std::size_t>(actions[i])]) chosen = actions[i];
  }
  const double u = rng.uniform() * total;
  double cumulative = 0;
  for (int i = 0; i < m; ++i) {
    cumulative += std::exp(l[static_cast<std::size_t>(actions[i])] - top);
    if (u < cumulative) {
      chosen = actions[i];
      break;
    }
  }
  log_prob = l[static_cast<std::size_t>(chosen)] - top - std::log(total);
  return chosen;
}

nlohmann::json PolicyNet::to_json() const {
  nlohmann::json layers_json = nlohmann::json::array();
  for (const Dense& d : layers)
    layers_json.push_back({{"in", d.in}, {"out", d.out}, {"weight", d.weight}, {"bias", d.bias}});
  nlohmann::json j = {{"arch", to_string(arch)}, {"features", features}, {"layers", layers_json}};
  if (skip) j["skip_logit"] = skip_logit;
  return j;
}

PolicyNet PolicyNet::from_json(const nlohmann::json& j) {
  // Numbers are read as doubles and checked before any conversion: a file's 1e300 must be an error, not
  // an undefined cast to int or float.
  constexpr double kMaxWeight = 1e6;  // training never gets near it; beyond it the logits overflow
  const auto finite_within = [](double v, double bound) { return std::fabs(v) <= bound; };
  try {
    const double features = j.at("features").get<double>();
    if (features != kFeatures && features != kExtendedFeatures && features != kRankedFeatures &&
        features != kRealisticFeatures)
      throw InputError(fmt::format("the policy has {} features per slot; rltune knows {}, {}, {} and {}", features,
                                   kFeatures, kExtendedFeatures, kRankedFeatures, kRealisticFeatures));
    PolicyNet shape = shaped(parse_arch(j.at("arch").get<std::string>()), static_cast<int>(features));
    const auto& ls = j.at("layers");
    if (!ls.is_array() || ls.size() != shape.layers.size())
      throw InputError(fmt::format("the policy should have {} layers, it has {}", shape.layers.size(), ls.size()));
    for (std::size_t i = 0; i < ls.size(); ++i) {
      Dense& d = shape.layers[i];
      if (ls[i].at("in").get<double>() != d.in || ls[i].at("out").get<double>() != d.out)
        throw InputError(fmt::format("layer {} should be {}x{}", i, d.in, d.out));
      const auto weight = ls[i].at("weight").get<std::vector<double>>();
      const auto bias = ls[i].at("bias").get<std::vector<double>>();
      if (weight.size() != static_cast<std::size_t>(d.in) * d.out || bias.size() != static_cast<std::size_t>(d.out))
        throw InputError(fmt::format("layer {} has the wrong number of weights", i));
      for (const std::vector<double>* values : {&weight, &bias})
        for (const double w : *values)
          if (!finite_within(w, kMaxWeight))
            throw InputError(fmt::format("layer {} has a {} of {} (not finite or beyond +-1e6)", i,
                                         values == &weight ? "weight" : "bias", w));
      d.weight.assign(weight.begin(), weight.end());
      d.bias.assign(bias.begin(), bias.end());
    }
    if (j.contains("skip_logit")) {
      const double skip_logit = j.at("skip_logit").get<double>();
      if (!finite_within(skip_logit, kMaxWeight)) throw InputError("the skip logit is not finite or beyond +-1e6");
      shape.skip = true;
      shape.skip_logit = static_cast<float>(skip_logit);
    }
    return shape;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("malformed policy: ") + e.what());
  }
}

}  // namespace rltune::rl
