#pragma once
// The policy network's forward pass without torch (SPEC 6.3), for rollouts, evaluation and `rl:DIR` in
// the simulator: a plain copy of the weights the learner (rl/torch) trains, evaluated with Eigen on the
// visible slots only. A test checks it against LibTorch to 1e-5.
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "core/rng.h"
#include "rl/observation.h"

namespace rltune::rl {

// One dense layer, y = W x + b, in torch's nn::Linear layout.
struct Dense {
  int in = 0, out = 0;
  std::vector<float> weight;  // out x in, row-major
  std::vector<float> bias;    // out
};

enum class Arch {
  mlp,        // the paper's kernel policy: one MLP features-32-16-8-1 (ReLU) shared by every slot
  attention,  // --attention: per slot q, k, v = ReLU(Dense 32); softmax(q k^T) over the visible slots
              // (padding slots masked, unlike the reference); then 32-16-8-1 (ReLU) per slot
};
inline constexpr NameTable<Arch, 2> kArchNames{"policy architecture", {{{Arch::mlp, "mlp"}, {Arch::attention, "attention"}}}};
inline Arch parse_arch(const std::string& name) { return kArchNames.parse(name); }  // InputError for unknown names
inline const char* to_string(Arch value) { return kArchNames.name(value); }

// Hidden sizes of the paper's networks.
inline constexpr int kHidden1 = 32, kHidden2 = 16, kHidden3 = 8;

// slots[0, n) = 0..n-1 by descending logit, ties in slot order (how the `rl` policy ranks the visible jobs).
void order_by_logits(std::span<const float> logits, int n, std::span<int> slots);

struct PolicyNet {
  Arch arch = Arch::mlp;
  int features = kFeatures;
  // mlp: 4 layers (features-32, 32-16, 16-8, 8-1); attention: q, k, v (features-32), then 32-16, 16-8, 8-1.
  std::vector<Dense> layers;
  // --skip: the skip action's logit, one learned number (the reference has none that is reachable, B8).
  bool skip = false;
  float skip_logit = 0;

  // The layer shapes of `arch` with zero weights.
  static PolicyNet shaped(Arch arch, int features, bool skip = false);
  // Logits of the unmasked visible slots in out[0, visible) and of skip in out[kSkip] when the
  // observation allows it; masked actions get -infinity (out holds kActions). At least one visible slot
  // must be unmasked for sample() and argmax().
  void logits(const Observation& obs, std::span<float> out) const;
  // The highest-logit legal action (lowest index on ties); -1 when no slot is visible.
  int argmax(const Observation& obs) const;
  // Draws a legal action from the masked softmax; returns it and writes its log-probability.
  int sample(const Observation& obs, Rng& rng, double& log_prob) const;
  // The same two from logits that logits() already wrote for `obs`.
  static int argmax(std::span<const float> logits, const Observation& obs);
  static int sample(std::span<const float> logits, const Observation& obs, Rng& rng, double& log_prob);

  nlohmann::json to_json() const;
  static PolicyNet from_json(const nlohmann::json& j);  // InputError when malformed
};

}  // namespace rltune::rl
