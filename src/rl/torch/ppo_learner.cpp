// The only translation unit of the project (besides its test) that includes LibTorch: networks, PPO
// updates, checkpoints and TorchScript export (DESIGN.md section 4: one torch TU costs ~21 s to compile).
#include "rl/torch/ppo_learner.h"

#include <fmt/format.h>
#include <torch/script.h>

#include <dlfcn.h>
#include <malloc.h>

#include <cstdio>
#include <array>
#include <filesystem>
#include <sstream>

#include "core/comm.h"
#include "core/error.h"
#include "core/file.h"
#include "core/log.h"
#include "core/parallel.h"
#include "rl/torch/ppo.h"

namespace rltune::rl {

namespace torchnet {

PolicyImpl::PolicyImpl(Arch a, int f, bool with_skip_action) : arch(a), features(f) {
  const PolicyNet shape = PolicyNet::shaped(a, f);
  for (std::size_t i = 0; i < shape.layers.size(); ++i)
    layers.push_back(register_module("layer" + std::to_string(i),
                                     torch::nn::Linear(shape.layers[i].in, shape.layers[i].out)));
  if (with_skip_action) skip = register_parameter("skip", torch::zeros({1}));
}

torch::Tensor PolicyImpl::with_skip(const torch::Tensor& slot_logits, const torch::Tensor& mask) const {
  const auto column = skip.defined() ? skip.expand({slot_logits.size(0), 1}) : torch::full({slot_logits.size(0), 1}, kMaskedLogit);
  return torch::cat({slot_logits, column}, 1).masked_fill(mask.logical_not(), kMaskedLogit);
}

torch::Tensor PolicyImpl::forward(const torch::Tensor& obs, const torch::Tensor& actions_mask) {
  const bool skip_column = actions_mask.size(1) == kActions;
  const auto mask = skip_column ? actions_mask.slice(1, 0, kSlots) : actions_mask;
  std::size_t next = 0;
  torch::Tensor h;
  if (arch == Arch::mlp) {
    h = torch::relu(layers[next++]->forward(obs));
  } else {
    const auto q = torch::relu(layers[0]->forward(obs)), k = torch::relu(layers[1]->forward(obs)),
               v = torch::relu(layers[2]->forward(obs));
    next = 3;
    // Scores over visible keys, legal picks or not, as PolicyNet (the reference attends to padding too).
    // Padding rows are the only ones whose size feature is 1 (observation.h).
    auto scores = torch::matmul(q, k.transpose(1, 2));
    scores = scores.masked_fill(visible_slots(obs).unsqueeze(1).logical_not(), kMaskedLogit);
    h = torch::matmul(torch::softmax(scores, 2), v);
  }
  h = torch::relu(layers[next]->forward(h));
  h = torch::relu(layers[next + 1]->forward(h));
  h = layers[next + 2]->forward(h).squeeze(-1);
  h = h.masked_fill(mask.logical_not(), kMaskedLogit);
  return skip_column ? with_skip(h, actions_mask) : h;
}

torch::Tensor PolicyImpl::forward_rows(const torch::Tensor& rows, const torch::Tensor& positions, const torch::Tensor& mask) {
  const std::int64_t batch = mask.size(0);
  RLTUNE_CHECK(arch == Arch::mlp, "row-wise logits need the per-slot MLP");
  torch::Tensor h = rows;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    h = layers[i]->forward(h);
    if (i + 1 < layers.size()) h = torch::relu(h);
  }
  return with_skip(torch::full({batch * kSlots}, kMaskedLogit).index_put({positions}, h.squeeze(-1)).view({batch, kSlots}), mask);
}

ValueImpl::ValueImpl(int features) {
  const int sizes[] = {kSlots * features, kHidden1, kHidden2, kHidden3, 1};
  for (int i = 0; i < 4; ++i)
    layers.push_back(register_module("layer" + std::to_string(i), torch::nn::Linear(sizes[i], sizes[i + 1])));
}

torch::Tensor ValueImpl::forward(const torch::Tensor& obs) {
  torch::Tensor h = obs.flatten(1);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    h = layers[i]->forward(h);
    if (i + 1 < layers.size()) h = torch::relu(h);
  }
  return h.squeeze(-1);
}

PolicyNet to_policy_net(Policy& policy) {
  torch::NoGradGuard no_grad;
  PolicyNet net = PolicyNet::shaped(policy->arch, policy->features, policy->skip.defined());
  if (net.skip) net.skip_logit = policy->skip.item<float>();
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const auto w = policy->layers[i]->weight.contiguous(), b = policy->layers[i]->bias.contiguous();
    net.layers[i].weight.assign(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
    net.layers[i].bias.assign(b.data_ptr<float>(), b.data_ptr<float>() + b.numel());
  }
  return net;
}

void load_policy_net(Policy& policy, const PolicyNet& net) {
  torch::NoGradGuard no_grad;
  RLTUNE_CHECK(net.arch == policy->arch && net.features == policy->features && net.skip == policy->skip.defined(),
               "the weights fit the network");
  if (net.skip) policy->skip.fill_(net.skip_logit);
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const Dense& d = net.layers[i];
    policy->layers[i]->weight.copy_(torch::from_blob(const_cast<float*>(d.weight.data()), {d.out, d.in}));
    policy->layers[i]->bias.copy_(torch::from_blob(const_cast<float*>(d.bias.data()), {d.out}));
  }
}

PolicyTerms policy_terms(const torch::Tensor& log_probs, const torch::Tensor& actions, const torch::Tensor& logp_old,
                         const torch::Tensor& advantages, double clip) {
  const auto logp = log_probs.gather(1, actions.unsqueeze(1)).squeeze(1);
  const auto ratio = torch::exp(logp - logp_old);
  const auto clipped = torch::clamp(ratio, 1 - clip, 1 + clip) * advantages;
  PolicyTerms t;
  t.loss = -torch::min(ratio * advantages, clipped).mean();
  t.kl = (logp_old - logp).mean();
  // Masked slots have probability exp(-1e9) = 0 exactly, so they add nothing.
  t.entropy = -(log_probs.exp() * log_probs).sum(1).mean();
  t.clip_fraction = ((ratio > 1 + clip) | (ratio < 1 - clip)).to(torch::kFloat).mean();
  return t;
}

}  // namespace torchnet

namespace {

using namespace torchnet;

void glorot(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.named_parameters()) {
    if (p.key().ends_with("weight")) torch::nn::init::xavier_uniform_(p.value());
    else torch::nn::init::zeros_(p.value());
  }
}

// A slice of the batch processed by one thread.
struct Shard {
  std::int64_t first = 0, last = 0;  // its decisions in the batch
  double weight = 0;  // its share of the batch
  torch::Tensor obs, mask, actions, advantages, returns, logp_old, rows, positions;
  std::vector<torch::Tensor> grads;
  std::array<double, 4> terms{};
};

// Runs f(shard) for every shard on `threads` threads. Rethrows a failure.
template <typename F>
void in_parallel(std::vector<Shard>& shards, int threads, const F& f) {
  for_each_parallel(shards.size(), threads, [&](std::size_t k, int) { f(shards[k]); });
}

// Serialises into memory with `save(stream)`, then writes the bytes with write_file (a temporary file
// renamed into place). Never to a path: LibTorch's file writer throws again from its destructor when
// a write failed (a full disk), which aborts the process and leaves half a file.
template <typename Save>
void save_atomically(const std::string& path, const char* what, const Save& save) {
  std::ostringstream bytes;
  try {
    save(bytes);
  } catch (const c10::Error& e) {
    throw InputError(fmt::format("{}: cannot serialise the {}: {}", path, what, e.what_without_backtrace()));
  }
  write_file(path, bytes.str());
}

class PpoLearner final : public Learner {
 public:
  PpoLearner(Arch arch, int features, bool skip, const PpoOptions& options, std::uint64_t seed, int threads, const Comm& comm)
      : comm_(comm), features_(features), threads_(std::max(1, threads)), options_(options), policy_(arch, features, skip), value_(features),
        pi_opt_(policy_->parameters(), torch::optim::AdamOptions(options.pi_lr)),
        vf_opt_(value_->parameters(), torch::optim::AdamOptions(options.vf_lr)) {
    torch::set_num_threads(1);  // the update runs one shard per thread itself
    // Updates allocate and free the same large tensors every iteration: keep them in the heap instead of
    // returning them to the kernel each time (page faults otherwise dominate the update's time).
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // the largest glibc accepts; shards are smaller
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    torch::manual_seed(seed);
    glorot(*policy_);
    glorot(*value_);
  }

  double imitate(const Batch& batch) override {
    std::vector<Shard> shards = shards_of(batch, tensors(batch));
    const auto pi_params = policy_->parameters();
    // The teacher's probabilities when it gave them, else its picks. Masked actions have probability 0
    // and a finite log-probability (kMaskedLogit), so they add nothing.
    const torch::Tensor targets =
        batch.targets.empty() ? torch::Tensor()
                              : torch::from_blob(const_cast<float*>(batch.targets.data()), {static_cast<std::int64_t>(batch.size()), kActions});
    // Cloning at its own learning rate, if one is set; PPO's is back once it returns (or throws).
    auto& adam = static_cast<torch::optim::AdamOptions&>(pi_opt_.param_groups().front().options());
    struct Restore {
      torch::optim::AdamOptions& adam;
      double lr;
      ~Restore() { adam.lr(lr); }
    } restore{adam, adam.lr()};
    if (options_.imitation_lr > 0) adam.lr(options_.imitation_lr);
    double loss = 0;
    for (int i = 0; i < options_.pi_iters; ++i) {
      in_parallel(shards, threads_, [&](Shard& sh) {
        const auto log_probs = shard_log_probs(sh);
        const auto cross_entropy =
            targets.defined() ? -(targets.slice(0, sh.first, sh.last).slice(1, 0, log_probs.size(1)) * log_probs).sum(1).mean()
                              : -log_probs.gather(1, sh.actions.unsqueeze(1)).mean();
        sh.grads = torch::autograd::grad({cross_entropy * sh.weight}, pi_params);
        sh.terms[0] = cross_entropy.item<double>();
      });
      loss = reduce(shards)[0];
      step(pi_opt_, pi_params, shards);
    }
    return loss;
  }

  UpdateStats update(const Batch& batch) override {
    const BatchTensors bt = tensors(batch);
    std::vector<Shard> shards = shards_of(batch, bt);

    // Advantages per episode from the values before the update (shard by shard: a row's value must not
    // depend on which rows share its matrix product, which the rank count would change).
    std::vector<float> values(batch.size()), adv(batch.size()), ret(batch.size());
    in_parallel(shards, threads_, [&](Shard& sh) {
      torch::NoGradGuard no_grad;
      const auto v = value_->forward(sh.obs).contiguous();
      std::copy_n(v.data_ptr<float>(), sh.last - sh.first, values.begin() + sh.first);
    });
    for (std::size_t e = 0; e < batch.episodes.size(); ++e) {
      const auto [first, last] = batch.episodes[e];
      gae(std::span<const float>(values).subspan(first, last - first), batch.rewards[e], options_.gamma, options_.lambda,
          std::span(adv).subspan(first, last - first), std::span(ret).subspan(first, last - first));
    }
    normalize(adv, batch.episodes, options_.adv_eps, comm_);
    const auto n = static_cast<std::int64_t>(batch.size());
    const auto advantages = torch::from_blob(adv.data(), {n});
    const auto returns = torch::from_blob(ret.data(), {n});
    for (Shard& sh : shards) {
      sh.advantages = advantages.slice(0, sh.first, sh.last);
      sh.returns = returns.slice(0, sh.first, sh.last);
    }
    in_parallel(shards, threads_, [&](Shard& sh) {
      torch::NoGradGuard no_grad;
      sh.logp_old = shard_log_probs(sh).gather(1, sh.actions.unsqueeze(1)).squeeze(1).contiguous();
    });

    UpdateStats stats;
    const auto pi_params = policy_->parameters();
    for (int i = 0; i < options_.pi_iters; ++i) {
      in_parallel(shards, threads_, [&](Shard& sh) {
        const PolicyTerms t = policy_terms(shard_log_probs(sh), sh.actions, sh.logp_old, sh.advantages, options_.clip);
        const auto objective = options_.ent_coef == 0 ? t.loss : t.loss - options_.ent_coef * t.entropy;
        sh.grads = torch::autograd::grad({objective * sh.weight}, pi_params);
        sh.terms = {t.loss.item<double>(), t.kl.item<double>(), t.entropy.item<double>(), t.clip_fraction.item<double>()};
      });
      const auto [loss, kl, entropy, clipped] = reduce(shards);
      stats.kl = kl;
      stats.clip_fraction = clipped;
      if (i == 0) {
        stats.policy_loss = loss;
        stats.entropy = entropy;
      }
      if (kl > 1.5 * options_.target_kl) break;  // Spinning Up: stop before stepping past the KL
      step(pi_opt_, pi_params, shards);
      stats.policy_iters = i + 1;
    }
    const auto vf_params = value_->parameters();
    for (int i = 0; i < options_.vf_iters; ++i) {
      in_parallel(shards, threads_, [&](Shard& sh) {
        const auto loss = (value_->forward(sh.obs) - sh.returns).pow(2).mean();
        sh.grads = torch::autograd::grad({loss * sh.weight}, vf_params);
        sh.terms[0] = loss.item<double>();
      });
      const double loss = reduce(shards)[0];
      if (i == 0) stats.value_loss = loss;
      step(vf_opt_, vf_params, shards);
    }
    return stats;
  }

  PolicyNet policy() const override { return to_policy_net(const_cast<Policy&>(policy_)); }
  void set_policy(const PolicyNet& net) override { load_policy_net(policy_, net); }

  void save(const std::string& path, const nlohmann::json& state) const override {
    torch::serialize::OutputArchive root, p, v, po, vo;
    policy_->save(p);
    value_->save(v);
    pi_opt_.save(po);
    vf_opt_.save(vo);
    root.write("policy", p);
    root.write("value", v);
    root.write("policy_optimizer", po);
    root.write("value_optimizer", vo);
    root.write("state", c10::IValue(state.dump()));
    root.write("shape", c10::IValue(shape()));
    save_atomically(path, "checkpoint", [&](std::ostream& out) { root.save_to(out); });
  }

  nlohmann::json load(const std::string& path) override {
    try {
      torch::serialize::InputArchive root, p, v, po, vo;
      root.load_from(path);
      c10::IValue shape_value, state;
      root.read("shape", shape_value);
      if (shape_value.toStringRef() != shape())
        throw InputError(fmt::format("{}: the checkpoint holds a {} network, this run builds a {} one", path,
                                     shape_value.toStringRef(), shape()));
      root.read("policy", p);
      root.read("value", v);
      root.read("policy_optimizer", po);
      root.read("value_optimizer", vo);
      root.read("state", state);
      policy_->load(p);
      value_->load(v);
      pi_opt_.load(po);
      vf_opt_.load(vo);
      return nlohmann::json::parse(state.toStringRef());
    } catch (const c10::Error& e) {
      throw InputError(fmt::format("{}: not a readable rltune checkpoint: {}", path, e.what_without_backtrace()));
    }
  }

  void export_torchscript(const std::string& path) const override {
    const PolicyNet net = policy();
    torch::jit::Module m("RltunePolicy");
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
      const Dense& d = net.layers[i];
      m.register_parameter(fmt::format("w{}", i), torch::from_blob(const_cast<float*>(d.weight.data()), {d.out, d.in}).clone(), false);
      m.register_parameter(fmt::format("b{}", i), torch::from_blob(const_cast<float*>(d.bias.data()), {d.out}).clone(), false);
    }
    if (net.skip) m.register_parameter("skip", torch::full({1}, net.skip_logit), false);
    const std::string head = net.arch == Arch::mlp ? R"(
        h = torch.relu((torch.matmul(obs, self.w0.t()) + self.b0))
        h = torch.relu((torch.matmul(h, self.w1.t()) + self.b1))
        h = torch.relu((torch.matmul(h, self.w2.t()) + self.b2))
        h = (torch.matmul(h, self.w3.t()) + self.b3).squeeze(-1))"
                                                   : R"(
        q = torch.relu((torch.matmul(obs, self.w0.t()) + self.b0))
        k = torch.relu((torch.matmul(obs, self.w1.t()) + self.b1))
        v = torch.relu((torch.matmul(obs, self.w2.t()) + self.b2))
        s = torch.matmul(q, k.transpose(1, 2)).masked_fill((obs[:, :, 1] < 1.0).unsqueeze(1).logical_not(), -1e9)
        h = torch.matmul(torch.softmax(s, 2), v)
        h = torch.relu((torch.matmul(h, self.w3.t()) + self.b3))
        h = torch.relu((torch.matmul(h, self.w4.t()) + self.b4))
        h = (torch.matmul(h, self.w5.t()) + self.b5).squeeze(-1))";
    // With skip, mask has 129 columns: the slots' 128, then skip's. Attention keys are the visible rows,
    // obs[:, :, 1] < 1, as visible_slots() (the mask only restricts the picks).
    m.define(std::string(R"(
    def forward(self, obs: Tensor, mask: Tensor) -> Tensor:
        actions = mask != 0
        mask = actions)") + (net.skip ? "[:, :128]" : "") +
             head + (net.skip ? "\n        h = torch.cat([h, self.skip.expand(h.size(0), 1)], 1)" : "") + R"(
        return h.masked_fill(actions.logical_not(), -1e9)
)");
    save_atomically(path, "TorchScript module", [&](std::ostream& out) { m.save(out); });
  }

 private:
  // The batch as tensors over its own memory (valid while `batch` lives).
  struct BatchTensors {
    torch::Tensor obs, mask, actions;
  };
  BatchTensors tensors(const Batch& batch) const {
    RLTUNE_CHECK(batch.features == features_ && batch.size() > 0, "a non-empty batch of this learner's features");
    const auto n = static_cast<std::int64_t>(batch.size());
    std::vector<std::int64_t> action_values(batch.actions.begin(), batch.actions.end());
    return {torch::from_blob(const_cast<float*>(batch.observations.data()), {n, kSlots, features_}),
            torch::from_blob(const_cast<std::uint8_t*>(batch.masks.data()), {n, kActions}, torch::kUInt8).to(torch::kBool),
            torch::tensor(action_values, torch::kInt64)};
  }

  // Shards of at most kShardDecisions decisions of one episode, each with its own graph: small enough
  // that a layer's activations stay in cache, processed by --threads threads. Each rank holds whole
  // episodes, so the shards, and what each computes, are the same whatever the rank and thread counts.
  // Weights: each shard's share of the decisions of every rank.
  std::vector<Shard> shards_of(const Batch& batch, const BatchTensors& t) {
    constexpr std::int64_t kShardDecisions = 128;
    std::vector<Shard> shards;
    for (const auto& [episode_first, episode_last] : batch.episodes)
      for (auto first = static_cast<std::int64_t>(episode_first); first < static_cast<std::int64_t>(episode_last); first += kShardDecisions) {
        const std::int64_t last = std::min(static_cast<std::int64_t>(episode_last), first + kShardDecisions);
        Shard sh;
        sh.first = first;
        sh.last = last;
        sh.obs = t.obs.slice(0, first, last);
        sh.mask = t.mask.slice(0, first, last);
        sh.actions = t.actions.slice(0, first, last);
        if (policy_->arch == Arch::mlp) {  // logits from the visible rows only: most slots are padding
          sh.positions = sh.mask.slice(1, 0, kSlots).flatten().nonzero().squeeze(1);
          sh.rows = sh.obs.reshape({(last - first) * kSlots, features_}).index_select(0, sh.positions);
        }
        shards.push_back(std::move(sh));
      }
    const double counts[] = {static_cast<double>(batch.size()), static_cast<double>(shards.size())};
    const std::vector<double> all = gather_doubles(comm_, counts);
    double decisions = 0;
    total_shards_ = 0;
    shards_by_rank_.clear();
    for (std::size_t r = 0; r < all.size(); r += 2) {
      decisions += all[r];
      shards_by_rank_.push_back(static_cast<std::size_t>(all[r + 1]));
      total_shards_ += shards_by_rank_.back();
    }
    for (Shard& sh : shards) sh.weight = static_cast<double>(sh.last - sh.first) / decisions;
    return shards;
  }

  // The shards' weighted terms summed in shard order over every rank, so the same on each; also learns
  // each parameter's largest gradient over every shard, for step().
  std::array<double, 4> reduce(const std::vector<Shard>& shards) {
    const std::size_t params = shards.front().grads.size();
    // A NaN must survive the maxima (std::max would drop it) so that step() refuses it.
    const auto larger = [](double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b); };
    std::vector<double> mine(params, 0.0);
    for (const Shard& sh : shards)
      for (std::size_t p = 0; p < params; ++p) mine[p] = larger(mine[p], sh.grads[p].abs().max().item<double>());
    for (const Shard& sh : shards)
      for (const double term : sh.terms) mine.push_back(sh.weight * term);
    const std::vector<double> all = gather_doubles(comm_, mine);
    std::array<double, 4> sums{};
    max_grad_.assign(params, 0.0);
    std::size_t at = 0;
    for (const std::size_t count : shards_by_rank_) {
      for (std::size_t p = 0; p < params; ++p) max_grad_[p] = larger(max_grad_[p], all[at++]);
      for (std::size_t k = 0; k < count; ++k)
        for (double& sum : sums) sum += all[at++];
    }
    RLTUNE_CHECK(at == all.size(), "every rank sent its parameters' bounds and its shards' terms");
    return sums;
  }

  // Sums the shards' gradients of every rank exactly (the same bits for any rank or thread count) and
  // takes one optimiser step. After reduce() on the same gradients.
  void step(torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& params, std::vector<Shard>& shards) {
    torch::NoGradGuard no_grad;
    std::vector<std::size_t> sizes;
    for (const auto& p : params) sizes.push_back(static_cast<std::size_t>(p.numel()));
    for (const double m : max_grad_)  // every rank holds the same maxima
      if (!std::isfinite(m)) fail_on_every_rank(comm_, fmt::format("a gradient is not finite ({}): training diverged", m));
    ExactSum sum(sizes, max_grad_, total_shards_);
    for (Shard& sh : shards)
      for (std::size_t p = 0; p < params.size(); ++p) {
        const torch::Tensor g = sh.grads[p].contiguous();
        sum.add(p, {g.data_ptr<float>(), sizes[p]});
      }
    const auto totals = sum.total(comm_);
    for (std::size_t p = 0; p < params.size(); ++p)
      const_cast<torch::Tensor&>(params[p]).mutable_grad() = torch::from_blob(const_cast<float*>(totals[p].data()), params[p].sizes()).clone();
    optimizer.step();
  }

  torch::Tensor shard_log_probs(Shard& sh) {
    const auto logits = sh.rows.defined() ? policy_->forward_rows(sh.rows, sh.positions, sh.mask) : policy_->forward(sh.obs, sh.mask);
    return torch::log_softmax(logits, 1);
  }

  std::string shape() const {
    return fmt::format("{}/{}{}", to_string(policy_->arch), features_, policy_->skip.defined() ? "/skip" : "");
  }

  const Comm& comm_;
  int features_;
  int threads_;
  std::vector<std::size_t> shards_by_rank_;  // of the current batch (shards_of)
  std::size_t total_shards_ = 0;
  std::vector<double> max_grad_;  // per parameter, of the last reduce()
  PpoOptions options_;
  Policy policy_;
  Value value_;
  mutable torch::optim::Adam pi_opt_, vf_opt_;  // save() is logically const but the API is not
};

// Our update threads call BLAS at the same time. OpenBLAS's pthread build is safe for that (its serial
// build is not: it gives wrong, varying results); with one BLAS thread each it does not fight ours.
int update_threads(int wanted) {
  using SetThreads = void (*)(int);
  using GetParallel = int (*)();
  const auto set_threads = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  const auto parallel = reinterpret_cast<GetParallel>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  if (set_threads) set_threads(1);
  if (wanted > 1 && parallel && parallel() == 0) {
    spdlog::warn("the BLAS in use is OpenBLAS's serial build, which is not safe from several threads: updates use "
                 "one thread (install libopenblas0-pthread for parallel updates)");
    return 1;
  }
  return wanted;
}

}  // namespace

std::unique_ptr<Learner> make_ppo_learner(Arch arch, int features, bool skip, const PpoOptions& options, std::uint64_t seed,
                                          int threads, const Comm& comm) {
  return std::make_unique<PpoLearner>(arch, features, skip, options, seed, update_threads(threads), comm);
}

}  // namespace rltune::rl
