#include "limits/redis/redis_budget_period.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

constexpr int64_t kDayMs = 86400000;
// 2024-06-05T12:00:00Z, a Wednesday.
constexpr int64_t kWednesdayNoon = 1717588800000;
constexpr int64_t kJune5 = kWednesdayNoon - kDayMs / 2;
constexpr int64_t kMonday = kJune5 - 2 * kDayMs;  // 2024-06-03T00:00:00Z

TEST(RedisBudgetPeriodTest, IdsAndEndsFollowUtcBoundaries) {
  struct Case {
    int64_t at_ms;
    BudgetPeriod period;
    const char* id;
    int64_t end_ms;
  };
  const Case cases[] = {
      {kWednesdayNoon, BudgetPeriod::kDay, "d20240605", kJune5 + kDayMs},
      {kWednesdayNoon, BudgetPeriod::kWeek, "w20240603", kMonday + 7 * kDayMs},
      {kWednesdayNoon, BudgetPeriod::kMonth, "m202406", 1719792000000},  // 2024-07-01
      {kMonday, BudgetPeriod::kWeek, "w20240603", kMonday + 7 * kDayMs},
      {kMonday - 1, BudgetPeriod::kWeek, "w20240527", kMonday},  // Sunday 23:59:59.999
      {kMonday - 1, BudgetPeriod::kDay, "d20240602", kMonday},
      {1735689599999, BudgetPeriod::kMonth, "m202412", 1735689600000},  // into 2025
      {1709208000000, BudgetPeriod::kMonth, "m202402", 1709251200000},  // leap Feb 29
  };
  for (const Case& c : cases) {
    EXPECT_EQ(redis_budget_period_id(c.at_ms, c.period), c.id) << c.at_ms;
    EXPECT_EQ(redis_budget_period_end_ms(c.at_ms, c.period), c.end_ms) << c.id;
  }
}

}  // namespace
}  // namespace rolter
