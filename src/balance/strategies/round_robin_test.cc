#include "balance/strategies/round_robin.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

TEST(RoundRobinTest, CyclesThroughCandidatesInOrder) {
  constexpr size_t kCandidates = 3;
  RoundRobinBalancer lb(kCandidates);
  LoadsFixture loads(kCandidates);
  for (size_t i = 0; i < 10 * kCandidates; ++i) {
    EXPECT_EQ(lb.pick({}, loads.view()), i % kCandidates) << "pick " << i;
  }
}

TEST(RoundRobinTest, PickEligibleWithAllEligibleCycles) {
  RoundRobinBalancer lb(4);
  LoadsFixture loads(4);
  for (size_t i = 0; i < 12; ++i) {
    EXPECT_EQ(lb.pick_eligible({}, loads.view(), [](size_t) { return true; }), i % 4);
  }
}

TEST(RoundRobinTest, SkipsIneligibleAndKeepsOthersEven) {
  constexpr size_t kCandidates = 5;
  RoundRobinBalancer lb(kCandidates);
  LoadsFixture loads(kCandidates);
  const auto eligible = [](size_t i) { return i != 1 && i != 2; };
  std::vector<int> counts(kCandidates, 0);
  size_t previous = kCandidates;
  for (int i = 0; i < 3000; ++i) {
    const auto idx = lb.pick_eligible({}, loads.view(), eligible);
    ASSERT_TRUE(idx.has_value());
    ASSERT_TRUE(eligible(*idx)) << *idx;
    EXPECT_NE(*idx, previous) << "the successor of a skipped candidate must not be served twice";
    previous = *idx;
    ++counts[*idx];
  }
  EXPECT_EQ(counts[0], 1000);
  EXPECT_EQ(counts[3], 1000);
  EXPECT_EQ(counts[4], 1000);
}

TEST(RoundRobinTest, NoneEligibleOrNoCandidates) {
  RoundRobinBalancer lb(3);
  LoadsFixture loads(3);
  EXPECT_EQ(lb.pick_eligible({}, loads.view(), [](size_t) { return false; }), std::nullopt);

  RoundRobinBalancer empty(0);
  LoadsFixture no_loads(0);
  EXPECT_EQ(empty.pick({}, no_loads.view()), std::nullopt);
  EXPECT_EQ(empty.pick_eligible({}, no_loads.view(), [](size_t) { return true; }), std::nullopt);
}

TEST(RoundRobinTest, MismatchedLoadsGiveNoCandidate) {
  RoundRobinBalancer lb(3);
  LoadsFixture loads(2);
  EXPECT_EQ(lb.pick({}, loads.view()), std::nullopt);
}

TEST(RoundRobinTest, ConcurrentPicksShareExactly) {
  constexpr size_t kCandidates = 3;
  constexpr int kThreads = 4;
  constexpr int kPicksPerThread = 30000;
  RoundRobinBalancer lb(kCandidates);
  LoadsFixture loads(kCandidates);
  std::vector<std::vector<int>> counts(kThreads, std::vector<int>(kCandidates, 0));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPicksPerThread; ++i) ++counts[t][*lb.pick({}, loads.view())];
    });
  }
  for (auto& thread : threads) thread.join();
  for (size_t c = 0; c < kCandidates; ++c) {
    int total = 0;
    for (int t = 0; t < kThreads; ++t) total += counts[t][c];
    EXPECT_EQ(total, kThreads * kPicksPerThread / static_cast<int>(kCandidates)) << c;
  }
}

}  // namespace
}  // namespace rolter
