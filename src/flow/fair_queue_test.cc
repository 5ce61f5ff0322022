#include "flow/fair_queue.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace rolter {
namespace {

QueueEntry entry(std::string tenant, uint64_t cost, uint8_t band = 4, uint64_t token = 0) {
  return QueueEntry{.band = band, .tenant = std::move(tenant), .cost = cost, .token = token};
}

// Keeps both tenants backlogged and counts who is served.
std::map<std::string, int> serve(FairQueue& q, const std::map<std::string, uint64_t>& costs,
                                 int dispatches) {
  std::map<std::string, int> served;
  for (const auto& [tenant, cost] : costs) {
    for (int i = 0; i < 4; ++i) q.push(entry(tenant, cost));
  }
  for (int i = 0; i < dispatches; ++i) {
    auto e = q.pop();
    EXPECT_TRUE(e.has_value());
    ++served[e->tenant];
    q.push(entry(e->tenant, costs.at(e->tenant)));  // still backlogged
  }
  return served;
}

TEST(FairQueueTest, EqualCostsShareEqually) {
  FairQueue q(100);
  auto served = serve(q, {{"a", 1000}, {"b", 1000}}, 1000);
  // Within one quantum's worth of requests (4096 / 1000).
  EXPECT_NEAR(served["a"], 500, 5);
  EXPECT_NEAR(served["b"], 500, 5);
}

TEST(FairQueueTest, UnequalCostsShareTheCostNotTheCount) {
  // A pays 6000 a request (long unshared prompts), B 1500 (its cache holds the rest): over time
  // each gets the same tokens, so B is dispatched four times as often.
  FairQueue q(100);
  auto served = serve(q, {{"a", 6000}, {"b", 1500}}, 2000);
  const double ratio = static_cast<double>(served["b"]) / served["a"];
  EXPECT_NEAR(ratio, 4.0, 0.05) << served["a"] << " vs " << served["b"];
}

TEST(FairQueueTest, CostsFarAboveTheQuantumStillAlternate) {
  FairQueue q(100);
  auto served = serve(q, {{"a", 400000}, {"b", 400000}}, 100);
  EXPECT_EQ(served["a"], 50);
  EXPECT_EQ(served["b"], 50);
}

TEST(FairQueueTest, OneTenantAloneIsServedInOrder) {
  FairQueue q(10);
  for (uint64_t i = 0; i < 5; ++i) q.push(entry("a", 100000, 4, i));
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(q.pop()->token, i);
  EXPECT_FALSE(q.pop().has_value());
}

TEST(FairQueueTest, HigherBandsFirstThenOrderWithin) {
  FairQueue q(10);
  q.push(entry("a", 10, 1, 1));
  q.push(entry("a", 10, 6, 2));
  q.push(entry("b", 10, 4, 3));
  q.push(entry("a", 10, 6, 4));
  q.push(entry("b", 10, 0, 5));
  std::vector<uint64_t> order;
  while (auto e = q.pop()) order.push_back(e->token);
  EXPECT_EQ(order, (std::vector<uint64_t>{2, 4, 3, 1, 5}));
}

TEST(FairQueueTest, FullQueueShedsTheNewestOfTheLowestBand) {
  struct Case {
    const char* name;
    uint8_t arrival_band;
    bool admitted;
    uint64_t displaced_token;  // 0 = none
  };
  // Queued: band 2 tokens 1 (older), 2 (newer); band 5 token 3.
  const Case cases[] = {
      {"arrival below every band is refused", 1, false, 0},
      {"arrival in the lowest band is its newest: refused", 2, false, 0},
      {"arrival above displaces the lowest band's newest", 5, true, 2},
      {"arrival at the top displaces it too", 7, true, 2},
  };
  for (const Case& c : cases) {
    FairQueue q(3);
    q.push(entry("a", 10, 2, 1));
    q.push(entry("b", 10, 2, 2));
    q.push(entry("a", 10, 5, 3));
    auto r = q.push(entry("c", 10, c.arrival_band, 9));
    EXPECT_EQ(r.admitted, c.admitted) << c.name;
    EXPECT_EQ(r.displaced ? r.displaced->token : 0, c.displaced_token) << c.name;
    EXPECT_EQ(q.size(), 3u) << c.name;
  }
}

TEST(FairQueueTest, RemovedRequestIsNeverDispatched) {
  FairQueue q(10);
  auto first = q.push(entry("a", 10, 4, 1));
  q.push(entry("a", 10, 4, 2));
  auto third = q.push(entry("b", 10, 4, 3));
  ASSERT_TRUE(q.remove(first.id).has_value());
  ASSERT_TRUE(q.remove(third.id).has_value());  // b leaves the round entirely
  EXPECT_FALSE(q.remove(first.id).has_value());
  EXPECT_EQ(q.pop()->token, 2u);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.band_size(4), 0u);
}

TEST(FairQueueTest, AheadCountsTheBandsAboveAndTheRoundsBefore) {
  FairQueue q(20);
  q.push(entry("a", 10, 1));
  q.push(entry("a", 10, 6));
  for (int i = 0; i < 5; ++i) q.push(entry("a", 10, 4));
  q.push(entry("b", 10, 4));
  EXPECT_EQ(q.ahead_of(7, "a"), 0u);
  EXPECT_EQ(q.ahead_of(6, "b"), 1u);   // a's band-6 request
  EXPECT_EQ(q.ahead_of(4, "c"), 3u);   // band 6, then one of a's and b's in the first round
  EXPECT_EQ(q.ahead_of(4, "b"), 4u);   // band 6, b's own, then two rounds of a
  EXPECT_EQ(q.ahead_of(4, "a"), 7u);   // band 6, a's five, b's one
  EXPECT_EQ(q.ahead_of(0, "c"), 8u);
}

TEST(FairQueueTest, FullQueueShedsTheFloodingTenantFirst) {
  FairQueue q(4);
  for (uint64_t i = 1; i <= 3; ++i) q.push(entry("a", 10, 4, i));
  q.push(entry("b", 10, 4, 4));
  auto light = q.push(entry("b", 10, 4, 5));  // b 2 vs a 3: a's newest goes
  EXPECT_TRUE(light.admitted);
  ASSERT_TRUE(light.displaced.has_value());
  EXPECT_EQ(light.displaced->token, 3u);
  auto heavy = q.push(entry("a", 10, 4, 6));  // a would have 3 against b's 2: refused itself
  EXPECT_FALSE(heavy.admitted);
  EXPECT_FALSE(heavy.displaced.has_value());
}

// pop_first takes the oldest request of the first allowed tenant, the highest band first, and
// leaves the others' order alone.
TEST(FairQueueTest, PopFirstTakesTheFirstAllowedTenantsOldest) {
  FairQueue q(16);
  q.push(entry("a", 100, 4, 1));
  q.push(entry("b", 100, 4, 2));
  q.push(entry("b", 100, 4, 3));
  q.push(entry("c", 100, 6, 4));
  const auto not_a_or_c = [](uint8_t, std::string_view tenant) {
    return tenant != "a" && tenant != "c";
  };
  auto e = q.pop_first(not_a_or_c);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->token, 2u);
  const auto in_band_6 = [](uint8_t band, std::string_view) { return band == 6; };
  e = q.pop_first(in_band_6);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->token, 4u);
  EXPECT_FALSE(q.pop_first(in_band_6).has_value());
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.pop()->token, 1u);
  EXPECT_EQ(q.pop()->token, 3u);
  EXPECT_TRUE(q.empty());
}

TEST(FairQueueTest, ZeroCapacityShedsEveryArrival) {
  FairQueue q(0);
  EXPECT_FALSE(q.push(entry("a", 10, 7)).admitted);
}

}  // namespace
}  // namespace rolter
