#include "balance/strategies/weighted.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"
#include "common/random.h"

namespace rolter {
namespace {

// nginx's smooth weighted round-robin, written out plainly as the reference the balancer's
// precomputed table must match step for step.
class ReferenceSwrr {
 public:
  explicit ReferenceSwrr(std::vector<double> weights)
      : weights_(std::move(weights)), current_(weights_.size(), 0) {}
  size_t next() {
    double total = 0;
    size_t best = weights_.size();
    for (size_t i = 0; i < weights_.size(); ++i) {
      if (weights_[i] <= 0) continue;
      current_[i] += weights_[i];
      total += weights_[i];
      if (best == weights_.size() || current_[i] > current_[best]) best = i;
    }
    current_[best] -= total;
    return best;
  }

 private:
  std::vector<double> weights_;
  std::vector<double> current_;
};

std::vector<double> shares(WeightedBalancer& lb, size_t n, int picks) {
  LoadsFixture loads(n);
  std::vector<double> out(n, 0);
  for (int i = 0; i < picks; ++i) out[*lb.pick({}, loads.view())] += 1.0 / picks;
  return out;
}

TEST(WeightedTest, FollowsNginxOrderFiveOneOne) {
  // The order nginx documents for weights a=5, b=1, c=1.
  const std::string expected = "aabacaa";
  const auto candidates = make_candidates({5, 1, 1});
  WeightedBalancer lb(candidates);
  LoadsFixture loads(3);
  std::string got;
  for (int i = 0; i < 3 * 7; ++i) got += static_cast<char>('a' + *lb.pick({}, loads.view()));
  EXPECT_EQ(got, expected + expected + expected);
  EXPECT_EQ(lb.period(), 7u);
}

TEST(WeightedTest, MatchesReferenceForRandomWeights) {
  SeededRandom random(2024);
  for (int round = 0; round < 200; ++round) {
    const size_t n = 1 + random.uniform(12);
    std::vector<double> weights(n);
    for (auto& w : weights) w = static_cast<double>(random.uniform(20));  // zeros included
    if (random.uniform(2) == 0) {
      for (auto& w : weights) w *= 0.25;  // the same ratios written as decimals
    }
    const auto candidates = make_candidates(weights);
    WeightedBalancer lb(candidates);
    LoadsFixture loads(n);
    bool any_positive = false;
    for (double w : weights) any_positive |= w > 0;
    if (!any_positive) continue;
    ReferenceSwrr reference(weights);
    for (int i = 0; i < 500; ++i) {
      ASSERT_EQ(lb.pick({}, loads.view()), reference.next()) << "round " << round << " pick " << i;
    }
  }
}

TEST(WeightedTest, SharesFollowPerInstanceWeights) {
  // Target A weight 100 on one instance, target B weight 100 on two: 100, 50, 50.
  const auto candidates = make_target_candidates({{100, 1}, {100, 2}});
  ASSERT_EQ(candidates.size(), 3u);
  WeightedBalancer lb(candidates);
  const auto got = shares(lb, candidates.size(), 100000);
  EXPECT_NEAR(got[0], 0.50, 0.01);
  EXPECT_NEAR(got[1], 0.25, 0.01);
  EXPECT_NEAR(got[2], 0.25, 0.01);
}

TEST(WeightedTest, SharesFollowUnevenSplits) {
  // 100 over three instances is 33.33... each: still an exact period, still exact shares.
  const auto candidates = make_target_candidates({{100, 1}, {100, 3}, {50, 1}});
  WeightedBalancer lb(candidates);
  EXPECT_GT(lb.period(), 0u);
  const auto got = shares(lb, candidates.size(), 100000);
  double total = 0;
  for (const auto& c : candidates) total += c.weight;
  for (size_t i = 0; i < candidates.size(); ++i) {
    EXPECT_NEAR(got[i], candidates[i].weight / total, 0.01) << i;
  }
}

TEST(WeightedTest, IrrationalWeightsUseTheExactFallback) {
  const auto candidates = make_candidates({1.0, std::sqrt(2.0), 0.5});
  WeightedBalancer lb(candidates);
  EXPECT_EQ(lb.period(), 0u) << "no small exact ratio: the live SWRR must run";
  const auto got = shares(lb, candidates.size(), 100000);
  const double total = 1.0 + std::sqrt(2.0) + 0.5;
  for (size_t i = 0; i < candidates.size(); ++i) {
    EXPECT_NEAR(got[i], candidates[i].weight / total, 0.01) << i;
  }
  ReferenceSwrr reference({1.0, std::sqrt(2.0), 0.5});
  WeightedBalancer fresh(candidates);
  LoadsFixture loads(3);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(fresh.pick({}, loads.view()), reference.next());
}

TEST(WeightedTest, IneligibleContinuesAlongTheSequence) {
  // b ineligible: a and c keep their 5:1 ratio.
  const auto candidates = make_candidates({5, 1, 1});
  WeightedBalancer lb(candidates);
  LoadsFixture loads(3);
  std::vector<int> counts(3, 0);
  constexpr int kPicks = 60000;
  for (int i = 0; i < kPicks; ++i) {
    const auto idx = lb.pick_eligible({}, loads.view(), [](size_t c) { return c != 1; });
    ASSERT_TRUE(idx.has_value());
    ++counts[*idx];
  }
  EXPECT_EQ(counts[1], 0);
  EXPECT_NEAR(counts[0] / static_cast<double>(kPicks), 5.0 / 6, 0.01);
  EXPECT_NEAR(counts[2] / static_cast<double>(kPicks), 1.0 / 6, 0.01);
}

TEST(WeightedTest, WeightZeroNeverPickedWhileOthersEligible) {
  const auto candidates = make_candidates({1, 0, 2, 0});
  WeightedBalancer lb(candidates);
  LoadsFixture loads(4);
  for (int i = 0; i < 10000; ++i) {
    const auto idx = lb.pick({}, loads.view());
    ASSERT_TRUE(idx == 0u || idx == 2u) << *idx;
    const auto only_zero_and_two =
        lb.pick_eligible({}, loads.view(), [](size_t c) { return c == 1 || c == 2; });
    ASSERT_EQ(only_zero_and_two, 2u);
  }
}

TEST(WeightedTest, WeightZeroRoundRobinWhenNothingElseEligible) {
  const auto candidates = make_candidates({1, 0, 2, 0});
  WeightedBalancer lb(candidates);
  LoadsFixture loads(4);
  const auto zeros_only = [](size_t c) { return c == 1 || c == 3; };
  std::vector<size_t> got;
  for (int i = 0; i < 6; ++i) got.push_back(*lb.pick_eligible({}, loads.view(), zeros_only));
  EXPECT_EQ(got, (std::vector<size_t>{1, 3, 1, 3, 1, 3}));
  EXPECT_EQ(lb.pick_eligible({}, loads.view(), [](size_t) { return false; }), std::nullopt);
}

TEST(WeightedTest, AllZeroWeightsIsRoundRobin) {
  const auto candidates = make_candidates({0, 0, 0});
  WeightedBalancer lb(candidates);
  LoadsFixture loads(3);
  for (size_t i = 0; i < 9; ++i) EXPECT_EQ(lb.pick({}, loads.view()), i % 3);
}

TEST(WeightedTest, ConcurrentPicksKeepExactShares) {
  // Whole periods across threads: each candidate is served exactly its weight per period.
  const auto candidates = make_candidates({3, 2, 1});
  WeightedBalancer lb(candidates);
  LoadsFixture loads(3);
  constexpr int kThreads = 4;
  constexpr int kPicksPerThread = 6 * 5000;
  std::vector<std::vector<int>> counts(kThreads, std::vector<int>(3, 0));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPicksPerThread; ++i) ++counts[t][*lb.pick({}, loads.view())];
    });
  }
  for (auto& thread : threads) thread.join();
  const int periods = kThreads * kPicksPerThread / 6;
  for (size_t c = 0; c < 3; ++c) {
    int total = 0;
    for (int t = 0; t < kThreads; ++t) total += counts[t][c];
    EXPECT_EQ(total, periods * static_cast<int>(candidates[c].weight)) << c;
  }
}

TEST(WeightedTest, LongPeriodFallsBackToWeightZeroQuickly) {
  // Period 10 is longer than the candidate list: the walk gives up on the sequence once it has
  // seen no eligible positive-weight candidate, and serves the weight-0 one.
  const auto candidates = make_candidates({7, 3, 0});
  WeightedBalancer lb(candidates);
  ASSERT_EQ(lb.period(), 10u);
  LoadsFixture loads(3);
  int calls = 0;
  const auto only_zero = [&calls](size_t c) {
    ++calls;
    return c == 2;
  };
  for (int i = 0; i < 100; ++i) ASSERT_EQ(lb.pick_eligible({}, loads.view(), only_zero), 2u);
  EXPECT_LT(calls, 100 * 10) << "should not walk the whole period each time";
}

TEST(WeightedTest, RareCandidateFoundAlongALongPeriod) {
  // Only the weight-1 candidate of a 97:1 pair is eligible: it is found wherever it sits.
  const auto candidates = make_candidates({97, 1, 0});
  WeightedBalancer lb(candidates);
  ASSERT_EQ(lb.period(), 98u);
  LoadsFixture loads(3);
  for (int i = 0; i < 300; ++i) {
    ASSERT_EQ(lb.pick_eligible({}, loads.view(), [](size_t c) { return c == 1; }), 1u);
  }
}

TEST(WeightedTest, FallbackHonoursEligibility) {
  const auto candidates = make_candidates({1.0, std::sqrt(2.0), 0.5, 0});
  WeightedBalancer lb(candidates);
  ASSERT_EQ(lb.period(), 0u);
  LoadsFixture loads(4);
  std::vector<int> counts(4, 0);
  constexpr int kPicks = 60000;
  for (int i = 0; i < kPicks; ++i) {
    const auto idx = lb.pick_eligible({}, loads.view(), [](size_t c) { return c != 1; });
    ASSERT_TRUE(idx.has_value());
    ++counts[*idx];
  }
  EXPECT_EQ(counts[1], 0);
  EXPECT_EQ(counts[3], 0);
  EXPECT_NEAR(counts[0] / static_cast<double>(kPicks), 1.0 / 1.5, 0.01);
  EXPECT_EQ(lb.pick_eligible({}, loads.view(), [](size_t c) { return c == 3; }), 3u);
}

}  // namespace
}  // namespace rolter
