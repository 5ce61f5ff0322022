#include "balance/stacks.h"

#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "balance/evidence/instance_evidence.h"
#include "balance/lmcache_signal.h"
#include "balance/scored_stack.h"
#include "balance/scorer_registry.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

using Weights = std::vector<std::pair<std::string, double>>;
using std::chrono::seconds;

// SPEC §6.7's default stack, spelled out.
Weights pipeline_scorers() {
  return {{"session_affinity", 1.0},
          {"static_weight", 1.0},
          {"least_load", 1.0},
          {"prefix_affinity", 1.0}};
}

std::unique_ptr<LoadBalancer> pipeline(const std::vector<CandidateSpec>& candidates,
                                       const Weights& scorers, BalancerDeps deps) {
  auto lb = make_pipeline(candidates, deps, scorers);
  EXPECT_TRUE(lb.has_value()) << lb.error();
  return lb ? std::move(*lb) : nullptr;
}

RouteContext with_session(std::string_view key) {
  RouteContext ctx;
  ctx.session_key = key;
  return ctx;
}

TEST(StacksTest, DefaultPipelineIsTheSpecStack) {
  const auto candidates = make_candidates(3);
  auto lb = make_pipeline(candidates, BalancerDeps{}, {});
  ASSERT_TRUE(lb.has_value()) << lb.error();
  EXPECT_EQ((*lb)->name(), "pipeline");
  auto* stack = dynamic_cast<ScoredStack*>(lb->get());
  ASSERT_NE(stack, nullptr);
  EXPECT_EQ(stack->size(), 4u);
}

TEST(StacksTest, StackNames) {
  const auto candidates = make_candidates(2);
  struct Case {
    const char* name;
    StackResult lb;
  };
  Case cases[] = {
      {"pipeline", make_pipeline(candidates, {}, pipeline_scorers())},
      {"predicted_latency", make_predicted_latency(candidates, {})},
      {"cheapest", make_cheapest(candidates, {})},
      {"fastest", make_fastest(candidates, {})},
      {"lmcache_aware", make_lmcache_aware(candidates, {})},
  };
  for (Case& c : cases) {
    ASSERT_TRUE(c.lb.has_value()) << c.name << ": " << c.lb.error();
    EXPECT_EQ((*c.lb)->name(), c.name);
  }
}

TEST(StacksTest, PipelineSessionStickyForThreeHundredSeconds) {
  // Candidate 0 served the session but is busier than 3: at 299 s affinity keeps it
  // (1 + 1 + 0.5 = 2.5 against 0 + 1 + 1 = 2); at 301 s the session is gone and 3 wins.
  ManualClock clock;
  SeededRandom random(1);
  const auto candidates = make_candidates(4);
  auto lb = pipeline(candidates, pipeline_scorers(), {.random = &random, .clock = &clock});
  ASSERT_NE(lb, nullptr);
  LoadsFixture loads({1, 2, 2, 0});
  const auto ctx = with_session("conversation-42");
  lb->observe(0, ctx);

  clock.advance(seconds(299));
  for (int i = 0; i < 50; ++i) EXPECT_EQ(lb->pick(ctx, loads.view()), 0u) << "at 299 s";
  // Another session, or none, is not affected by it.
  EXPECT_EQ(lb->pick(with_session("other"), loads.view()), 3u);
  EXPECT_EQ(lb->pick({}, loads.view()), 3u);

  clock.advance(seconds(2));
  for (int i = 0; i < 50; ++i) EXPECT_EQ(lb->pick(ctx, loads.view()), 3u) << "at 301 s";
}

TEST(StacksTest, CustomStacksFromAWeightsList) {
  struct Case {
    const char* name;
    Weights scorers;
    std::vector<double> candidate_weights;
    std::vector<uint32_t> loads;
    size_t expected;
  };
  const Case cases[] = {
      {"least load alone", {{"least_load", 1}}, {1, 1, 1}, {3, 1, 2}, 1},
      {"static weight alone", {{"static_weight", 1}}, {1, 4, 2}, {0, 9, 0}, 1},
      // Same two scorers; the weights decide which one dominates: 3 + 0 vs 1.5 + 1 ...
      {"weight over load", {{"static_weight", 3}, {"least_load", 1}}, {1, 0.5}, {4, 0}, 0},
      // ... and 1 + 0 vs 0.5 + 3.
      {"load over weight", {{"static_weight", 1}, {"least_load", 3}}, {1, 0.5}, {4, 0}, 1},
      {"zero weight contributes nothing",
       {{"static_weight", 0}, {"least_load", 1}},
       {1, 0.5},
       {4, 0},
       1},
      {"order does not matter", {{"least_load", 1}, {"static_weight", 3}}, {1, 0.5}, {4, 0}, 0},
  };
  for (const Case& c : cases) {
    SeededRandom random(2);
    const auto candidates = make_candidates(c.candidate_weights);
    auto lb = pipeline(candidates, c.scorers, {.random = &random});
    ASSERT_NE(lb, nullptr) << c.name;
    LoadsFixture loads(c.loads);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(lb->pick({}, loads.view()), c.expected) << c.name;
  }
}

TEST(StacksTest, BadWeightsListsAreErrors) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    Weights scorers;
    const char* error;  // a substring of the message
  };
  const Case cases[] = {
      {{{"least_load", 1}, {"nonsense", 1}}, "unknown scorer \"nonsense\"; known scorers: "},
      {{{"least_load", -1}}, "scorer \"least_load\" has weight -1"},
      {{{"least_load", nan}}, "weights must be finite and >= 0"},
      {{{"least_load", 1}, {"static_weight", inf}}, "scorer \"static_weight\" has weight inf"},
      {{{"least_load", 0}, {"static_weight", 0}}, "at least one scorer with weight > 0"},
      {{{"least_load", 1}, {"least_load", 2}}, "scorer \"least_load\" is listed twice"},
  };
  const auto candidates = make_candidates(2);
  for (const Case& c : cases) {
    const auto lb = make_pipeline(candidates, BalancerDeps{}, c.scorers);
    ASSERT_FALSE(lb.has_value()) << c.error;
    EXPECT_NE(lb.error().find(c.error), std::string::npos) << lb.error();
  }
}

TEST(StacksTest, TiesAreBrokenAtRandom) {
  // Equal weights, idle, no session: every candidate scores the same on every scorer.
  constexpr int kPicks = 8000;
  SeededRandom random(3);
  const auto candidates = make_candidates(4);
  auto lb = pipeline(candidates, pipeline_scorers(), {.random = &random});
  ASSERT_NE(lb, nullptr);
  LoadsFixture loads(4);
  std::vector<int> counts(4, 0);
  for (int i = 0; i < kPicks; ++i) ++counts[*lb->pick({}, loads.view())];
  for (size_t c = 0; c < counts.size(); ++c) EXPECT_NEAR(counts[c], 2000, 300) << "candidate " << c;
}

// n candidates, each with its own evidence.
struct EvidencedCandidates {
  explicit EvidencedCandidates(size_t n)
      : evidence(std::make_unique<InstanceEvidence[]>(n)), candidates(make_candidates(n)) {
    for (size_t i = 0; i < n; ++i) candidates[i].evidence = &evidence[i];
  }
  std::unique_ptr<InstanceEvidence[]> evidence;
  std::vector<CandidateSpec> candidates;
};

TEST(StacksTest, PredictedLatencyIsLeastLoadBelowEightSamples) {
  // Every model is cold: 0 to 7 samples, three of them one short of warm with different latencies
  // (so an off-by-one cold start would rank them). With the same seed, the predicted_latency stack
  // and a least-load-only stack must make the same picks, ties included.
  const size_t samples[] = {0, 1, 2, 3, 5, 7, 7, 7};
  EvidencedCandidates fleet(8);
  for (size_t i = 0; i < 8; ++i) {
    for (size_t s = 0; s < samples[i]; ++s) {
      fleet.evidence[i].record_success(s, 1, 100.0 * (i + 1));
    }
  }
  const std::vector<std::vector<uint32_t>> load_table = {
      {0, 0, 0, 0, 0, 0, 0, 0}, {3, 1, 2, 5, 4, 9, 7, 6}, {0, 1, 1, 0, 2, 2, 0, 3},
      {9, 9, 9, 9, 9, 9, 9, 1}, {1, 0, 0, 0, 0, 0, 0, 0}, {4, 4, 2, 2, 8, 8, 2, 4},
  };
  for (const auto& load_values : load_table) {
    SeededRandom a_random(4);
    SeededRandom b_random(4);
    auto predicted = make_predicted_latency(fleet.candidates, {.random = &a_random});
    auto least = make_pipeline(fleet.candidates, {.random = &b_random}, Weights{{"least_load", 1}});
    ASSERT_TRUE(predicted.has_value() && least.has_value());
    LoadsFixture loads(load_values);
    RouteContext ctx;
    ctx.prompt_len = 4000;
    for (int i = 0; i < 50; ++i) {
      ASSERT_EQ((*predicted)->pick(ctx, loads.view()), (*least)->pick(ctx, loads.view()))
          << "pick " << i;
    }
  }
}

TEST(StacksTest, PredictedLatencyPrefersTheFasterModelOnceWarm) {
  // 0 is fast (40 + 25 q + 300 k), 1 slow (400 + 50 q + 600 k). With 1 queued on 0 and none on 1,
  // 0 still predicts ~65 ms against ~400: the prediction outweighs least load's 0.25.
  EvidencedCandidates fleet(2);
  SeededRandom feed(5);
  for (int i = 0; i < 3000; ++i) {
    const double q = static_cast<double>(feed.uniform(21));
    const double k = static_cast<double>(feed.uniform(9));
    fleet.evidence[0].record_success(q, k, 40 + 25 * q + 300 * k);
    fleet.evidence[1].record_success(q, k, 400 + 50 * q + 600 * k);
  }
  SeededRandom random(6);
  auto lb = make_predicted_latency(fleet.candidates, {.random = &random});
  ASSERT_TRUE(lb.has_value()) << lb.error();
  LoadsFixture loads({1, 0});
  for (int i = 0; i < 20; ++i) EXPECT_EQ((*lb)->pick({}, loads.view()), 0u);
  // Both busy: 40 + 25 * 12 = 340 ms against 400 + 50 * 9 = 850 ms.
  loads.set(0, 12);
  loads.set(1, 9);
  EXPECT_EQ((*lb)->pick({}, loads.view()), 0u);
  // More queued than the load guard allows (3 in flight over 2: only loads below
  // ceil(1.25 x 4 / 2) = 3 may take the next) and 0 is passed over, whatever its model says
  // (SPEC §6.16).
  loads.set(0, 3);
  loads.set(1, 0);
  EXPECT_EQ((*lb)->pick({}, loads.view()), 1u);
}

TEST(StacksTest, CheapestRanksByPriceUnknownNeutral) {
  struct Case {
    const char* name;
    std::vector<std::optional<double>> prices;
    std::vector<uint32_t> loads;
    std::vector<bool> eligible;  // empty: all eligible
    size_t expected;
  };
  const Case cases[] = {
      // Price 1.0 outweighs least load 0.25.
      {"cheapest despite load", {5.0, 1.0, 3.0}, {0, 4, 0}, {}, 1},
      {"cheapest among known and unknown", {8.0, std::nullopt, 10.0, 2.0}, {0, 0, 0, 9}, {}, 3},
      {"no prices: least load", {std::nullopt, std::nullopt, std::nullopt}, {2, 0, 1}, {}, 1},
      {"one price: least load", {1.0, std::nullopt, std::nullopt}, {2, 0, 1}, {}, 1},
      {"equal prices: least load", {2.0, 2.0, 2.0}, {2, 1, 0}, {}, 2},
      // Without the cheapest, one known price has nothing to be compared with.
      {"cheapest ineligible", {10.0, std::nullopt, 2.0}, {5, 0, 0}, {true, true, false}, 1},
  };
  for (const Case& c : cases) {
    auto candidates = make_candidates(c.prices.size());
    for (size_t i = 0; i < c.prices.size(); ++i) candidates[i].price = c.prices[i];
    SeededRandom random(7);
    auto lb = make_cheapest(candidates, {.random = &random});
    ASSERT_TRUE(lb.has_value()) << lb.error();
    LoadsFixture loads(c.loads);
    const auto eligible = [&c](size_t i) { return c.eligible.empty() || c.eligible[i]; };
    EXPECT_EQ((*lb)->pick_eligible({}, loads.view(), eligible), c.expected) << c.name;
  }
}

// fastest ranks the latency a request would meet now: the per-place average (samples taken at an
// idle queue here) times the candidate's current load + 1; unknown is neutral, and a candidate
// above the load guard is passed over (SPEC §6.16).
TEST(StacksTest, FastestRanksByLatencyAtTheCurrentQueueUnknownNeutral) {
  struct Case {
    const char* name;
    std::vector<double> latency_ms;  // < 0: no sample
    std::vector<uint32_t> loads;
    size_t expected;
  };
  const Case cases[] = {
      {"fastest despite load", {300, 100, 200}, {1, 2, 1}, 1},  // 600, 300, 400 ms now
      {"fastest until its queue costs more", {300, 100, 200}, {2, 2, 0}, 2},  // 900, 300, 200
      {"fastest above the guard passed over", {300, 100, 200}, {0, 4, 1}, 0},  // 300, -, 400
      {"no samples: least load", {-1, -1, -1}, {2, 0, 1}, 1},
      {"one sample: least load", {50, -1, -1}, {2, 0, 1}, 1},
      {"fastest among known and unknown", {200, -1, 300, 50}, {2, 2, 2, 2}, 3},
  };
  for (const Case& c : cases) {
    EvidencedCandidates fleet(c.latency_ms.size());
    for (size_t i = 0; i < c.latency_ms.size(); ++i) {
      if (c.latency_ms[i] >= 0) fleet.evidence[i].latency.record(c.latency_ms[i]);
    }
    SeededRandom random(9);
    auto lb = make_fastest(fleet.candidates, {.random = &random});
    ASSERT_TRUE(lb.has_value()) << lb.error();
    LoadsFixture loads(c.loads);
    EXPECT_EQ((*lb)->pick({}, loads.view()), c.expected) << c.name;
  }
}

TEST(StacksTest, AdapterResidencyFirstThenLeastLoad) {
  // The lora_aware stack without its prefix layer (that runs in LoraAwareStack below).
  SeededRandom random(10);
  const auto candidates = make_candidates(3);
  auto lb =
      pipeline(candidates, {{"adapter_residency", 1.0}, {"least_load", 0.25}}, {.random = &random});
  ASSERT_NE(lb, nullptr);
  RouteContext sql;
  sql.adapter = "sql-lora";
  lb->observe(1, sql);
  LoadsFixture loads({0, 3, 1});
  EXPECT_EQ(lb->pick(sql, loads.view()), 1u) << "resident beats idle";
  RouteContext other;
  other.adapter = "other-lora";
  EXPECT_EQ(lb->pick(other, loads.view()), 0u) << "nobody holds it: least load";
  EXPECT_EQ(lb->pick({}, loads.view()), 0u) << "no adapter: least load";
}

TEST(StacksTest, LoraAwareStack) {
  SeededRandom random(11);
  const auto candidates = make_candidates(3);
  auto lb = make_lora_aware(candidates, {.random = &random});
  ASSERT_TRUE(lb.has_value()) << lb.error();
  EXPECT_EQ((*lb)->name(), "lora_aware");
  RouteContext sql;
  sql.adapter = "sql-lora";
  (*lb)->observe(1, sql);
  LoadsFixture loads({0, 3, 1});
  EXPECT_EQ((*lb)->pick(sql, loads.view()), 1u) << "resident beats idle";
  RouteContext other;
  other.adapter = "other-lora";
  EXPECT_EQ((*lb)->pick(other, loads.view()), 0u) << "nobody holds it: least load";
}

TEST(StacksTest, LmcacheAwareHeadroomFirstThenLeastLoad) {
  constexpr double kNone = -1;  // no usable occupancy: failed, stale, unavailable or unconfigured
  struct Case {
    const char* name;
    std::vector<double> occupancy;
    std::vector<uint32_t> loads;
    size_t expected;
  };
  const Case cases[] = {
      // 0.8 + 0 against 0.4 + 0.25: headroom 1.0 outweighs least load 0.25.
      {"more headroom despite load", {0.2, 0.6}, {4, 0}, 0},
      // 0.5 + 0 against 0.4 + 0.25: a headroom gap under 0.25 yields to the idle candidate.
      {"near tie: least load", {0.5, 0.6}, {4, 0}, 1},
      {"no usable value: least load", {kNone, kNone, kNone}, {3, 1, 2}, 1},
      // Empty (0) and saturated (1) are neutral: 0 + 0.25 each against 0.5 + 0 for the partly
      // filled cache.
      {"empty and saturated neutral", {0, 0.5, 1}, {0, 1, 0}, 1},
      {"failed one neutral", {kNone, 0.7}, {0, 1}, 1},
  };
  for (const Case& c : cases) {
    const size_t n = c.occupancy.size();
    std::vector<LmcacheSignal> signals(n);
    auto candidates = make_candidates(n);
    for (size_t i = 0; i < n; ++i) {
      signals[i].fresh = c.occupancy[i] != kNone;
      signals[i].available = true;
      signals[i].occupancy = c.occupancy[i];
      candidates[i].lmcache = &signals[i];
    }
    SeededRandom random(12);
    auto lb = make_lmcache_aware(candidates, {.random = &random});
    ASSERT_TRUE(lb.has_value()) << lb.error();
    EXPECT_EQ((*lb)->name(), "lmcache_aware");
    LoadsFixture loads(c.loads);
    EXPECT_EQ((*lb)->pick({}, loads.view()), c.expected) << c.name;
  }
}

}  // namespace
}  // namespace rolter
