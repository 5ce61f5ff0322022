#include "balance/strategies/kv_cost.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <vector>

#include "balance/balancer_factory.h"
#include "balance/evidence/instance_evidence.h"
#include "balance/explain.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/kv_fixture.h"
#include "balance/testing/loads_fixture.h"
#include "common/clock.h"
#include "common/random.h"

namespace rolter {
namespace {

struct Fleet {
  explicit Fleet(size_t n) : kv(n), evidence(n), candidates(make_candidates(n)) {
    for (size_t i = 0; i < n; ++i) {
      candidates[i].kv = &kv[i];
      candidates[i].evidence = &evidence[i];
      kv[i].state.store(KvStreamState::kLive);
    }
  }
  std::vector<KvResidency> kv;
  std::vector<InstanceEvidence> evidence;
  std::vector<CandidateSpec> candidates;
};

// The synthetic engine every test teaches: 20 ms fixed, 30 ms per queued request, 200 ms per
// thousand uncached tokens.
double true_ttft(double queue, double uncached_ktokens) {
  return 20 + 30 * queue + 200 * uncached_ktokens;
}

void teach(InstanceEvidence& evidence, size_t samples, uint64_t seed) {
  SeededRandom random(seed);
  for (size_t s = 0; s < samples; ++s) {
    const double q = static_cast<double>(random.uniform(8));
    const double k = static_cast<double>(random.uniform(4001)) / 1000;
    evidence.ttft.record(q, 0, k, true_ttft(q, k));
  }
}

RouteContext with_tokens(const std::vector<uint32_t>& tokens) {
  RouteContext ctx;
  ctx.token_ids = std::span<const uint32_t>(tokens);
  return ctx;
}

TEST(KvCostTest, LeastLoadedUntilEveryEligibleCandidateIsWarm) {
  Fleet fleet(3);
  SeededRandom random(7);
  KvCostBalancer lb(fleet.candidates, random);
  const auto prompt = token_run(1, 2000);
  store_blocks(fleet.kv[0], prompt, 100);  // 0 holds the whole prompt...
  LoadsFixture loads({2, 1, 0});           // ...but 2 is the least loaded
  // 0 and 1 warm, 2 cold (7 samples): least load decides.
  teach(fleet.evidence[0], 100, 1);
  teach(fleet.evidence[1], 100, 2);
  teach(fleet.evidence[2], 7, 3);
  for (int k = 0; k < 10; ++k) EXPECT_EQ(lb.pick(with_tokens(prompt), loads.view()), 2u);
  // The cold one out of the running: the two warm ones are compared by estimate.
  auto pick = lb.pick_eligible(with_tokens(prompt), loads.view(), [](size_t i) { return i != 2; });
  EXPECT_EQ(pick, 0u);
  // The 8th sample warms it: now the estimate decides, and 0's held prefix (0.4 s of prefill
  // saved against 2 x 30 ms of queue) wins.
  teach(fleet.evidence[2], 1, 4);
  EXPECT_EQ(lb.pick(with_tokens(prompt), loads.view()), 0u);
}

TEST(KvCostTest, ColdTiesAreRandom) {
  Fleet fleet(4);
  SeededRandom random(11);
  KvCostBalancer lb(fleet.candidates, random);
  LoadsFixture loads({1, 0, 0, 0});
  std::array<int, 4> count{};
  for (int k = 0; k < 3000; ++k) ++count[*lb.pick(RouteContext{}, loads.view())];
  EXPECT_EQ(count[0], 0);
  for (int i = 1; i < 4; ++i) EXPECT_NEAR(count[i], 1000, 150) << i;
}

TEST(KvCostTest, EqualEstimatesGoToTheCandidateThatServedTheFewest) {
  Fleet fleet(4);
  SeededRandom random(13);
  KvCostBalancer lb(fleet.candidates, random);
  for (size_t i = 0; i < 4; ++i) teach(fleet.evidence[i], 100, 20 + i);
  LoadsFixture idle(4);
  std::array<int, 4> count{};
  for (int k = 0; k < 400; ++k) {
    const auto prompt = token_run(static_cast<uint32_t>(k) * 10000, 500);
    const auto pick = lb.pick(with_tokens(prompt), idle.view());
    ASSERT_TRUE(pick.has_value());
    ++count[*pick];
    lb.observe(*pick, RouteContext{});
  }
  EXPECT_EQ(count, (std::array<int, 4>{100, 100, 100, 100}));
}

// Engine 0 has been given ten requests in the last minute and engine 1 none. A new conversation
// (nothing cached anywhere) costs least on idle engine 0, but loses no cache on engine 1, which is
// below its share: it goes to 1. A turn of a conversation engine 0 holds still goes to 0: its cache
// is worth more than an even count.
TEST(KvCostTest, RequestsFreeToPlaceGoBelowTheirShare) {
  Fleet fleet(2);
  SeededRandom random(3);
  ManualClock clock;
  KvCostBalancer lb(fleet.candidates, random, clock);
  for (size_t i = 0; i < 2; ++i) teach(fleet.evidence[i], 3000, 10 + i);
  for (int k = 0; k < 10; ++k) lb.observe(0, RouteContext{});
  LoadsFixture loads({0, 3});
  const auto held = token_run(1, 2000);
  store_blocks(fleet.kv[0], held, 100);
  const auto fresh = token_run(500'000, 2000);

  Explain explain(2);
  RouteContext ctx = with_tokens(fresh);
  ctx.explain = &explain;
  EXPECT_EQ(lb.pick(ctx, loads.view()), 1u) << "a new conversation, on the engine below its share";
  const std::string json = explain.to_json("kv_cost", std::vector<std::string>{"a", "b"}, 1);
  EXPECT_NE(json.find("above their share"), std::string::npos) << json;
  EXPECT_EQ(lb.pick(with_tokens(held), loads.view()), 0u) << "its cache is on engine 0";

  // A minute later the ten requests have left the window, and cost decides again.
  clock.advance(std::chrono::seconds(61));
  EXPECT_EQ(lb.pick(with_tokens(fresh), loads.view()), 0u);
}

TEST(KvCostTest, ModelConvergesOnALinearTtft) {
  InstanceEvidence evidence;
  teach(evidence, 3000, 5);
  for (double q : {0.0, 1.0, 4.0, 7.0}) {
    for (double k : {0.0, 0.5, 2.0, 4.0}) {
      const auto predicted = evidence.ttft.predict(q, 0, k);
      ASSERT_TRUE(predicted.has_value());
      EXPECT_NEAR(*predicted, true_ttft(q, k), 0.05 * true_ttft(q, k)) << q << " " << k;
    }
  }
}

TEST(KvCostTest, TradesQueueForCacheByTheLearnedCosts) {
  Fleet fleet(2);
  SeededRandom random(3);
  KvCostBalancer lb(fleet.candidates, random);
  for (size_t i = 0; i < 2; ++i) teach(fleet.evidence[i], 3000, 10 + i);
  const auto prompt = token_run(1, 2000);  // 2,000 tokens: 400 ms of prefill when uncached
  store_blocks(fleet.kv[0], prompt, 100);
  // 0 holds it all: 20 + 30 q. 1 holds nothing: its uncached tokens are charged kUncachedWeight
  // times their prefill, 20 + 16 x 400 = 6,420. 0 wins while 30 q < 6,400, i.e. q <= 213.
  static_assert(KvCostBalancer::kUncachedWeight == 16);
  for (uint32_t q : {0u, 13u, 15u, 100u, 180u, 200u}) {
    LoadsFixture loads({q, 0});
    EXPECT_EQ(lb.pick(with_tokens(prompt), loads.view()), 0u) << q;
  }
  for (uint32_t q : {230u, 260u, 400u}) {
    LoadsFixture loads({q, 0});
    EXPECT_EQ(lb.pick(with_tokens(prompt), loads.view()), 1u) << q;
  }
  // A stream that is not live makes the whole prompt count as uncached: then load decides.
  fleet.kv[0].state.store(KvStreamState::kStale);
  LoadsFixture loads({1, 0});
  EXPECT_EQ(lb.pick(with_tokens(prompt), loads.view()), 1u);
}

TEST(KvCostTest, NoEligibleCandidateIsNoPick) {
  Fleet fleet(2);
  SeededRandom random(3);
  KvCostBalancer lb(fleet.candidates, random);
  LoadsFixture loads(2);
  EXPECT_FALSE(lb.pick_eligible(RouteContext{}, loads.view(), [](size_t) { return false; }));
}

TEST(KvCostTest, ExplainsEstimates) {
  Fleet fleet(2);
  SeededRandom random(3);
  KvCostBalancer lb(fleet.candidates, random);
  for (size_t i = 0; i < 2; ++i) teach(fleet.evidence[i], 3000, 10 + i);
  const auto prompt = token_run(1, 2000);
  store_blocks(fleet.kv[0], prompt, 100);
  Explain explain(2);
  RouteContext ctx = with_tokens(prompt);
  ctx.explain = &explain;
  LoadsFixture loads(2);
  EXPECT_EQ(lb.pick(ctx, loads.view()), 0u);
  const std::vector<std::string> labels = {"a", "b"};
  const std::string json = explain.to_json("kv_cost", labels, 0);
  EXPECT_NE(json.find("\"ttft_ms\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"cost_ms\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"uncached_ktokens\":0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"uncached_ktokens\":2"), std::string::npos) << json;
  EXPECT_NE(json.find("lowest cost wins"), std::string::npos) << json;
}

}  // namespace
}  // namespace rolter
