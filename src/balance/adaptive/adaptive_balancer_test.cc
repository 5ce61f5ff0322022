#include "balance/adaptive/adaptive_balancer.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "balance/balancer_factory.h"
#include "balance/evidence/instance_evidence.h"
#include "balance/stacks.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
const auto kAll = [](size_t) { return true; };

// Candidates with evidence the test controls: latency samples (ms) and catalog prices.
struct Fleet {
  explicit Fleet(size_t n) : evidence(std::make_unique<InstanceEvidence[]>(n)), loads(n) {
    candidates = make_candidates(n);
    for (size_t i = 0; i < n; ++i) candidates[i].evidence = &evidence[i];
  }
  void sample(size_t i, double latency_ms) { evidence[i].latency.record(latency_ms); }

  std::unique_ptr<InstanceEvidence[]> evidence;
  std::vector<CandidateSpec> candidates;
  LoadsFixture loads;
};

// A fallback that records what it is asked, and always picks `answer`.
class RecordingFallback final : public LoadBalancer {
 public:
  explicit RecordingFallback(size_t answer) : answer_(answer) {}
  std::string_view name() const override { return "recording"; }
  std::optional<size_t> pick(const RouteContext&, const Loads&) override {
    ++*picks;
    return answer_;
  }
  void observe(size_t index, const RouteContext& ctx) override {
    observed->push_back({index, std::string(ctx.session_key)});
  }
  std::shared_ptr<int> picks = std::make_shared<int>(0);
  std::shared_ptr<std::vector<std::pair<size_t, std::string>>> observed =
      std::make_shared<std::vector<std::pair<size_t, std::string>>>();

 private:
  size_t answer_;
};

AdaptivePolicy enabled_policy(uint32_t min_samples = 5, double exploration = 0) {
  return {.enabled = true,
          .latency_weight = 1,
          .cost_weight = 0.5,
          .load_weight = 0.25,
          .exploration_ratio = exploration,
          .min_samples = min_samples};
}

std::unique_ptr<AdaptiveBalancer> make_adaptive(const Fleet& fleet, const AdaptivePolicy* policy,
                                                AdaptiveRouteState* state, Random& random,
                                                const Clock& clock) {
  auto fallback = make_pipeline(fleet.candidates, {.random = &random, .clock = &clock}, {});
  EXPECT_TRUE(fallback);
  return std::make_unique<AdaptiveBalancer>(fleet.candidates, std::move(*fallback), policy, state,
                                            random, clock);
}

void serve(AdaptiveBalancer& lb, int requests) {
  for (int i = 0; i < requests; ++i) lb.observe(0, {});
}

TEST(AdaptiveScoreTest, MinMaxLowerIsBetter) {
  struct Case {
    const char* what;
    std::vector<double> raw;
    std::vector<bool> eligible;
    std::vector<double> want;
  };
  const Case cases[] = {
      {"linear between best and worst", {10, 20, 30}, {1, 1, 1}, {1, 0.5, 0}},
      {"unknown is 0.5", {10, kNan, 30}, {1, 1, 1}, {1, 0.5, 0}},
      {"all equal is 1.0", {7, 7, 7}, {1, 1, 1}, {1, 1, 1}},
      {"one known is all-equal", {7, kNan}, {1, 1}, {1, 0.5}},
      {"none known", {kNan, kNan}, {1, 1}, {0.5, 0.5}},
      {"an ineligible value does not shape the range", {10, 20, 1000}, {1, 1, 0}, {1, 0, 0}},
      {"an ineligible minimum does not either", {1, 20, 30}, {0, 1, 1}, {0, 1, 0}},
  };
  for (const Case& c : cases) {
    std::vector<double> values = c.raw;
    adaptive_score_lower_is_better(values, [&](size_t i) { return bool(c.eligible[i]); });
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_DOUBLE_EQ(values[i], c.want[i]) << c.what << " [" << i << "]";
  }
}

// SPEC §6.10: with the policy disabled, every pick is the default pipeline stack's: two balancers
// over the same candidates and same-seeded randoms answer alike, pick for pick, even with latency
// samples and a served count that would engage an enabled policy.
TEST(AdaptiveBalancerTest, DisabledPolicyPicksExactlyAsThePipelineStack) {
  Fleet fleet(5);
  for (size_t i = 0; i < 5; ++i) fleet.sample(i, 10.0 * (i + 1));
  ManualClock clock;
  const AdaptivePolicy disabled{.enabled = false, .min_samples = 0};
  const AdaptivePolicy zero_blend{
      .enabled = true, .latency_weight = 0, .cost_weight = 0, .load_weight = 0, .min_samples = 0};
  for (const AdaptivePolicy* policy :
       {&disabled, &zero_blend, static_cast<const AdaptivePolicy*>(nullptr)}) {
    SeededRandom random_a(99), random_b(99), driver(5);
    auto pipeline = make_pipeline(fleet.candidates, {.random = &random_a, .clock = &clock}, {});
    ASSERT_TRUE(pipeline);
    AdaptiveRouteState state("m");
    auto adaptive = make_adaptive(fleet, policy, &state, random_b, clock);
    for (int i = 0; i < 1000; ++i) {
      for (size_t c = 0; c < 5; ++c) fleet.loads.set(c, static_cast<uint32_t>(driver.uniform(4)));
      const uint64_t mask = driver.next_u64() | 1;  // never empty
      const auto eligible = [mask](size_t c) { return ((mask >> c) & 1) != 0; };
      RouteContext ctx;
      const std::string key = "s" + std::to_string(driver.uniform(20));
      if (i % 2 == 0) ctx.session_key = key;
      const auto a = (*pipeline)->pick_eligible(ctx, fleet.loads.view(), eligible);
      const auto b = adaptive->pick_eligible(ctx, fleet.loads.view(), eligible);
      ASSERT_EQ(a, b) << "pick " << i;
      if (a) {
        (*pipeline)->observe(*a, ctx);
        adaptive->observe(*b, ctx);
      }
    }
    EXPECT_FALSE(adaptive->engaged());
    const AdaptiveSplit split = state.split();
    EXPECT_EQ(split[size_t(AdaptiveDecision::kProbe)], 0u) << "a disabled policy sends no probes";
    EXPECT_EQ(split[size_t(AdaptiveDecision::kBlend)], 0u);
    EXPECT_EQ(split[size_t(AdaptiveDecision::kFallback)], 1000u);
  }
}

// Engaged when all hold: enabled, a weight > 0, served >= min_samples, >= 2 sampled candidates.
// Each failing alone keeps it disengaged.
TEST(AdaptiveBalancerTest, EngagementNeedsEveryCondition) {
  struct Case {
    const char* what;
    AdaptivePolicy policy;
    int served;
    size_t sampled;
    bool want;
  };
  const Case cases[] = {
      {"all hold", enabled_policy(5), 5, 2, true},
      {"disabled", {.enabled = false, .min_samples = 5}, 5, 2, false},
      {"no weight",
       {.enabled = true, .latency_weight = 0, .cost_weight = 0, .load_weight = 0, .min_samples = 5},
       5,
       2,
       false},
      {"served one short of min_samples", enabled_policy(5), 4, 2, false},
      {"one sampled candidate", enabled_policy(5), 5, 1, false},
      {"min_samples 0 engages at once", enabled_policy(0), 0, 2, true},
  };
  for (const Case& c : cases) {
    Fleet fleet(3);
    for (size_t i = 0; i < c.sampled; ++i) fleet.sample(i, 10);
    SeededRandom random(1);
    ManualClock clock;
    AdaptiveRouteState state("m");
    auto lb = make_adaptive(fleet, &c.policy, &state, random, clock);
    serve(*lb, c.served);
    EXPECT_EQ(lb->engaged(), c.want) << c.what;
    // Engaged with no exploration: the pick is the blend's; else never the blend's.
    lb->pick({}, fleet.loads.view());
    EXPECT_EQ(state.split()[size_t(AdaptiveDecision::kBlend)], c.want ? 1u : 0u) << c.what;
  }
}

// Warm-up: an unsampled candidate gets probes, 8 in total, even when it never answers; then the
// fallback has it. A probe never goes to an ineligible candidate.
TEST(AdaptiveBalancerTest, AtMostEightProbesPerCandidateEvenWithoutAnswers) {
  Fleet fleet(2);
  fleet.sample(0, 10);  // candidate 1 never answers: it never gets a sample
  SeededRandom random(3);
  ManualClock clock;
  const AdaptivePolicy policy = enabled_policy(1000);
  AdaptiveRouteState state("m");
  auto lb = make_adaptive(fleet, &policy, &state, random, clock);

  // Ineligible: no probe for it.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(lb->pick_eligible({}, fleet.loads.view(), [](size_t c) { return c == 0; }), 0u);
  }
  const auto& probed = state.candidate(fleet.candidates[1].identity, "");
  EXPECT_EQ(probed.probes(), 0u);

  int to_one = 0;
  for (int i = 0; i < 200; ++i) {
    const auto pick = lb->pick({}, fleet.loads.view());
    ASSERT_TRUE(pick);
    if (*pick == 1) ++to_one;
    if (i < 8) {
      EXPECT_EQ(*pick, 1u) << "probe " << i;
    }
  }
  // SPEC §6.10: 8, written out so that a change of the constant shows here.
  EXPECT_EQ(probed.probes(), 8u);
  EXPECT_EQ(state.split()[size_t(AdaptiveDecision::kProbe)], 8u);
  // After the probes the pipeline stack decides (idle, equal weights: about half each).
  EXPECT_GT(to_one, 8);
  EXPECT_EQ(state.split()[size_t(AdaptiveDecision::kFallback)], 200u + 5u - 8u);

  // A reload builds a new balancer over the same state: the probes are spent for good.
  auto rebuilt = make_adaptive(fleet, &policy, &state, random, clock);
  for (int i = 0; i < 50; ++i) rebuilt->pick({}, fleet.loads.view());
  EXPECT_EQ(probed.probes(), 8u);
}

// Probes spread: with several unsampled candidates each gets its share before any gets a ninth.
TEST(AdaptiveBalancerTest, ProbesGoToTheFewestProbedFirst) {
  Fleet fleet(3);
  SeededRandom random(4);
  ManualClock clock;
  const AdaptivePolicy policy = enabled_policy(1000);
  AdaptiveRouteState state("m");
  auto lb = make_adaptive(fleet, &policy, &state, random, clock);
  for (int i = 0; i < 30; ++i) lb->pick({}, fleet.loads.view());
  for (const auto& c : fleet.candidates) EXPECT_EQ(state.candidate(c.identity, "").probes(), 8u);
  EXPECT_EQ(state.split()[size_t(AdaptiveDecision::kFallback)], 30u - 3 * 8u);
}

// Engaged: the blend ranks lower latency, price and load better.
TEST(AdaptiveBalancerTest, BlendPrefersTheFastCheapIdleCandidate) {
  Fleet fleet(3);
  fleet.sample(0, 50);
  fleet.sample(1, 10);
  fleet.sample(2, 30);
  SeededRandom random(5);
  ManualClock clock;
  const AdaptivePolicy latency_only{.enabled = true,
                                    .latency_weight = 1,
                                    .cost_weight = 0,
                                    .load_weight = 0,
                                    .exploration_ratio = 0,
                                    .min_samples = 0};
  AdaptiveRouteState state("m");
  auto lb = make_adaptive(fleet, &latency_only, &state, random, clock);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(lb->pick({}, fleet.loads.view()), 1u);
  // Candidate 1 ineligible: the next fastest.
  EXPECT_EQ(lb->pick_eligible({}, fleet.loads.view(), [](size_t c) { return c != 1; }), 2u);

  // Cost only: the cheapest. With it ineligible, the one known price left is an all-equal range
  // (1.0), which beats the unknown price (0.5).
  fleet.candidates[0].price = 5;
  fleet.candidates[1].price = 9;
  const AdaptivePolicy cost_only{.enabled = true,
                                 .latency_weight = 0,
                                 .cost_weight = 1,
                                 .load_weight = 0,
                                 .exploration_ratio = 0,
                                 .min_samples = 0};
  auto by_cost = make_adaptive(fleet, &cost_only, &state, random, clock);
  EXPECT_EQ(by_cost->pick({}, fleet.loads.view()), 0u);
  EXPECT_EQ(by_cost->pick_eligible({}, fleet.loads.view(), [](size_t c) { return c != 0; }), 1u);

  // Load only: the least loaded.
  fleet.loads.set(0, 4);
  fleet.loads.set(1, 1);
  fleet.loads.set(2, 3);
  const AdaptivePolicy load_only{.enabled = true,
                                 .latency_weight = 0,
                                 .cost_weight = 0,
                                 .load_weight = 1,
                                 .exploration_ratio = 0,
                                 .min_samples = 0};
  auto by_load = make_adaptive(fleet, &load_only, &state, random, clock);
  EXPECT_EQ(by_load->pick({}, fleet.loads.view()), 1u);
}

// The exploration share of picks is uniform at random among the eligible; the rest is the blend.
TEST(AdaptiveBalancerTest, ExplorationShareMatchesTheRatio) {
  Fleet fleet(2);
  fleet.sample(0, 10);
  fleet.sample(1, 100);
  SeededRandom random(6);
  ManualClock clock;
  const AdaptivePolicy policy = enabled_policy(0, 0.2);
  AdaptiveRouteState state("m");
  auto lb = make_adaptive(fleet, &policy, &state, random, clock);
  constexpr int kPicks = 20000;
  int slow = 0;
  for (int i = 0; i < kPicks; ++i) slow += *lb->pick({}, fleet.loads.view()) == 1 ? 1 : 0;
  const AdaptiveSplit split = state.split();
  const double explored =
      static_cast<double>(split[size_t(AdaptiveDecision::kExploration)]) / kPicks;
  EXPECT_NEAR(explored, 0.2, 0.02);
  EXPECT_EQ(split[size_t(AdaptiveDecision::kBlend)] + split[size_t(AdaptiveDecision::kExploration)],
            static_cast<uint64_t>(kPicks));
  // Half the explored picks land on the slow candidate, and only those.
  EXPECT_NEAR(static_cast<double>(slow) / kPicks, 0.1, 0.02);
  // Exploration honours eligibility too.
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(lb->pick_eligible({}, fleet.loads.view(), [](size_t c) { return c == 1; }), 1u);
  }
}

// The fallback keeps learning while the blend decides: every observe() reaches it, and it is not
// asked to pick.
TEST(AdaptiveBalancerTest, FallbackKeepsLearningWhileEngaged) {
  Fleet fleet(2);
  fleet.sample(0, 10);
  fleet.sample(1, 20);
  SeededRandom random(7);
  ManualClock clock;
  const AdaptivePolicy policy = enabled_policy(0);
  auto fallback = std::make_unique<RecordingFallback>(1);
  auto picks = fallback->picks;
  auto observed = fallback->observed;
  AdaptiveRouteState state("m");
  AdaptiveBalancer lb(fleet.candidates, std::move(fallback), &policy, &state, random, clock);
  ASSERT_TRUE(lb.engaged());
  RouteContext ctx;
  ctx.session_key = "conversation-1";
  for (int i = 0; i < 10; ++i) {
    const auto pick = lb.pick(ctx, fleet.loads.view());
    ASSERT_EQ(pick, 0u);
    lb.observe(*pick, ctx);
  }
  EXPECT_EQ(*picks, 0);
  ASSERT_EQ(observed->size(), 10u);
  EXPECT_EQ(observed->back(), (std::pair<size_t, std::string>{0, "conversation-1"}));
  EXPECT_EQ(state.served(), 10u);
}

// The same with the real stack: a session the blend served while engaged is the stack's affinity
// when the policy is off again (a reload: new balancer, same state); the stack learned it only
// through observe() forwarded while engaged.
TEST(AdaptiveBalancerTest, FallbackStackAffinityLearnedWhileEngaged) {
  Fleet fleet(3);
  fleet.sample(0, 50);
  fleet.sample(1, 10);
  fleet.sample(2, 50);
  SeededRandom random(8);
  ManualClock clock;
  const AdaptivePolicy on{.enabled = true,
                          .latency_weight = 1,
                          .cost_weight = 0,
                          .load_weight = 0,
                          .exploration_ratio = 0,
                          .min_samples = 0};
  AdaptiveRouteState state("m");
  auto fallback = make_pipeline(fleet.candidates, {.random = &random, .clock = &clock}, {});
  ASSERT_TRUE(fallback);
  LoadBalancer* stack = fallback->get();
  AdaptiveBalancer lb(fleet.candidates, std::move(*fallback), &on, &state, random, clock);
  RouteContext ctx;
  ctx.session_key = "conversation-2";
  const auto pick = lb.pick(ctx, fleet.loads.view());
  ASSERT_EQ(pick, 1u);
  lb.observe(*pick, ctx);
  // The stack alone now keeps the session on candidate 1 (all idle, equal weights: only the
  // affinity it learned sets candidate 1 apart).
  for (int i = 0; i < 20; ++i) EXPECT_EQ(stack->pick(ctx, fleet.loads.view()), 1u);
}

// The telemetry sample: components, raw signals, picks and time since the last pick.
TEST(AdaptiveBalancerTest, SampleReportsScoresSignalsAndSplit) {
  Fleet fleet(2);
  fleet.sample(0, 10);
  fleet.sample(1, 30);
  fleet.candidates[0].price = 1;
  fleet.candidates[1].price = 3;
  fleet.loads.set(0, 1);  // 10 ms per place x 2 = 20 ms now, still below 30
  SeededRandom random(9);
  ManualClock clock;
  const AdaptivePolicy policy = enabled_policy(0);
  AdaptiveRouteState state("m");
  auto lb = make_adaptive(fleet, &policy, &state, random, clock);
  for (int i = 0; i < 3; ++i) lb->pick({}, fleet.loads.view());
  lb->observe(0, {});
  clock.advance(std::chrono::seconds(4));

  const AdaptiveRouteSample s = lb->sample(fleet.loads.view(), clock.now());
  EXPECT_EQ(s.route, "m");
  EXPECT_TRUE(s.engaged);
  EXPECT_EQ(s.served, 1u);
  EXPECT_EQ(s.policy, policy);
  ASSERT_EQ(s.candidates.size(), 2u);
  const auto& fast = s.candidates[0];
  const auto& slow = s.candidates[1];
  EXPECT_EQ(fast.target, "provider0/model");
  EXPECT_DOUBLE_EQ(fast.latency_score, 1);
  EXPECT_DOUBLE_EQ(fast.cost_score, 1);
  EXPECT_DOUBLE_EQ(fast.load_score, 0);  // load 1 against 0
  EXPECT_DOUBLE_EQ(fast.score, 1 + 0.5);
  EXPECT_DOUBLE_EQ(slow.score, 0.25);
  EXPECT_EQ(fast.latency_ms, 10.0);
  EXPECT_EQ(fast.price, 1.0);
  EXPECT_EQ(fast.in_flight, 1u);
  EXPECT_EQ(fast.picks + slow.picks, 3u);
  EXPECT_EQ(s.decisions[size_t(AdaptiveDecision::kBlend)], 3u);
  const auto& picked = fast.picks > 0 ? fast : slow;
  ASSERT_TRUE(picked.seconds_since_last_pick);
  EXPECT_DOUBLE_EQ(*picked.seconds_since_last_pick, 4.0);
  if (slow.picks == 0) {
    EXPECT_FALSE(slow.seconds_since_last_pick);
  }
}

// Through the factory, as the snapshot builds it: the policy and state from RouteSettings.
TEST(AdaptiveBalancerTest, FactoryBuildsItFromRouteSettings) {
  Fleet fleet(2);
  fleet.sample(0, 10);
  fleet.sample(1, 90);
  const AdaptivePolicy policy = enabled_policy(0);
  AdaptiveRouteState state("m");
  auto lb = make_balancer("adaptive", fleet.candidates, BalancerDeps{},
                          {.adaptive = &policy, .adaptive_state = &state});
  ASSERT_TRUE(lb) << lb.error();
  EXPECT_EQ((*lb)->name(), "adaptive");
  EXPECT_EQ((*lb)->pick({}, fleet.loads.view()), 0u);
  EXPECT_EQ(state.split()[size_t(AdaptiveDecision::kBlend)], 1u);
}

}  // namespace
}  // namespace rolter
