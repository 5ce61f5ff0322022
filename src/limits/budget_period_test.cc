#include "limits/budget_period.h"

#include <gtest/gtest.h>

#include <chrono>

namespace rolter {
namespace {

namespace chr = std::chrono;

int64_t utc_ms(int y, unsigned m, unsigned d, int hh = 0, int mm = 0, int ss = 0, int ms = 0) {
  const chr::sys_days day{chr::year(y) / chr::month(m) / chr::day(d)};
  return chr::duration_cast<chr::milliseconds>(day.time_since_epoch()).count() +
         ((hh * 60 + mm) * 60 + ss) * 1000LL + ms;
}

TEST(BudgetPeriod, UtcMillisecondsHelperIsRight) {
  EXPECT_EQ(utc_ms(2026, 12, 4, 15), 1'796'396'400'000);
}

struct PeriodCase {
  BudgetPeriod period;
  int64_t now_ms;
  int64_t start_ms, end_ms;
  const char* id;
};

TEST(BudgetPeriod, BoundsAndIds) {
  using enum BudgetPeriod;
  const PeriodCase cases[] = {
      {kDay, utc_ms(2026, 12, 4, 15), utc_ms(2026, 12, 4), utc_ms(2026, 12, 5), "d20261204"},
      {kDay, utc_ms(2026, 12, 4), utc_ms(2026, 12, 4), utc_ms(2026, 12, 5), "d20261204"},
      {kDay, utc_ms(2026, 12, 4) - 1, utc_ms(2026, 12, 3), utc_ms(2026, 12, 4), "d20261203"},
      {kDay, utc_ms(2026, 12, 31, 23, 59, 59, 999), utc_ms(2026, 12, 31), utc_ms(2027, 1, 1),
       "d20261231"},
      {kDay, -1, utc_ms(1969, 12, 31), 0, "d19691231"},
      // 2026-12-04 is a Friday; its week began on Monday 2026-11-30.
      {kWeek, utc_ms(2026, 12, 4, 15), utc_ms(2026, 11, 30), utc_ms(2026, 12, 7), "w20261130"},
      {kWeek, utc_ms(2026, 11, 30), utc_ms(2026, 11, 30), utc_ms(2026, 12, 7), "w20261130"},
      {kWeek, utc_ms(2026, 11, 30) - 1, utc_ms(2026, 11, 23), utc_ms(2026, 11, 30), "w20261123"},
      {kWeek, utc_ms(2027, 1, 1), utc_ms(2026, 12, 28), utc_ms(2027, 1, 4), "w20261228"},
      {kMonth, utc_ms(2026, 12, 4, 15), utc_ms(2026, 12, 1), utc_ms(2027, 1, 1), "m202612"},
      {kMonth, utc_ms(2027, 1, 1), utc_ms(2027, 1, 1), utc_ms(2027, 2, 1), "m202701"},
      {kMonth, utc_ms(2024, 2, 29, 12), utc_ms(2024, 2, 1), utc_ms(2024, 3, 1), "m202402"},
      {kMonth, utc_ms(2023, 2, 28, 23, 59, 59, 999), utc_ms(2023, 2, 1), utc_ms(2023, 3, 1),
       "m202302"},
      {kDay, utc_ms(2024, 2, 29, 12), utc_ms(2024, 2, 29), utc_ms(2024, 3, 1), "d20240229"},
  };
  for (const PeriodCase& c : cases) {
    const PeriodBounds b = period_bounds(c.period, c.now_ms);
    EXPECT_EQ(b.start_ms, c.start_ms) << c.id << " at " << c.now_ms;
    EXPECT_EQ(b.end_ms, c.end_ms) << c.id << " at " << c.now_ms;
    EXPECT_EQ(period_id(c.period, c.now_ms).view(), c.id) << c.now_ms;
  }
  // February 2024 has 29 days, February 2023 has 28.
  const PeriodBounds leap = period_bounds(BudgetPeriod::kMonth, utc_ms(2024, 2, 10));
  EXPECT_EQ(leap.end_ms - leap.start_ms, 29 * 86'400'000LL);
  const PeriodBounds plain = period_bounds(BudgetPeriod::kMonth, utc_ms(2023, 2, 10));
  EXPECT_EQ(plain.end_ms - plain.start_ms, 28 * 86'400'000LL);
}

TEST(BudgetPeriod, UsdToNanos) {
  EXPECT_EQ(usd_to_nanos(1), 1'000'000'000);
  EXPECT_EQ(usd_to_nanos(0.0000000015), 2);  // rounds half away from zero
  EXPECT_EQ(usd_to_nanos(0.1) + usd_to_nanos(0.2), usd_to_nanos(0.3));
  EXPECT_EQ(usd_to_nanos(-1), 0);
}

struct RolloverCase {
  BudgetPeriod period;
  int64_t charged_at_ms;
  int64_t boundary_ms;  // the next period's start
};

TEST(BudgetState, RollsOverAtThePeriodBoundary) {
  using enum BudgetPeriod;
  const RolloverCase cases[] = {
      {kDay, utc_ms(2026, 12, 4, 10), utc_ms(2026, 12, 5)},
      {kWeek, utc_ms(2026, 12, 2, 10), utc_ms(2026, 12, 7)},
      {kMonth, utc_ms(2026, 12, 15), utc_ms(2027, 1, 1)},     // December to January
      {kMonth, utc_ms(2024, 2, 28, 12), utc_ms(2024, 3, 1)},  // a leap February
      {kMonth, utc_ms(2023, 2, 28, 12), utc_ms(2023, 3, 1)},
  };
  for (const RolloverCase& c : cases) {
    const BudgetSpec spec{1.0, c.period};
    BudgetState b;
    ASSERT_TRUE(b.allows(spec, usd_to_nanos(0.9), c.charged_at_ms));
    b.charge(c.period, usd_to_nanos(0.9), c.charged_at_ms);
    EXPECT_TRUE(b.allows(spec, usd_to_nanos(0.1), c.boundary_ms - 1));
    EXPECT_FALSE(b.allows(spec, usd_to_nanos(0.2), c.boundary_ms - 1));
    EXPECT_EQ(BudgetState::retry_after_ms(spec, c.boundary_ms - 1), 1);
    EXPECT_TRUE(b.allows(spec, usd_to_nanos(0.2), c.boundary_ms)) << c.boundary_ms;
    EXPECT_EQ(b.charged_nanos(c.period, c.boundary_ms), 0);
  }
}

TEST(BudgetState, ZeroBudgetRefusesEverything) {
  BudgetState b;
  EXPECT_FALSE(b.allows(BudgetSpec{0, BudgetPeriod::kDay}, 0, 0));
  EXPECT_TRUE(b.allows(BudgetSpec{0.01, BudgetPeriod::kDay}, 0, 0));
}

TEST(BudgetState, SettlementAdjustsOnlyTheSamePeriod) {
  const int64_t t = utc_ms(2026, 12, 4, 10);
  BudgetState b;
  b.charge(BudgetPeriod::kDay, 500, t);
  b.settle(BudgetPeriod::kDay, -300, t);  // refund
  EXPECT_EQ(b.charged_nanos(BudgetPeriod::kDay, t), 200);
  b.settle(BudgetPeriod::kDay, 1000, t);  // extra charge
  EXPECT_EQ(b.charged_nanos(BudgetPeriod::kDay, t), 1200);
  b.settle(BudgetPeriod::kDay, -5000, t);  // never below zero
  EXPECT_EQ(b.charged_nanos(BudgetPeriod::kDay, t), 0);

  // A reservation of yesterday settled today, after today's first charge: dropped.
  const int64_t tomorrow = utc_ms(2026, 12, 5, 1);
  b.charge(BudgetPeriod::kDay, 700, tomorrow);
  b.settle(BudgetPeriod::kDay, 5000, t);
  EXPECT_EQ(b.charged_nanos(BudgetPeriod::kDay, tomorrow), 700);
  // A changed period kind counts from zero.
  EXPECT_EQ(b.charged_nanos(BudgetPeriod::kMonth, tomorrow), 0);
}

}  // namespace
}  // namespace rolter
