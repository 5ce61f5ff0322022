#include "balance/load_guard.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

TEST(LoadGuardTest, OverloadedNeedsBothTheSlackAndTheFactor) {
  struct Case {
    uint32_t load, min_load;
    bool want;
  };
  const Case cases[] = {
      {2, 0, false},   // +2 is still within the slack
      {3, 0, true},    // > 0 + 2 and > 1.5 x 0
      {5, 3, false},   // > 3 + 2 fails: 5 is not above 5
      {6, 3, true},    // > 5 and > 4.5
      {40, 30, false}, // > 32 but not > 45
      {46, 30, true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(overloaded(c.load, c.min_load), c.want) << c.load << " vs least " << c.min_load;
  }
}

// The kOverload ceiling is exactly the overloaded() rule, candidate by candidate.
TEST(LoadGuardTest, OverloadCeilingAgreesWithOverloaded) {
  for (uint32_t least = 0; least < 60; ++least) {
    const auto ceiling =
        load_ceiling(LoadGuard::kOverload, {.count = 3, .total = 0, .least = least});
    ASSERT_TRUE(ceiling.has_value());
    for (uint32_t load = least; load < 120; ++load) {
      EXPECT_EQ(load > *ceiling, overloaded(load, least)) << load << " vs least " << least;
    }
  }
}

TEST(LoadGuardTest, BoundedLoadCeilingIsAQuarterAboveTheMeanWithTheNewRequest) {
  struct Case {
    size_t count;
    uint64_t total;
    uint64_t want;  // the highest load that may take the next request
  };
  const Case cases[] = {
      {4, 0, 0},    // ceil(1.25 x 1 / 4) = 1: only idle candidates
      {4, 3, 1},    // ceil(1.25 x 4 / 4) = 2
      {8, 8, 1},    // ceil(1.25 x 9 / 8) = 2
      {8, 80, 12},  // ceil(1.25 x 81 / 8) = ceil(12.66) = 13: loads below 13 may take it
      {1, 50, 63},  // one candidate: ceil(1.25 x 51) = 64, always itself
  };
  for (const Case& c : cases) {
    const auto ceiling = load_ceiling(LoadGuard::kBoundedLoad, {.count = c.count, .total = c.total});
    ASSERT_TRUE(ceiling.has_value());
    EXPECT_EQ(*ceiling, c.want) << c.count << " candidates, " << c.total << " in flight";
  }
  EXPECT_FALSE(load_ceiling(LoadGuard::kBoundedLoad, {}).has_value());
  EXPECT_FALSE(load_ceiling(LoadGuard::kNone, {.count = 2, .total = 9}).has_value());
}

TEST(LoadGuardTest, EligibleLoadsSumsAndFindsTheLeast) {
  LoadsFixture loads({5, 2, 9, 2});
  const EligibleLoads set =
      eligible_loads(4, loads.view(), [](size_t i) { return i != 1; });
  EXPECT_EQ(set.count, 3u);
  EXPECT_EQ(set.total, 16u);
  EXPECT_EQ(set.least, 2u);
  EXPECT_EQ(set.least_at, 3u);
}

TEST(LoadGuardTest, ClearsOnlyEligibleCandidatesAboveTheCeiling) {
  struct Case {
    const char* what;
    LoadGuard guard;
    std::vector<uint32_t> loads;
    std::vector<char> mask;
    std::vector<char> want;
    size_t cleared;
  };
  constexpr auto kO = LoadGuard::kOverload;
  constexpr auto kB = LoadGuard::kBoundedLoad;
  const Case cases[] = {
      {"an even fleet keeps everyone", kO, {1, 2, 3}, {1, 1, 1}, {1, 1, 1}, 0},
      {"the hot one goes", kO, {9, 1, 2}, {1, 1, 1}, {0, 1, 1}, 1},
      {"an ineligible idle one sets no minimum", kO, {9, 8, 0}, {1, 1, 0}, {1, 1, 0}, 0},
      {"an ineligible one stays ineligible", kO, {9, 1, 0}, {1, 1, 0}, {0, 1, 0}, 1},
      {"two hot ones go", kO, {7, 0, 6}, {1, 1, 1}, {0, 1, 0}, 2},
      {"all idle", kO, {0, 0}, {1, 1}, {1, 1}, 0},
      {"none: nobody goes", LoadGuard::kNone, {90, 0}, {1, 1}, {1, 1}, 0},
      // 6 in flight over 3: ceil(1.25 x 7 / 3) = 3, so loads up to 2 stay.
      {"bounded: above a quarter over the mean goes", kB, {3, 1, 2}, {1, 1, 1}, {0, 1, 1}, 1},
      // All at 1 (3 in flight): ceil(1.25 x 4 / 3) = 2, everyone stays.
      {"bounded: an even fleet keeps everyone", kB, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0},
      // The ineligible candidate's 40 is not counted in the mean: 2 over 2, ceiling 1.
      {"bounded: the mean is over eligible ones", kB, {2, 0, 40}, {1, 1, 0}, {0, 1, 0}, 1},
      {"bounded: all idle", kB, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 0},
  };
  for (const Case& c : cases) {
    LoadsFixture loads(c.loads);
    std::vector<char> mask = c.mask;
    EXPECT_EQ(clear_guarded(c.guard, mask, loads.view()), c.cleared) << c.what;
    EXPECT_EQ(mask, c.want) << c.what;
  }
}

}  // namespace
}  // namespace rolter
