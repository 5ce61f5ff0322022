#include "balance/balancer_factory.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

TEST(BalancerFactoryTest, BuildsEveryKnownStrategy) {
  const auto candidates = make_candidates(4);
  LoadsFixture loads(4);
  for (std::string_view strategy : known_strategies()) {
    auto lb = make_balancer(strategy, candidates, BalancerDeps{});
    ASSERT_TRUE(lb.has_value()) << strategy << ": " << lb.error();
    EXPECT_EQ((*lb)->name(), strategy);
    const auto idx = (*lb)->pick({}, loads.view());
    ASSERT_TRUE(idx.has_value()) << strategy;
    EXPECT_LT(*idx, 4u);
  }
}

TEST(BalancerFactoryTest, UnknownStrategyListsTheKnownOnes) {
  const auto candidates = make_candidates(2);
  auto lb = make_balancer("least_magic", candidates, BalancerDeps{});
  ASSERT_FALSE(lb.has_value());
  EXPECT_NE(lb.error().find("least_magic"), std::string::npos) << lb.error();
  for (std::string_view strategy : known_strategies()) {
    EXPECT_NE(lb.error().find(strategy), std::string::npos) << lb.error();
  }
}

TEST(BalancerFactoryTest, RejectsNegativeAndNonFiniteWeights) {
  const double bad_weights[] = {-1.0, std::numeric_limits<double>::quiet_NaN(),
                                std::numeric_limits<double>::infinity()};
  for (double bad : bad_weights) {
    auto candidates = make_candidates({1.0, bad, 2.0});
    for (std::string_view strategy : known_strategies()) {
      auto lb = make_balancer(strategy, candidates, BalancerDeps{});
      ASSERT_FALSE(lb.has_value()) << strategy << " accepted weight " << bad;
      EXPECT_NE(lb.error().find(candidates[1].identity), std::string::npos) << lb.error();
    }
  }
}

TEST(BalancerFactoryTest, EmptyCandidateListPicksNothing) {
  LoadsFixture loads(0);
  for (std::string_view strategy : known_strategies()) {
    auto lb = make_balancer(strategy, {}, BalancerDeps{});
    ASSERT_TRUE(lb.has_value()) << strategy;
    EXPECT_EQ((*lb)->pick({}, loads.view()), std::nullopt) << strategy;
    EXPECT_EQ((*lb)->pick_eligible({}, loads.view(), [](size_t) { return true; }), std::nullopt)
        << strategy;
  }
}

// Every strategy, driven through the same mix of contexts, loads and eligibility masks by two
// balancers seeded alike, answers identically.
TEST(BalancerFactoryTest, EveryStrategyIsDeterministicUnderASeed) {
  const auto candidates = make_candidates({3, 1, 0, 2, 1, 1, 4, 0.5});
  const size_t n = candidates.size();
  for (std::string_view strategy : known_strategies()) {
    SeededRandom a_random(31337);
    SeededRandom b_random(31337);
    auto a = make_balancer(strategy, candidates, BalancerDeps{.random = &a_random});
    auto b = make_balancer(strategy, candidates, BalancerDeps{.random = &b_random});
    ASSERT_TRUE(a && b);
    SeededRandom driver(7);
    LoadsFixture loads(n);
    std::vector<size_t> sequence;
    for (int i = 0; i < 2000; ++i) {
      for (size_t c = 0; c < n; ++c) loads.set(c, static_cast<uint32_t>(driver.uniform(5)));
      const uint64_t mask = driver.next_u64();
      const auto eligible = [mask](size_t c) { return ((mask >> c) & 1) != 0; };
      RouteContext ctx;
      const std::string key = "s" + std::to_string(driver.uniform(50));
      if (i % 3 == 0) ctx.session_key = key;
      if (i % 3 == 1) ctx.prompt_digest = driver.next_u64();
      const auto from_a =
          i % 2 ? (*a)->pick(ctx, loads.view()) : (*a)->pick_eligible(ctx, loads.view(), eligible);
      const auto from_b =
          i % 2 ? (*b)->pick(ctx, loads.view()) : (*b)->pick_eligible(ctx, loads.view(), eligible);
      ASSERT_EQ(from_a, from_b) << strategy << " pick " << i;
      if (from_a) sequence.push_back(*from_a);
    }
    // Not a constant answer: the sequence visits more than one candidate.
    EXPECT_GT(std::count(sequence.begin(), sequence.end(), sequence.front()), 0);
    EXPECT_NE(std::count(sequence.begin(), sequence.end(), sequence.front()),
              static_cast<long>(sequence.size()))
        << strategy;
  }
}

}  // namespace
}  // namespace rolter
