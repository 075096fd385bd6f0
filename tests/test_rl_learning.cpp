// The torch-free side of learning: the policy's forward pass and its file format, sampling that never
// picks a masked slot, GAE against hand-computed values, the `rl` policy in the simulator reproducing the
// environment's episode exactly, and rollouts that do not depend on the thread count.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/file.h"
#include "helpers.h"
#include "policy/registry.h"
#include "rl/rl_policy.h"
#include "rl/rollout.h"
#include "rl/trainer.h"
#include "workload/generator.h"

namespace rltune::rl {
namespace {

using rltune::testing::TempDir;

// The helios workload of these tests, with the `rl` policy registered.
struct Workload : testing::GeneratedWorkload {
  Workload() : GeneratedWorkload("helios", 3000, 0.95, 5) { register_rl_policy(); }
};

// Weights drawn uniformly in [-1, 1] from `seed`.
PolicyNet random_net(Arch arch, int features, std::uint64_t seed) {
  PolicyNet net = PolicyNet::shaped(arch, features);
  Rng rng(seed);
  for (Dense& d : net.layers) {
    for (float& w : d.weight) w = static_cast<float>(2 * rng.uniform() - 1);
    for (float& b : d.bias) b = static_cast<float>(0.2 * rng.uniform() - 0.1);
  }
  return net;
}

// An observation with `visible` jobs of simple features.
Observation observation(int visible, int features) {
  Observation o;
  o.features = features;
  o.visible = visible;
  for (int s = 0; s < kSlots; ++s) {
    o.mask[static_cast<std::size_t>(s)] = s < visible;
    o.jobs[static_cast<std::size_t>(s)] = s < visible ? s : -1;
    for (int f = 0; f < features; ++f)
      o.values[static_cast<std::size_t>(s * features + f)] = s < visible ? static_cast<float>((s * 7 + f * 3) % 10) / 10 : 1.0f;
  }
  return o;
}

TEST(PolicyNet, MlpMatchesAHandComputedForwardPass) {
  // One path: every layer passes the first input through (weights 1 on the first input, 0 elsewhere),
  // biases add 0.5 per layer: logit = relu(relu(relu(x0 + .5) + .5) + .5) + .5 = x0 + 2.
  PolicyNet net = PolicyNet::shaped(Arch::mlp, kFeatures);
  for (Dense& d : net.layers) {
    for (int o = 0; o < d.out; ++o) d.weight[static_cast<std::size_t>(o * d.in)] = 1;
    std::fill(d.bias.begin(), d.bias.end(), 0.5f);
  }
  const Observation o = observation(3, kFeatures);
  std::array<float, kActions> l;
  net.logits(o, l);
  for (int s = 0; s < 3; ++s) EXPECT_FLOAT_EQ(l[static_cast<std::size_t>(s)], o.values[static_cast<std::size_t>(s * kFeatures)] + 2);
  for (int s = 3; s < kSlots; ++s) EXPECT_TRUE(std::isinf(l[static_cast<std::size_t>(s)]) && l[static_cast<std::size_t>(s)] < 0);
}

TEST(PolicyNet, SamplingNeverPicksAMaskedSlotAndFollowsTheSoftmax) {
  for (const Arch arch : {Arch::mlp, Arch::attention}) {
    const PolicyNet net = random_net(arch, kFeatures, 11);
    const Observation o = observation(5, kFeatures);
    std::array<float, kActions> l;
    net.logits(o, l);
    double total = 0;
    for (int s = 0; s < 5; ++s) total += std::exp(static_cast<double>(l[static_cast<std::size_t>(s)]));
    std::array<int, kSlots> counts{};
    Rng rng(3);
    constexpr int kDraws = 20000;
    for (int i = 0; i < kDraws; ++i) {
      double lp = 0;
      const int s = net.sample(o, rng, lp);
      ASSERT_TRUE(s >= 0 && s < 5) << "masked slot " << s;
      EXPECT_NEAR(lp, l[static_cast<std::size_t>(s)] - std::log(total), 1e-4);
      ++counts[static_cast<std::size_t>(s)];
    }
    for (int s = 0; s < 5; ++s)
      EXPECT_NEAR(counts[static_cast<std::size_t>(s)] / static_cast<double>(kDraws),
                  std::exp(static_cast<double>(l[static_cast<std::size_t>(s)])) / total, 0.015);
    EXPECT_EQ(net.argmax(o), static_cast<int>(std::max_element(l.begin(), l.begin() + 5) - l.begin()));
    // A visible job whose pools are blocked is masked: never drawn, never the argmax.
    Observation blocked = o;
    const int top = net.argmax(o);
    blocked.mask[static_cast<std::size_t>(top)] = 0;
    for (int i = 0; i < 2000; ++i) {
      double lp = 0;
      ASSERT_NE(net.sample(blocked, rng, lp), top);
    }
    EXPECT_NE(net.argmax(blocked), top);
  }
}

TEST(PolicyNet, SkipIsALegalActionOnlyWhenAllowed) {
  PolicyNet net = random_net(Arch::mlp, kFeatures, 11);
  net.skip = true;
  Observation o = observation(5, kFeatures);
  std::array<float, kActions> l;
  net.logits(o, l);
  const float top = *std::max_element(l.begin(), l.begin() + 5);
  EXPECT_TRUE(std::isinf(l[kSkip]));  // not allowed in this observation
  net.skip_logit = top + 1;
  EXPECT_NE(net.argmax(o), kSkip);
  Rng rng(5);
  double lp = 0;
  for (int i = 0; i < 2000; ++i) ASSERT_NE(net.sample(o, rng, lp), kSkip);

  o.mask[kSkip] = 1;
  EXPECT_EQ(net.argmax(o), kSkip);
  net.skip_logit = top;  // a tie goes to the job (the lower action index)
  EXPECT_NE(net.argmax(o), kSkip);
  net.skip_logit = top + 1;
  net.logits(o, l);
  double total = 0;
  for (const int a : {0, 1, 2, 3, 4, kSkip}) total += std::exp(static_cast<double>(l[static_cast<std::size_t>(a)]));
  int skips = 0;
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) {
    const int a = net.sample(o, rng, lp);
    ASSERT_TRUE((a >= 0 && a < 5) || a == kSkip) << a;
    if (a == kSkip) {
      ++skips;
      EXPECT_NEAR(lp, net.skip_logit - std::log(total), 1e-4);
    }
  }
  EXPECT_NEAR(skips / static_cast<double>(kDraws), std::exp(static_cast<double>(net.skip_logit)) / total, 0.015);

  // Written and read back with the policy; a policy without it has none.
  const PolicyFile back = parse_policy_file(nlohmann::json::parse(policy_file(net, {}, 1).dump()), "p.json");
  EXPECT_TRUE(back.net.skip);
  EXPECT_EQ(back.net.skip_logit, net.skip_logit);
  EXPECT_FALSE(parse_policy_file(policy_file(random_net(Arch::mlp, kFeatures, 1), {}, 1), "p.json").net.skip);
}

TEST(PolicyNet, AttentionIgnoresPaddingButSeesBlockedJobs) {
  const PolicyNet net = random_net(Arch::attention, kFeatures, 5);
  Observation a = observation(4, kFeatures), b = a;
  for (std::size_t i = 4 * kFeatures; i < b.values.size(); ++i) b.values[i] = 0.123f;  // different padding
  std::array<float, kActions> la, lb;
  net.logits(a, la);
  net.logits(b, lb);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(la[static_cast<std::size_t>(s)], lb[static_cast<std::size_t>(s)]);
  // A job that may not be picked (its pools are blocked) is no pick, but stays in the others' attention.
  Observation c = a;
  c.mask[2] = 0;
  std::array<float, kActions> lc;
  net.logits(c, lc);
  EXPECT_TRUE(std::isinf(lc[2]));
  for (const int s : {0, 1, 3}) EXPECT_EQ(la[static_cast<std::size_t>(s)], lc[static_cast<std::size_t>(s)]);
}

TEST(PolicyNet, FileRoundTripIsExactAndBadFilesAreRefused) {
  for (const Arch arch : {Arch::mlp, Arch::attention}) {
    const PolicyNet net = random_net(arch, kExtendedFeatures, 2);
    EnvOptions env;
    env.observation.features = FeatureSet::extended;
    const PolicyFile back = parse_policy_file(nlohmann::json::parse(policy_file(net, env, 7).dump()), "p.json");
    EXPECT_EQ(back.net.arch, arch);
    EXPECT_EQ(back.epoch, 7);
    EXPECT_EQ(back.observation.features, FeatureSet::extended);
    ASSERT_EQ(back.net.layers.size(), net.layers.size());
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
      EXPECT_EQ(back.net.layers[i].weight, net.layers[i].weight);
      EXPECT_EQ(back.net.layers[i].bias, net.layers[i].bias);
    }
  }
  EnvOptions env;
  nlohmann::json j = policy_file(random_net(Arch::mlp, kFeatures, 1), env, 1);
  j["network"]["layers"][1]["weight"].erase(0);
  EXPECT_THROW(parse_policy_file(j, "p.json"), InputError);
  j = policy_file(random_net(Arch::mlp, kFeatures, 1), env, 1);
  j["observation"]["features"] = "extended";  // 7 inputs but 10 features
  EXPECT_THROW(parse_policy_file(j, "p.json"), InputError);
  EXPECT_THROW(parse_policy_file(nlohmann::json::object(), "p.json"), InputError);
  EXPECT_THROW(load_policy("/nonexistent/run"), InputError);
  const auto error = [](const nlohmann::json& file) -> std::string {
    try {
      parse_policy_file(file, "p.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  j = policy_file(random_net(Arch::mlp, kFeatures, 1), env, 1);
  j["version"] = 2;
  EXPECT_NE(error(j).find("version 2 (this rltune reads version 1)"), std::string::npos) << error(j);
  j["version"] = 1.5;  // not read as 1
  EXPECT_NE(error(j).find("version 1.5 (this rltune reads version 1)"), std::string::npos) << error(j);
  j = policy_file(random_net(Arch::mlp, kFeatures, 1), env, 1);
  j["score"] = "nonsense";
  EXPECT_NE(error(j).find("unknown score 'nonsense'"), std::string::npos) << error(j);
  j = policy_file(random_net(Arch::mlp, kFeatures, 1), env, 1);
  j["network"]["layers"][0]["weight"][3] = 1e30;
  EXPECT_NE(error(j).find("layer 0 has a weight of"), std::string::npos) << error(j);
  j = policy_file(random_net(Arch::mlp, kFeatures, 1), env, 1);
  j["network"]["layers"][1]["bias"][0] = -2e6;
  EXPECT_NE(error(j).find("layer 1 has a bias of"), std::string::npos) << error(j);
  // A misspelt key would be ignored, and the policy would run otherwise than it was trained.
  j = policy_file(random_net(Arch::mlp, kFeatures, 1), env, 1);
  j.erase("commit");
  j["comit"] = false;
  EXPECT_NE(error(j).find("p.json: policy file: unknown key 'comit'"), std::string::npos) << error(j);
  j = policy_file(random_net(Arch::mlp, kFeatures, 1), env, 1);
  j["network"]["layers"][0]["weights"] = j["network"]["layers"][0]["weight"];
  EXPECT_NE(error(j).find("network.layers[]: unknown key 'weights'"), std::string::npos) << error(j);
  // As read from a file: a key given twice, and a number beyond a double, are errors naming the file.
  TempDir dir;
  const std::string text = policy_file(random_net(Arch::mlp, kFeatures, 1), env, 1).dump();
  write_file(dir.path + "/twice.json", text.substr(0, text.size() - 1) + R"(,"epoch":3})");
  const auto load_error = [](const std::string& path) -> std::string {
    try {
      load_policy(path);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_NE(load_error(dir.path + "/twice.json").find("twice.json: key 'epoch' appears twice in one object"), std::string::npos)
      << load_error(dir.path + "/twice.json");
  std::string huge = text;
  huge.replace(huge.find("\"bias\":[") + 8, 0, "1e400,");
  write_file(dir.path + "/huge.json", huge);
  EXPECT_NE(load_error(dir.path + "/huge.json").find("huge.json: not JSON: [json.exception.out_of_range.406] number overflow"),
            std::string::npos)
      << load_error(dir.path + "/huge.json");
}

// A model's regime comes from its training run's config.json; run under other rules, it warns once.
TEST(PolicyFile, RegimeFromTheRunConfigAndAWarningWhenRunUnderOtherRules) {
  const Workload s;
  TempDir dir;
  EnvOptions o;
  write_file(dir.path + "/policy.json", policy_file(random_net(Arch::mlp, feature_count(o.observation.features), 5), o, 1).dump());
  EXPECT_FALSE(load_policy(dir.path).regime);  // no config.json: nothing known, nothing warned
  nlohmann::json config = {{"command", "train"}, {"blocking", "pool"}, {"backfill", true}, {"runtime", "predicted:history"}};
  write_file(dir.path + "/config.json", config.dump());
  const PolicyFile model = load_policy(dir.path);
  ASSERT_TRUE(model.regime);
  EXPECT_EQ(model.regime->blocking, policy::Blocking::pool);
  EXPECT_TRUE(model.regime->backfill);
  EXPECT_EQ(model.regime->runtime, sim::RuntimeKnowledge::predicted);
  EXPECT_TRUE(regime_differences(*model.regime, *model.regime).empty());
  EXPECT_EQ(regime_differences(*model.regime, {}),
            (std::vector<std::string>{"global blocking (trained: pool)", "no backfill (trained: backfill)",
                                      "oracle runtimes (trained: predicted:history)"}));
  Regime published = *model.regime;
  published.reference = true;  // a config that records "semantics": "reference"
  config["semantics"] = "reference";
  EXPECT_TRUE(parse_regime(config)->reference);
  config.erase("semantics");
  EXPECT_EQ(regime_differences(published, *model.regime), std::vector<std::string>{"rltune's semantics (trained under --semantics reference)"});
  config["backfill_limits"] = true;
  const Regime on_limits = *parse_regime(config);
  EXPECT_TRUE(on_limits.backfill_limits && !model.regime->backfill_limits);
  config.erase("backfill_limits");
  EXPECT_EQ(regime_differences(on_limits, *model.regime), std::vector<std::string>{"backfill planned with estimates (trained: with time limits)"});
  EXPECT_EQ(regime_differences(*model.regime, on_limits), std::vector<std::string>{"backfill planned with time limits (trained: with estimates)"});
  EXPECT_FALSE(parse_regime({{"command", "simulate"}, {"blocking", "pool"}}));  // not a training run's config
  // Another cluster is said; one file named two ways is the same cluster; a run or a model that names none says nothing.
  Regime on_philly = *model.regime, on_helios = *model.regime;
  on_philly.cluster = "philly";
  on_helios.cluster = "helios";
  EXPECT_EQ(regime_differences(on_philly, on_helios), std::vector<std::string>{"cluster helios (trained on philly)"});
  EXPECT_TRUE(regime_differences(*model.regime, on_helios).empty());
  write_file(dir.path + "/c.yaml", "x");
  Regime relative = on_philly, absolute = on_philly;
  relative.cluster = dir.path + "/./c.yaml";
  absolute.cluster = dir.path + "/c.yaml";
  EXPECT_TRUE(regime_differences(relative, absolute).empty());
  write_file(dir.path + "/config.json", R"({"command": "train", "blocking": "sideways"})");
  EXPECT_THROW(load_policy(dir.path), InputError);
  // A key of the wrong type or missing is named.
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {R"({"command": "train", "blocking": "pool", "backfill": "yes", "runtime": "oracle"})", "'backfill' is \"yes\", not true or false"},
           {R"({"command": "train", "blocking": 3, "backfill": true, "runtime": "oracle"})", "'blocking' is 3, not a string"},
           {R"({"command": "train", "blocking": "pool", "backfill": true})", "'runtime' is missing"},
           {R"({"command": "train", "blocking": "pool", "backfill": true, "runtime": "oracle", "trace": "t.csv",
                "options": {"train_split": "0.8"}})", "'train_split' is \"0.8\", not a number"}}) {
    write_file(dir.path + "/config.json", text);
    testing::expect_input_error([&] { load_policy(dir.path); }, "config.json: the model's training config is unreadable: " + why);
  }
  // A policy file that says otherwise than its run (edited, or copied from another run) is refused.
  config["options"] = {{"baseline", o.baseline}, {"features", to_string(o.observation.features)}, {"commit", o.commit}, {"skip", false}};
  write_file(dir.path + "/config.json", config.dump());
  EXPECT_NO_THROW(load_policy(dir.path));
  config["options"]["baseline"] = "sjf";
  config["options"]["skip"] = true;
  write_file(dir.path + "/config.json", config.dump());
  try {
    load_policy(dir.path);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("disagrees with its run's config.json on baseline \"fcfs\" (run: \"sjf\"), skip false (run: true)"),
              std::string::npos) << e.what();
  }
  config.erase("options");
  write_file(dir.path + "/config.json", config.dump());

  std::ostringstream log;
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_st>(log)));
  const std::span<const trace::JobSpec> window = std::span(s.trace.jobs).subspan(500, 64);
  const auto run = [&](policy::Blocking blocking, bool backfill) {
    policy::ProfileOptions p;
    p.priority = "rl:" + dir.path;
    p.blocking = blocking;
    p.backfill = backfill;
    sim::EngineOptions e;
    e.runtime = sim::RuntimeKnowledge::predicted;
    sim::Engine engine(s.cluster, window, e);
    engine.run(*policy::make_profile(p));
  };
  run(policy::Blocking::pool, true);  // its own regime
  const std::string quiet = log.str();
  run(policy::Blocking::global, true);
  run(policy::Blocking::global, true);
  spdlog::set_default_logger(previous);
  EXPECT_EQ(quiet, "");
  EXPECT_NE(log.str().find("runs with global blocking (trained: pool); what it learned may not carry over"), std::string::npos)
      << log.str();
  EXPECT_EQ(log.str().find("blocking"), log.str().rfind("blocking")) << "warned twice: " << log.str();
}

TEST(Gae, MatchesHandComputedValues) {
  // Three steps, reward 1 at the end, gamma 1, lambda 0.5:
  // deltas: d0 = 0 + V1 - V0 = -0.3, d1 = 0 + V2 - V1 = -0.1, d2 = 1 + 0 - V2 = 0.9
  // adv2 = 0.9, adv1 = -0.1 + 0.5 * 0.9 = 0.35, adv0 = -0.3 + 0.5 * 0.35 = -0.125; returns all 1.
  const std::vector<float> v{0.5f, 0.2f, 0.1f};
  std::vector<float> adv(3), ret(3);
  gae(v, 1.0, 1.0, 0.5, adv, ret);
  EXPECT_NEAR(adv[0], -0.125, 1e-6);
  EXPECT_NEAR(adv[1], 0.35, 1e-6);
  EXPECT_NEAR(adv[2], 0.9, 1e-6);
  for (const float r : ret) EXPECT_FLOAT_EQ(r, 1.0f);
  // gamma 0.9, lambda 1: returns discount the terminal reward; adv0 = 0.81 R - V0.
  gae(v, 2.0, 0.9, 1.0, adv, ret);
  EXPECT_NEAR(ret[0], 2 * 0.81, 1e-6);
  EXPECT_NEAR(ret[1], 2 * 0.9, 1e-6);
  EXPECT_NEAR(ret[2], 2.0, 1e-6);
  EXPECT_NEAR(adv[0], 2 * 0.81 - 0.5, 1e-6);
  std::vector<float> x{1, 2, 3, 4};
  const std::vector<std::pair<std::size_t, std::size_t>> two_episodes{{0, 1}, {1, 4}};
  normalize(x, two_episodes, 0);
  EXPECT_NEAR(x[0], -1.3416408, 1e-6);  // (1 - 2.5) / sqrt(1.25)
  EXPECT_NEAR(x[0] + x[1] + x[2] + x[3], 0, 1e-6);
  std::vector<float> same{2, 2};
  const std::vector<std::pair<std::size_t, std::size_t>> one_episode{{0, 2}};
  normalize(same, one_episode, 1e-8);  // zero spread: the epsilon keeps it finite
  EXPECT_EQ(same, (std::vector<float>{0, 0}));
}

TEST(RlPolicy, TheSimulatorReproducesTheEnvironmentsGreedyEpisode) {
  const Workload s;
  struct Case {
    FeatureSet features;
    policy::Blocking blocking;
    bool backfill;
    const char* placement;
    bool skip = false;
    bool commit = true;
    Arch arch = Arch::mlp;  // attention: blocked jobs stay in attention in both, so they rank alike
    bool reference = false;  // --semantics reference: the published step on both sides
  };
  using enum policy::Blocking;
  for (const Case c : {Case{FeatureSet::paper, global, false, "greedy"}, Case{FeatureSet::extended, global, false, "greedy"},
                       Case{FeatureSet::paper, pool, false, "greedy"}, Case{FeatureSet::paper, global, true, "greedy"},
                       Case{FeatureSet::extended, pool, true, "greedy"}, Case{FeatureSet::paper, global, false, "milp"},
                       Case{FeatureSet::paper, global, true, "milp"}, Case{FeatureSet::extended, pool, true, "milp"},
                       Case{FeatureSet::paper, global, false, "greedy", true}, Case{FeatureSet::paper, pool, true, "greedy", true},
                       Case{FeatureSet::extended, pool, true, "milp", true}, Case{FeatureSet::ranked, pool, false, "greedy"},
                       Case{FeatureSet::paper, global, false, "greedy", false, false}, Case{FeatureSet::ranked, pool, true, "milp", true, false},
                       Case{FeatureSet::paper, pool, true, "greedy", false, true, Arch::attention},
                       Case{FeatureSet::extended, pool, false, "milp", true, true, Arch::attention},
                       Case{FeatureSet::paper, global, false, "greedy", false, true, Arch::mlp, true},
                       Case{FeatureSet::extended, global, false, "greedy", false, true, Arch::attention, true}}) {
    SCOPED_TRACE(fmt::format("{} {} backfill={} {} skip={} commit={} {} reference={}", to_string(c.features),
                             policy::to_string(c.blocking), c.backfill, c.placement, c.skip, c.commit, to_string(c.arch), c.reference));
    EnvOptions o;
    o.observation.features = c.features;
    o.profile.blocking = c.blocking;
    o.profile.backfill = c.backfill;
    o.profile.placement = c.placement;
    o.profile.milp.time_limit_ms = 1e6;  // only the node limit stops a solve: the same result every run
    o.skip = c.skip;
    o.commit = c.commit;
    if (c.reference) {
      o.profile.semantics = "reference";
      policy::apply_semantics(o.profile);
    }
    Env env(s.cluster, s.trace.jobs, o);
    PolicyNet net = random_net(c.arch, feature_count(c.features), 17);
    if (c.skip) {  // a skip logit in the middle of the first decision's logits: sometimes the best action
      Rng first(1);
      const Observation& obs = env.reset(first, Split::train);
      std::array<float, kActions> l;
      net.logits(obs, l);
      std::vector<float> visible(l.begin(), l.begin() + obs.visible);
      std::nth_element(visible.begin(), visible.begin() + static_cast<std::ptrdiff_t>(visible.size() / 2), visible.end());
      net.skip = true;
      net.skip_logit = visible[visible.size() / 2];
    }
    Rng rng(1);
    const Episode e = play(env, net, rng, Split::train, /*greedy=*/true, /*record=*/false);
    EXPECT_NE(e.agent_score, e.baseline_score);  // random weights: not the baseline's order
    const auto skips = std::count(e.actions.begin(), e.actions.end(), kSkip);
    if (c.skip) EXPECT_GT(skips, 0);
    else EXPECT_EQ(skips, 0);

    PolicyFile file = parse_policy_file(policy_file(net, o, 1), "p.json");
    policy::ProfileOptions p = o.profile;
    p.priority = "rl";
    policy::ProfileScheduler scheduler(p, make_rl_picker(file, p.priority_options), policy::make_placement(p));
    sim::Engine engine(s.cluster, std::span(s.trace.jobs).subspan(e.window_start, 256), o.engine);
    engine.run(scheduler);
    for (JobIndex j = 0; j < 256; ++j) {
      ASSERT_EQ(engine.job(j).start, env.engine().job(j).start) << "job " << j;
      ASSERT_TRUE(engine.job(j).placement == env.engine().job(j).placement) << "job " << j;
    }
    EXPECT_DOUBLE_EQ(score(engine, Score::bsld), e.agent_score);
  }
}

// A model file of random weights (seeded) over an SJF baseline, and a 256-job window to run it on.
struct SjfModel {
  explicit SjfModel(int seed) : path(dir.path + "/policy.json") {
    options.baseline = "sjf";
    write_file(path, policy_file(random_net(Arch::mlp, feature_count(options.observation.features), seed), options, 1).dump());
  }
  std::span<const trace::JobSpec> window() const { return std::span(workload.trace.jobs).subspan(500, 256); }
  const Workload workload;
  TempDir dir;
  EnvOptions options;
  std::string path;
};

TEST(RlPolicy, SampledPicksAreSeededAndRestartEveryRun) {
  EXPECT_FALSE(parse_rl_spec("fcfs"));
  EXPECT_FALSE(parse_rl_spec("rl"));
  ASSERT_TRUE(parse_rl_spec("rl:a/b"));
  EXPECT_EQ(parse_rl_spec("rl:a/b")->model, "a/b");
  EXPECT_FALSE(parse_rl_spec("rl:a/b")->sampled);
  ASSERT_TRUE(parse_rl_spec("rl-sampled:a:b"));
  EXPECT_EQ(parse_rl_spec("rl-sampled:a:b")->model, "a:b");
  EXPECT_TRUE(parse_rl_spec("rl-sampled:a:b")->sampled);

  const SjfModel m(23);
  const Workload& s = m.workload;
  const EnvOptions& o = m.options;
  const std::string& model = m.path;
  const std::span<const trace::JobSpec> window = m.window();
  // The start times of one run of `scheduler`.
  const auto starts = [&](policy::ProfileScheduler& scheduler) {
    sim::Engine engine(s.cluster, window, o.engine);
    engine.run(scheduler);
    std::vector<Seconds> out;
    for (JobIndex j = 0; j < 256; ++j) out.push_back(engine.job(j).start);
    return out;
  };
  const auto profile = [&](const std::string& priority, std::uint64_t seed) {
    policy::ProfileOptions p = o.profile;
    p.priority = priority;
    p.priority_options.seed = seed;
    return policy::make_profile(p);
  };
  auto sampled = profile("rl-sampled:" + model, 7);
  const auto first = starts(*sampled);
  EXPECT_EQ(starts(*sampled), first);                          // the stream restarts with every run
  EXPECT_EQ(starts(*profile("rl-sampled:" + model, 7)), first);  // and depends only on the seed
  EXPECT_NE(starts(*profile("rl-sampled:" + model, 8)), first);
  EXPECT_NE(starts(*profile("rl:" + model, 7)), first);  // argmax is another schedule
  // The same as evaluate --sample's policy with that seed.
  auto direct = make_rl_profile(load_policy(model), o.profile, 7);
  EXPECT_EQ(starts(*direct), first);
}

// sjf-sampled: three jobs queued at 0 that each need the whole node, so only the first pick starts then.
// Their weights are 100^-log2(estimate / 100 s) ^ (1 / temperature): at temperature 4, 1, 0.316 and 0.1
// for 100, 200 and 400 s, so the first to start is each with probability 0.704, 0.222 and 0.070.
TEST(SampledSjf, DrawsInProportionToTheWeightsSeededAndSpreadByTheTemperature) {
  register_rl_policy();
  const cluster::ClusterSpec cluster = testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 1, gpus_per_node: 8}\n");
  const std::vector<trace::JobSpec> jobs{testing::job("long", 0, 400, 8), testing::job("short", 0, 100, 8), testing::job("mid", 0, 200, 8)};
  const auto first_started = [&](double temperature, std::uint64_t seed) {
    policy::ProfileOptions p = testing::profile("sjf-sampled");
    p.priority_options.temperature = temperature;
    p.priority_options.seed = seed;
    const auto out = testing::simulate(cluster, jobs, p);
    for (const auto& r : out.run.jobs)
      if (r.start == 0) return r.job_id;
    return std::string("none");
  };
  std::map<std::string, int> counts;
  const int draws = 3000;
  for (int seed = 1; seed <= draws; ++seed) ++counts[first_started(4, static_cast<std::uint64_t>(seed))];
  EXPECT_NEAR(counts["short"] / double(draws), 0.704, 0.03);
  EXPECT_NEAR(counts["mid"] / double(draws), 0.222, 0.03);
  EXPECT_NEAR(counts["long"] / double(draws), 0.070, 0.02);
  // At temperature 0.25 the short job is 10^8 times as likely as the next: in 300 draws, never another.
  for (int seed = 1; seed <= 300; ++seed) EXPECT_EQ(first_started(0.25, static_cast<std::uint64_t>(seed)), "short") << seed;
  // Seeded: the same seed, the same schedule.
  for (int seed = 1; seed <= 20; ++seed) EXPECT_EQ(first_started(4, static_cast<std::uint64_t>(seed)), first_started(4, static_cast<std::uint64_t>(seed)));
}

TEST(SampledSjf, SeededRunsAndTheTemperatureOfASampledModel) {
  const SjfModel m(29);
  const Workload& s = m.workload;
  const EnvOptions& o = m.options;
  const std::string& model = m.path;
  const std::span<const trace::JobSpec> window = m.window();
  const auto starts = [&](const std::string& priority, std::uint64_t seed, double temperature) {
    policy::ProfileOptions p = o.profile;
    p.priority = priority;
    p.priority_options.seed = seed;
    p.priority_options.temperature = temperature;
    auto scheduler = policy::make_profile(p);
    sim::Engine engine(s.cluster, window, o.engine);
    engine.run(*scheduler);
    std::vector<Seconds> out;
    for (JobIndex j = 0; j < 256; ++j) out.push_back(engine.job(j).start);
    return out;
  };
  const auto sjf = starts("sjf-sampled", 7, 1);
  EXPECT_EQ(starts("sjf-sampled", 7, 1), sjf);
  EXPECT_NE(starts("sjf-sampled", 8, 1), sjf);
  EXPECT_NE(starts("sjf-sampled", 7, 3), sjf);
  // A model's temperature changes its draws; temperature 1 is the policy's own distribution.
  const auto sampled = starts("rl-sampled:" + model, 7, 1);
  EXPECT_EQ(starts("rl-sampled:" + model, 7, 1), sampled);
  EXPECT_NE(starts("rl-sampled:" + model, 7, 5), sampled);
  // Out of its bounds, the temperature is refused wherever the policy is built.
  EXPECT_THROW(starts("sjf-sampled", 7, 0), InputError);
  EXPECT_THROW(starts("rl-sampled:" + model, 7, 1000), InputError);
  EXPECT_THROW(starts("sjf-sampled:3", 7, 1), InputError);
}

TEST(RlPolicy, TheFirstJobStartedIsTheFirstOfTheOrderGivenBefore) {
  // The Slurm advisor prints a picker's order, then lets it start jobs: a sampled model must start the
  // job it put first, not draw again.
  const Workload s;
  TempDir dir;
  EnvOptions o;
  const std::string model = dir.path + "/policy.json";
  write_file(model, policy_file(random_net(Arch::mlp, feature_count(o.observation.features), 31), o, 1).dump());
  const std::span<const trace::JobSpec> window = std::span(s.trace.jobs).subspan(700, 40);
  for (const std::uint64_t seed : {1, 2, 3, 4, 5}) {
    policy::ProfileOptions p = o.profile;
    p.priority = "rl-sampled:" + model;
    p.priority_options.seed = seed;
    auto scheduler = policy::make_profile(p);
    sim::Engine engine(s.cluster, window, o.engine);
    engine.resume(window.back().submit, {});  // every job queued on an empty cluster
    scheduler->begin_run(engine);
    const JobIndex first = scheduler->picker().order(sim::View(engine)).front();
    struct First final : sim::Observer {
      JobIndex job = -1;
      void on_start(Seconds, JobIndex j) override {
        if (job < 0) job = j;
      }
    } started;
    engine.add_observer(&started);
    scheduler->decide(engine);
    EXPECT_EQ(started.job, first) << "seed " << seed;
  }
}

TEST(Observation, ExtendedRankedAndRealisticFeaturesStayInRange) {
  const Workload s;
  for (const FeatureSet set : {FeatureSet::extended, FeatureSet::ranked, FeatureSet::realistic}) {
    EnvOptions o;
    o.baseline = "f1";  // an order unlike arrival, so that rank and age rank differ
    o.observation.features = set;
    if (set == FeatureSet::realistic) o.engine.runtime = sim::RuntimeKnowledge::predicted;
    const int nf = feature_count(set);
    Env env(s.cluster, s.trace.jobs, o);
    Rng rng(4);
    const Observation* obs = &env.reset(rng, Split::train);
    int decisions = 0, rank_differs = 0, doubts = 0, unknown_doubts = 0, sources = 0;
    for (bool done = false; !done && decisions < 2000; ++decisions) {
      ASSERT_EQ(obs->features, nf);
      for (int slot = 0; slot < obs->visible; ++slot) {
        const float* f = obs->values.data() + static_cast<std::size_t>(slot * nf);
        for (int k = 0; k < nf; ++k) ASSERT_TRUE(f[k] >= 0 && f[k] < 1) << "feature " << k << " = " << f[k];
        if (set == FeatureSet::realistic) {
          const sim::JobView job = sim::View(env.engine()).job(obs->jobs[static_cast<std::size_t>(slot)]);
          ASSERT_FLOAT_EQ(f[12], static_cast<float>(job.estimate_source()) / 5);
          const bool unknown = job.estimate_doubt() == sim::EstimateDoubt::kUnknown;
          ASSERT_FLOAT_EQ(f[11], unknown ? 1 - 1e-5f : std::min(job.estimate_doubt() / 3, 1 - 1e-5f));
          unknown_doubts += unknown;
          doubts += !unknown && f[11] > 0;
          sources += f[12] > 0;
        }
        if (set != FeatureSet::extended) {
          ASSERT_FLOAT_EQ(f[10], obs->visible > 1 ? std::min(slot / static_cast<float>(obs->visible - 1), 1 - 1e-5f) : 0.0f);
          rank_differs += f[10] != f[8];
        }
      }
      if (set != FeatureSet::extended && obs->visible < kSlots) {
        EXPECT_EQ(obs->values[static_cast<std::size_t>(obs->visible * nf + 10)], 1.0f) << "padding";
      }
      done = env.step(0).done;
      obs = &env.observation();
    }
    EXPECT_GT(decisions, 100);
    if (set != FeatureSet::extended) {
      EXPECT_GT(rank_differs, 0);
    }
    if (set == FeatureSet::realistic) {  // the features vary: users with and without history, specific and general estimates
      EXPECT_GT(doubts, 0);
      EXPECT_GT(unknown_doubts, 0);
      EXPECT_GT(sources, 0);
    }
  }
}

// A learner that records what it is given and changes the weights a little each update.
class RecordingLearner final : public Learner {
 public:
  std::vector<std::vector<int>> actions;
  PolicyNet net = random_net(Arch::mlp, kFeatures, 9);
  UpdateStats update(const Batch& b) override {
    actions.push_back(b.actions);
    net.layers[0].weight[0] += 0.5f;
    return {};
  }
  double imitate(const Batch&) override { return 0; }
  PolicyNet policy() const override { return net; }
  void set_policy(const PolicyNet& n) override { net = n; }
  void save(const std::string& path, const nlohmann::json& state) const override { write_file(path, state.dump()); }
  nlohmann::json load(const std::string& path) override {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
  }
  void export_torchscript(const std::string&) const override {}
};

// The clairvoyant teacher picks, of the legal slots, the job with the shortest true duration: with
// oracle runtimes that is SJF's own pick (reward 0 against an SJF baseline); with predicted runtimes it
// departs from SJF and, knowing what SJF only estimates, schedules better.
TEST(Rollout, TheClairvoyantTeacherIsSjfWithTrueDurations) {
  policy::register_builtins();
  const cluster::ClusterSpec cluster = cluster::load_cluster("helios");
  const trace::Trace trace = workload::generate(workload::load_model("helios-users"), cluster, {.jobs = 3000, .load = 0.95, .seed = 2});
  EnvOptions o;
  o.window.length = 200;
  o.window.warmup = 300;
  o.baseline = "sjf";
  o.commit = false;
  o.profile = policy::ProfileOptions{};
  o.profile.priority = "sjf";
  o.profile.blocking = policy::Blocking::pool;
  o.profile.backfill = true;
  o.observation.features = FeatureSet::realistic;
  {
    Env env(cluster, trace.jobs, o);
    for (std::uint64_t k = 0; k < 3; ++k) {
      Rng rng(k);
      const Episode e = play_clairvoyant(env, rng, Split::train);
      EXPECT_EQ(e.reward, 0.0) << k;
      EXPECT_GT(e.decisions(), 0u) << k;
    }
  }
  o.engine.runtime = sim::RuntimeKnowledge::predicted;
  Env env(cluster, trace.jobs, o);
  double teacher = 0;
  bool departs = false;
  for (std::uint64_t k = 0; k < 4; ++k) {
    Rng a(k), b(k);
    const Episode e = play_clairvoyant(env, a, Split::train);
    const Episode base = play_baseline(env, b, Split::train);
    EXPECT_EQ(base.reward, 0.0) << k;
    departs = departs || e.actions != base.actions;
    teacher += e.reward;
  }
  EXPECT_TRUE(departs);
  EXPECT_GT(teacher / 4, 0.0);
}

// The sjf-sampled teacher draws as the heuristic does. Jobs of 100, 110 and 121 s in turn, all queued at
// 0 and each needing the whole node, so that any 3-job window holds one of each and only the first pick
// starts then. Weights 100^-log2(estimate / 100 s): 1, 0.531 and 0.282, so the first pick is the 100 s
// job (slot 0 of SJF's order) with probability 0.552, the 110 s one with 0.293 and the 121 s one with 0.155.
TEST(Rollout, TheSjfSampledTeacherDrawsAsTheHeuristic) {
  policy::register_builtins();
  const cluster::ClusterSpec cluster = testing::cluster_from("name: c\npools:\n  - {name: p, nodes: 1, gpus_per_node: 8}\n");
  std::vector<trace::JobSpec> jobs;
  for (int i = 0; i < 60; ++i) jobs.push_back(testing::job(fmt::format("j{}", i), 0, std::array{100, 110, 121}[i % 3], 8));
  EnvOptions o;
  o.window.length = 3;
  o.baseline = "sjf";
  o.commit = false;
  o.profile.priority = "sjf";
  Env env(cluster, jobs, o);
  std::array<int, 3> first{};
  const int episodes = 3000;
  for (int k = 0; k < episodes; ++k) {
    Rng rng(static_cast<std::uint64_t>(k));
    const Episode e = play_sjf_sampled(env, rng, Split::train);
    ASSERT_GE(e.decisions(), 3u);  // and a pick that does not fit yet waits for the next event
    ASSERT_EQ(e.observations.size(), e.decisions() * kSlots * static_cast<std::size_t>(e.features)) << "the teacher's episodes are recorded";
    ++first.at(static_cast<std::size_t>(e.actions[0]));
    ASSERT_EQ(e.targets.size(), e.decisions() * kActions) << "and its probabilities, for cloning";
    for (std::size_t d = 0; d < e.decisions(); ++d) {
      double total = 0;
      for (int a = 0; a < kActions; ++a) {
        const float p = e.targets[d * kActions + static_cast<std::size_t>(a)];
        total += p;
        if (!e.masks[d * kActions + static_cast<std::size_t>(a)]) {
          ASSERT_EQ(p, 0.0f) << "a masked action has probability 0";
        }
      }
      ASSERT_NEAR(total, 1.0, 1e-5);
    }
    if (k == 0) {
      EXPECT_NEAR(e.targets[0], 0.552, 0.001);
      EXPECT_NEAR(e.targets[1], 0.293, 0.001);
      EXPECT_NEAR(e.targets[2], 0.155, 0.001);
      Batch b;
      b.features = e.features;
      b.append(e);
      EXPECT_GT(b.target_entropy(), 0.0);
      Rng other(99);
      EXPECT_THROW(b.append(play_baseline(env, other, Split::train)), InvariantError) << "a batch has targets for all its episodes or none";
    }
  }
  EXPECT_NEAR(first[0] / double(episodes), 0.552, 0.03);
  EXPECT_NEAR(first[1] / double(episodes), 0.293, 0.03);
  EXPECT_NEAR(first[2] / double(episodes), 0.155, 0.025);
  EXPECT_NEAR(sjf_sampled_score(200) - sjf_sampled_score(100), -std::log(100.0), 1e-9) << "half the estimate: 100 times the weight";
}

// --validation-temperature: validation draws the picks instead of taking the argmax. The training
// rollouts are the same; the validation returns are not; config.json records the setting only when set.
TEST(Trainer, ValidationDrawsThePicksAtTheValidationTemperature) {
  const Workload s;
  const auto run = [&](double temperature, std::string& config) {
    TempDir dir;
    TrainOptions o;
    o.env.window.length = 64;
    o.epochs = 2;
    o.trajs = 3;
    o.threads = 2;
    o.validation_windows = 3;
    o.validation_temperature = temperature;
    o.progress = false;
    o.out = dir.path;
    RecordingLearner learner;
    const auto records = train(s.cluster, s.trace.jobs, o, learner, {});
    config = read_file((std::filesystem::path(dir.path) / "config.json").string()).value_or("");
    return std::pair(learner.actions, records);
  };
  std::string greedy_config, drawn_config, hot_config;
  const auto [greedy_actions, greedy] = run(0, greedy_config);
  const auto [drawn_actions, drawn] = run(1, drawn_config);
  const auto [hot_actions, hot] = run(5, hot_config);
  EXPECT_EQ(greedy_actions, drawn_actions);
  EXPECT_EQ(greedy_actions, hot_actions);
  ASSERT_EQ(greedy.size(), 2u);
  for (std::size_t e = 0; e < 2; ++e) {
    EXPECT_EQ(greedy[e].mean_return, drawn[e].mean_return);
    EXPECT_NE(greedy[e].validation_return, drawn[e].validation_return) << e;
    EXPECT_NE(drawn[e].validation_return, hot[e].validation_return) << e;
  }
  // A temperature so small that the logits over it overflow floats draws the argmax (it drew the last
  // legal job, from a NaN sum, before).
  for (const double tiny : {1e-45, 1e-300}) {
    std::string tiny_config;
    const auto [tiny_actions, cold] = run(tiny, tiny_config);
    for (std::size_t e = 0; e < 2; ++e) EXPECT_EQ(cold[e].validation_return, greedy[e].validation_return) << tiny << " " << e;
  }
  EXPECT_EQ(greedy_config.find("validation_temperature"), std::string::npos);
  EXPECT_NE(drawn_config.find("\"validation_temperature\": 1"), std::string::npos);
  std::string ignored;
  for (const double bad : {-0.5, 101.0}) EXPECT_THROW(run(bad, ignored), InputError) << bad;
  TrainOptions none;
  none.validation_windows = 0;
  none.validation_temperature = 1;
  none.progress = false;
  RecordingLearner learner;
  EXPECT_THROW(train(s.cluster, s.trace.jobs, none, learner, {}), InputError) << "a temperature for validation there is not";
}

TEST(Trainer, RolloutsDoNotDependOnTheThreadCount) {
  const Workload s;
  std::vector<std::vector<std::vector<int>>> runs;
  for (const int threads : {1, 2}) {
    TempDir dir;
    TrainOptions o;
    o.env.window.length = 64;
    o.epochs = 2;
    o.trajs = 5;
    o.threads = threads;
    o.validation_windows = 2;
    o.progress = false;
    o.out = dir.path;
    RecordingLearner learner;
    const auto records = train(s.cluster, s.trace.jobs, o, learner, {});
    ASSERT_EQ(records.size(), 2u);
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir.path) / "best.json"));
    runs.push_back(learner.actions);
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0][0].size(), 5u * 64);  // one decision starts one job: every job of every window, once
}

}  // namespace
}  // namespace rltune::rl
