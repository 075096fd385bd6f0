// The one decision pass, rule by rule (policy/decision_pass.h), and the agent-driven picker's properties
// (commit, reconsider, skip: rl/agent_picker.h).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>
#include <span>

#include "helpers.h"
#include "policy/decision_pass.h"
#include "policy/registry.h"
#include "rl/agent_picker.h"

namespace rltune::policy {
namespace {

using testing::job;

// Two pools of one 8-GPU node each, for vc a and vc b. At t=100, "r" holds 6 GPUs of pool a until 300
// and "s" 6 GPUs of pool b until 200; the others are queued.
const std::vector<trace::JobSpec>& jobs() {
  static const std::vector<trace::JobSpec> all = {
      job("r", 0, 300, 6, "a"),      job("s", 0, 200, 6, "b"),
      job("a4", 10, 50, 4, "a"),     // does not fit in a (2 free); it could start at 300 (the shadow time)
      job("a2short", 20, 100, 2, "a"),  // fits in a and ends at 200, before 300
      job("a2long", 30, 500, 2, "a"),   // fits in a but ends at 600, after 300
      job("b2", 40, 10, 2, "b"),     // fits in b, ends at 110
      job("b2long", 50, 500, 2, "b"),  // fits in b, ends at 600
      job("b4", 60, 10, 4, "b"),     // does not fit in b
  };
  return all;
}

struct Offered {
  const char* job;
  Outcome expected;
};

struct Case {
  const char* rule;
  Blocking blocking;
  bool backfill;
  std::vector<Offered> offers;
  bool closed;                      // after the offers
  std::vector<const char*> legal;   // may_offer after the offers
  std::vector<const char*> illegal;
};

TEST(DecisionPass, EachRuleAnswersEachOffer) {
  const auto cluster = testing::cluster_from(
      "pools: [{name: a, nodes: 1, gpus_per_node: 8, accepts: {vc: [a]}}, "
      "{name: b, nodes: 1, gpus_per_node: 8, accepts: {vc: [b]}}]");
  const Outcome started = Outcome::started, blocked = Outcome::blocked, not_now = Outcome::not_now;
  const Blocking global = Blocking::global, pool = Blocking::pool;
  const std::vector<Case> cases = {
      {"an open pool starts a job that fits", global, false, {{"a2short", started}, {"b2", started}}, false, {"a2long"}, {}},
      {"a job that does not fit blocks; global blocking closes every pool", global, false,
       {{"a4", blocked}, {"b2", not_now}, {"a2short", not_now}}, true, {}, {"b2", "a2short", "a4"}},
      {"pool blocking closes only the pools of the blocked job", pool, false,
       {{"a4", blocked}, {"a2short", not_now}, {"b2", started}, {"b4", blocked}}, true, {}, {"a2long", "b2long"}},
      {"backfill starts a job that fits now and ends before the reservation", global, true,
       {{"a4", blocked}, {"a2short", started}}, false, {"b2"}, {"a2long", "b2long", "a4"}},
      {"backfill does not start a job that would delay the reservation", global, true,
       {{"a4", blocked}, {"a2long", not_now}, {"b2long", not_now}}, false, {"a2short", "b2"}, {"a2long"}},
      {"under pool blocking the reservation binds only its own pool", pool, true,
       {{"a4", blocked}, {"b2long", started}, {"a2long", not_now}, {"a2short", started}}, false, {"b2"}, {"a2long"}},
      {"under pool blocking with backfilling the other pools stay open", pool, true,
       {{"b4", blocked}, {"b2", started}}, false, {"a4", "a2long"}, {"b2long"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.rule);
    sim::Engine engine(cluster, jobs());
    const cluster::Placement r{0, {{0, 6}}}, s{1, {{1, 6}}};
    const sim::Engine::Running running[] = {{0, r, 0}, {1, s, 0}};
    engine.resume(100, running);
    DecisionPass pass(c.blocking, c.backfill, make_greedy_placement());
    pass.begin(engine);
    const auto index = [&](const char* id) {
      for (JobIndex j = 0; j < static_cast<JobIndex>(engine.job_count()); ++j)
        if (engine.job(j).spec->id == id) return j;
      throw std::runtime_error(fmt::format("no job {}", id));
    };
    for (const Offered& o : c.offers) {
      const JobIndex j = index(o.job);
      // A legal pick is one whose offer can start it or close a pool.
      EXPECT_EQ(pass.may_offer(j), o.expected != not_now) << o.job;
      EXPECT_EQ(pass.offer(j, {}), o.expected) << o.job;
      EXPECT_EQ(engine.job(j).state, o.expected == started ? sim::JobState::running : sim::JobState::queued) << o.job;
    }
    EXPECT_EQ(pass.closed(), c.closed);
    for (const char* id : c.legal) EXPECT_TRUE(pass.may_offer(index(id))) << id;
    for (const char* id : c.illegal) {
      if (engine.job(index(id)).state == sim::JobState::queued) {
        EXPECT_FALSE(pass.may_offer(index(id))) << id;
      }
    }
    // A new pass opens every pool again.
    pass.begin(engine);
    EXPECT_FALSE(pass.closed());
  }
}

TEST(DecisionPass, TheReservationIsTheShadowTime) {
  const auto cluster = testing::cluster_from("pools: [{name: a, nodes: 1, gpus_per_node: 8}]");
  // Running: 4 GPUs until 300, 2 until 200. A 4-GPU job fits once the first ends (2 free + 2 = 4 at 200).
  const std::vector<trace::JobSpec> specs = {job("x", 0, 300, 4), job("y", 0, 200, 2), job("w", 10, 50, 4),
                                             job("fits-by-200", 20, 100, 2), job("ends-at-201", 20, 101, 2)};
  sim::Engine engine(cluster, specs);
  const sim::Engine::Running running[] = {{0, {0, {{0, 4}}}, 0}, {1, {0, {{0, 2}}}, 0}};
  engine.resume(100, running);
  engine.keep_backfill_indexes();  // a pass that backfills asks for them; shadow_time needs them
  auto placement = make_greedy_placement();
  EXPECT_EQ(shadow_time(sim::View(engine), 2, 0, *placement), 200);
  DecisionPass pass(Blocking::global, true, std::move(placement));
  pass.begin(engine);
  // 2 GPUs are free: w (4) cannot start and reserves t=200.
  EXPECT_EQ(pass.offer(2, {}), Outcome::blocked);
  EXPECT_EQ(pass.offer(4, {}), Outcome::not_now);  // would end at 201
  EXPECT_EQ(pass.offer(3, {}), Outcome::started);  // ends at 200
}

TEST(DecisionPass, OverdueJobsAreReleasedAtTheirCorrectedEnds) {
  const auto cluster = testing::cluster_from("pools: [{name: a, nodes: 1, gpus_per_node: 8}]");
  // At t=100, four jobs of 2 GPUs each run. a and d have outlived their estimates (their durations here)
  // and are expected to run as long again as they have so far: a until 200, d until 180; b ends at 150 and
  // c at 295 as estimated. Released in that order of expected end (b, d, a, c), 4 GPUs come free at 180,
  // 6 at 200 and 8 at 295.
  const std::vector<trace::JobSpec> specs = {job("a", 0, 50, 2),   job("d", 20, 60, 2),  job("b", 90, 60, 2),
                                             job("c", 95, 200, 2), job("w4", 96, 10, 4), job("w6", 97, 10, 6),
                                             job("w8", 98, 10, 8)};
  sim::Engine engine(cluster, specs);
  const sim::Engine::Running running[] = {
      {0, {0, {{0, 2}}}, 0}, {1, {0, {{0, 2}}}, 20}, {2, {0, {{0, 2}}}, 90}, {3, {0, {{0, 2}}}, 95}};
  engine.resume(100, running);
  engine.keep_backfill_indexes();
  const sim::View view(engine);
  ASSERT_EQ(view.expected_end(0), 200);
  ASSERT_EQ(view.expected_end(1), 180);
  const auto placement = make_greedy_placement();
  EXPECT_EQ(shadow_time(view, 4, 0, *placement), 180);
  EXPECT_EQ(shadow_time(view, 5, 0, *placement), 200);
  EXPECT_EQ(shadow_time(view, 6, 0, *placement), 295);
}

// Past its time limit, a job runs on in a replay and is expected to run as long again as it has; on a
// live cluster (the Slurm advisor), which kills it there, it is expected at once.
TEST(DecisionPass, AJobPastItsLimitIsExpectedAtOnceOnlyWhereItIsKilled) {
  const auto cluster = testing::cluster_from("pools: [{name: a, nodes: 1, gpus_per_node: 8}]");
  trace::JobSpec overrun = job("a", 0, 50, 2);
  overrun.requested_time = 50;
  const std::vector<trace::JobSpec> specs = {overrun, job("w", 90, 10, 8)};
  const sim::Engine::Running running[] = {{0, {0, {{0, 2}}}, 0}};
  for (const bool killed : {false, true}) {
    sim::Engine engine(cluster, specs, {.runtime = sim::RuntimeKnowledge::requested, .killed_at_limit = killed});
    engine.resume(100, running);
    EXPECT_EQ(sim::View(engine).expected_end(0), killed ? 100 : 200) << killed;
  }
}

TEST(DecisionPass, ClosesOnceNoQueuedJobCouldBackfill) {
  const auto cluster = testing::cluster_from("pools: [{name: a, nodes: 1, gpus_per_node: 8}]");
  // At t=100, x holds 6 GPUs until 300; w (4 GPUs) blocks and reserves 300. Of the 2 free GPUs, "long"
  // would end at 600, after the reservation; "short" would end at 200.
  const std::vector<trace::JobSpec> specs = {job("x", 0, 300, 6), job("w", 10, 50, 4), job("long", 20, 500, 2),
                                             job("short", 30, 100, 2)};
  const sim::Engine::Running running[] = {{0, {0, {{0, 6}}}, 0}};
  for (const bool with_short : {false, true}) {
    SCOPED_TRACE(with_short ? "with short" : "without short");
    sim::Engine engine(cluster, std::span(specs).first(with_short ? 4 : 3));
    engine.resume(100, running);
    DecisionPass pass(Blocking::global, true, make_greedy_placement());
    pass.begin(engine);
    EXPECT_FALSE(pass.futile(1));
    EXPECT_EQ(pass.offer(1, {}), Outcome::blocked);
    EXPECT_TRUE(pass.futile(1));  // it needs more GPUs than are free
    EXPECT_TRUE(pass.futile(2));  // would end after the reservation
    EXPECT_EQ(pass.closed(), !with_short);  // GPUs are free, but only "short" could use them
    if (!with_short) continue;
    EXPECT_FALSE(pass.futile(3));
    EXPECT_EQ(pass.offer(3, {}), Outcome::started);
    EXPECT_TRUE(pass.futile(3));  // started
    EXPECT_TRUE(pass.closed());
  }
}

TEST(DecisionPass, ClosesWhenTheFreeGpusAreTooScatteredForThePlacement) {
  const auto cluster = testing::cluster_from("pools: [{name: a, nodes: 2, gpus_per_node: 8}]");
  // At t=100, x and y hold 4 GPUs of each node until 300; w (16 GPUs) blocks and reserves 300. "short"
  // (8 GPUs, ends at 200) fits only split 4 + 4: greedy keeps a job of one node's size on one node.
  const std::vector<trace::JobSpec> specs = {job("x", 0, 300, 4), job("y", 0, 300, 4), job("w", 10, 50, 16), job("short", 30, 100, 8)};
  const sim::Engine::Running running[] = {{0, {0, {{0, 4}}}, 0}, {1, {0, {{1, 4}}}, 0}};
  for (const bool splits : {false, true}) {
    SCOPED_TRACE(splits ? "balance" : "greedy");
    sim::Engine engine(cluster, specs);
    engine.resume(100, running);
    DecisionPass pass(Blocking::global, true, splits ? make_balance_placement() : make_greedy_placement());
    pass.begin(engine);
    EXPECT_EQ(pass.offer(2, {}), Outcome::blocked);
    EXPECT_FALSE(pass.futile(3));  // 8 GPUs are free in the pool, and it would end in time
    EXPECT_EQ(pass.closed(), !splits);
    EXPECT_EQ(pass.offer(3, {}), splits ? Outcome::started : Outcome::not_now);
  }
}

// A learned policy's picker with a scripted agent: `choose` returns a legal action of the observation.
class ScriptedPicker final : public Picker {
 public:
  using Choose = std::function<int(const rl::Observation&, const sim::View&)>;
  ScriptedPicker(rl::AgentOptions options, Choose choose)
      : agent_(make_priority("fcfs", {}), options), choose_(std::move(choose)) {}
  void begin_run(const DecisionPass& /*pass*/, const sim::Engine& /*engine*/) override { agent_.begin_run(); }
  std::span<const JobIndex> order(const sim::View& view) override { return agent_.order(view); }
  void decide(DecisionPass& pass) override {
    while (agent_.await_pick(pass))
      if (!agent_.pick(pass, choose_(agent_.observation(), pass.view()))) return;
  }

 private:
  rl::AgentPicker agent_;
  Choose choose_;
};

// Start times by job id after a run of `picker` on one 8-GPU node.
std::map<std::string, Seconds> run(const std::vector<trace::JobSpec>& specs, std::unique_ptr<Picker> picker) {
  register_builtins();
  const auto cluster = testing::cluster_from("pools: [{name: a, nodes: 1, gpus_per_node: 8}]");
  ProfileScheduler scheduler(testing::profile("fcfs"), std::move(picker), make_greedy_placement());
  sim::Engine engine(cluster, specs);
  engine.run(scheduler);
  std::map<std::string, Seconds> starts;
  for (JobIndex j = 0; j < static_cast<JobIndex>(engine.job_count()); ++j) starts[engine.job(j).spec->id] = engine.job(j).start;
  return starts;
}

// The legal slot whose job asks for the fewest GPUs (the first on ties).
int smallest(const rl::Observation& obs, const sim::View& view) {
  int best = -1;
  for (int s = 0; s < obs.visible; ++s)
    if (obs.mask[static_cast<std::size_t>(s)] &&
        (best < 0 || view.job(obs.jobs[static_cast<std::size_t>(s)]).gpus() <
                         view.job(obs.jobs[static_cast<std::size_t>(best)]).gpus()))
      best = s;
  return best;
}

TEST(AgentPicker, ACommittedPickIsOfferedFirstUntilItStartsAReconsideredOneIsNot) {
  // r holds the node until 100. a (8 GPUs) arrives at 10 and is picked: it cannot start. c (1 GPU)
  // arrives at 20; the agent prefers small jobs.
  const std::vector<trace::JobSpec> specs = {job("r", 0, 100, 8), job("a", 10, 50, 8), job("c", 20, 10, 1)};
  // Committed: a starts first when r ends; c waits for a.
  const auto committed = run(specs, std::make_unique<ScriptedPicker>(rl::AgentOptions{{}, false, true}, smallest));
  EXPECT_EQ(committed.at("a"), 100);
  EXPECT_EQ(committed.at("c"), 150);
  // Reconsidered: at 100 the agent picks c, and a starts when c ends.
  const auto reconsidered = run(specs, std::make_unique<ScriptedPicker>(rl::AgentOptions{{}, false, false}, smallest));
  EXPECT_EQ(reconsidered.at("c"), 100);
  EXPECT_EQ(reconsidered.at("a"), 110);
}

TEST(AgentPicker, SkipWaitsUntilTheNextEventOrTheSkipTime) {
  // The agent skips the first decision at which job a may start, then prefers small jobs.
  bool skipped = false;
  const auto skip_a_once = [&](const rl::Observation& obs, const sim::View& view) {
    for (int s = 0; s < obs.visible && !skipped; ++s)
      if (obs.mask[static_cast<std::size_t>(s)] && view.job(obs.jobs[static_cast<std::size_t>(s)]).id() == "a") {
        EXPECT_TRUE(obs.mask[rl::kSkip]);  // something is still to happen
        skipped = true;
        return rl::kSkip;
      }
    return smallest(obs, view);
  };
  const rl::AgentOptions may_skip{{}, true, true};
  // b arrives at 300, before the skip time (600) is up: the next decision is at 300.
  const auto next_event = run({job("a", 0, 1000, 1), job("b", 300, 10, 1)}, std::make_unique<ScriptedPicker>(may_skip, skip_a_once));
  EXPECT_EQ(next_event.at("a"), 300);
  EXPECT_EQ(next_event.at("b"), 300);
  // Nothing happens before r ends at 5000: the next decision is kSkipTime later.
  skipped = false;
  const auto skip_time = run({job("r", 0, 5000, 1), job("a", 1, 1000, 1)}, std::make_unique<ScriptedPicker>(may_skip, skip_a_once));
  EXPECT_EQ(skip_time.at("a"), 1 + rl::kSkipTime);
  // Without --skip the action is never offered.
  const auto no_skip = run({job("a", 0, 1000, 1), job("b", 300, 10, 1)},
                           std::make_unique<ScriptedPicker>(rl::AgentOptions{{}, false, true},
                                                            [&](const rl::Observation& obs, const sim::View& v) {
                                                              EXPECT_FALSE(obs.mask[rl::kSkip]);
                                                              return smallest(obs, v);
                                                            }));
  EXPECT_EQ(no_skip.at("a"), 0);
}

TEST(AgentPicker, JobsBeyondTheSlotsAreOfferedInBaselineOrderWhenNoVisibleJobMayStart) {
  // 130 queued 8-GPU jobs fill the 128 slots and wait behind r; the 1-GPU job in slot 130 could start.
  // Pool blocking with two pools: the visible jobs only use pool a, the last one pool b.
  std::vector<trace::JobSpec> specs = {job("r", 0, 100, 8, "a")};
  for (int i = 0; i < 129; ++i) specs.push_back(job(fmt::format("q{}", i), 1, 10, 8, "a"));
  specs.push_back(job("small", 2, 10, 1, "b"));
  register_builtins();
  const auto cluster = testing::cluster_from(
      "pools: [{name: a, nodes: 1, gpus_per_node: 8, accepts: {vc: [a]}}, "
      "{name: b, nodes: 1, gpus_per_node: 8, accepts: {vc: [b]}}]");
  ProfileScheduler scheduler(testing::profile("fcfs", Blocking::pool),
                             std::make_unique<ScriptedPicker>(rl::AgentOptions{}, smallest), make_greedy_placement());
  sim::Engine engine(cluster, specs);
  engine.run(scheduler);
  EXPECT_EQ(engine.job(static_cast<JobIndex>(specs.size() - 1)).start, 2);
}

}  // namespace
}  // namespace rltune::policy
