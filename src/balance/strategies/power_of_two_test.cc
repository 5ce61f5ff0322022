#include "balance/strategies/power_of_two.h"

#include <gtest/gtest.h>

#include <vector>

#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

TEST(PowerOfTwoTest, NeverPicksIneligible) {
  SeededRandom masks(99);
  SeededRandom random(100);
  for (int round = 0; round < 2000; ++round) {
    const size_t n = 1 + masks.uniform(16);
    PowerOfTwoBalancer lb(n, random);
    std::vector<uint32_t> load_values(n);
    for (auto& load : load_values) load = static_cast<uint32_t>(masks.uniform(4));
    LoadsFixture loads(load_values);
    std::vector<bool> mask(n);
    size_t eligible_count = 0;
    size_t only = n;
    for (size_t i = 0; i < n; ++i) {
      mask[i] = masks.uniform(3) != 0 || round % 5 == 0;    // some rounds all eligible
      if (round % 7 == 0) mask[i] = masks.uniform(8) == 0;  // some rounds nearly none
      if (mask[i]) {
        ++eligible_count;
        only = i;
      }
    }
    const auto eligible = [&](size_t i) { return static_cast<bool>(mask[i]); };
    for (int pick = 0; pick < 20; ++pick) {
      const auto idx = lb.pick_eligible({}, loads.view(), eligible);
      if (eligible_count == 0) {
        ASSERT_EQ(idx, std::nullopt);
      } else if (eligible_count == 1) {
        ASSERT_EQ(idx, only);
      } else {
        ASSERT_TRUE(idx.has_value());
        ASSERT_TRUE(mask[*idx]) << "round " << round << " picked ineligible " << *idx;
      }
    }
  }
}

TEST(PowerOfTwoTest, PrefersLowerLoad) {
  // Three candidates, strictly ordered loads: every pair is equally likely, the lighter of the pair
  // wins, so the lightest wins 2 of 3 pairs, the middle one 1 of 3, the heaviest never.
  constexpr int kPicks = 60000;
  SeededRandom random(5);
  PowerOfTwoBalancer lb(3, random);
  LoadsFixture loads({0, 5, 10});
  std::vector<int> counts(3, 0);
  for (int i = 0; i < kPicks; ++i) ++counts[*lb.pick({}, loads.view())];
  EXPECT_EQ(counts[2], 0);
  EXPECT_NEAR(counts[0] / static_cast<double>(kPicks), 2.0 / 3, 0.01);
  EXPECT_NEAR(counts[1] / static_cast<double>(kPicks), 1.0 / 3, 0.01);
}

TEST(PowerOfTwoTest, IneligibleCandidateDoesNotShapeTheChoice) {
  // The idle candidate 0 is ineligible: the pair is always (1, 2) and the lighter, 1, wins.
  SeededRandom random(6);
  PowerOfTwoBalancer lb(3, random);
  LoadsFixture loads({0, 5, 9});
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(lb.pick_eligible({}, loads.view(), [](size_t i) { return i != 0; }), 1u);
  }
}

TEST(PowerOfTwoTest, TiesAreRandom) {
  constexpr int kPicks = 20000;
  SeededRandom random(8);
  PowerOfTwoBalancer lb(2, random);
  LoadsFixture loads({3, 3});
  int first = 0;
  for (int i = 0; i < kPicks; ++i) first += *lb.pick({}, loads.view()) == 0;
  EXPECT_NEAR(first / static_cast<double>(kPicks), 0.5, 0.02);
}

TEST(PowerOfTwoTest, SingleAndNoCandidates) {
  SeededRandom random(1);
  PowerOfTwoBalancer one(1, random);
  LoadsFixture one_load(1);
  EXPECT_EQ(one.pick({}, one_load.view()), 0u);
  EXPECT_EQ(one.pick_eligible({}, one_load.view(), [](size_t) { return true; }), 0u);
  EXPECT_EQ(one.pick_eligible({}, one_load.view(), [](size_t) { return false; }), std::nullopt);
  PowerOfTwoBalancer none(0, random);
  LoadsFixture no_loads(0);
  EXPECT_EQ(none.pick({}, no_loads.view()), std::nullopt);
}

TEST(PowerOfTwoTest, SameSeedSameSequence) {
  SeededRandom a_random(77);
  SeededRandom b_random(77);
  PowerOfTwoBalancer a(8, a_random);
  PowerOfTwoBalancer b(8, b_random);
  LoadsFixture loads({1, 1, 2, 0, 0, 3, 1, 1});
  for (int i = 0; i < 1000; ++i) {
    const auto eligible = [i](size_t c) { return (c + i) % 3 != 0; };
    ASSERT_EQ(a.pick_eligible({}, loads.view(), eligible),
              b.pick_eligible({}, loads.view(), eligible));
  }
}

}  // namespace
}  // namespace rolter
