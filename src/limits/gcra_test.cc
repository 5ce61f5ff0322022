#include "limits/gcra.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

TEST(Gcra, BurstPassesBackToBackThenOnePerInterval) {
  Gcra g;
  for (int i = 0; i < 60; ++i) {
    ASSERT_TRUE(g.allows(60, 60, 0)) << i;
    g.take(60, 0);
  }
  EXPECT_FALSE(g.allows(60, 60, 0));
  EXPECT_EQ(g.retry_after_ms(60, 60, 0), 1000);
  EXPECT_FALSE(g.allows(60, 60, 999));
  EXPECT_EQ(g.retry_after_ms(60, 60, 999), 1);
  ASSERT_TRUE(g.allows(60, 60, 1000));
  EXPECT_EQ(g.retry_after_ms(60, 60, 1000), 0);
  g.take(60, 1000);
  EXPECT_FALSE(g.allows(60, 60, 1000));
  EXPECT_FALSE(g.allows(60, 60, 1999));
  EXPECT_TRUE(g.allows(60, 60, 2000));
}

TEST(Gcra, RemainingAndReset) {
  Gcra g;
  EXPECT_EQ(g.remaining(60, 60, 0), 60u);
  EXPECT_EQ(g.reset_ms(60, 0), 0);
  g.take(60, 0);
  EXPECT_EQ(g.remaining(60, 60, 0), 59u);
  EXPECT_EQ(g.reset_ms(60, 0), 1000);
  for (int i = 1; i < 60; ++i) g.take(60, 0);
  EXPECT_EQ(g.remaining(60, 60, 0), 0u);
  EXPECT_EQ(g.reset_ms(60, 0), 60'000);
  EXPECT_EQ(g.remaining(60, 60, 1500), 1u);  // one interval, and half of the next, have passed
  EXPECT_EQ(g.reset_ms(60, 1500), 58'500);
  EXPECT_EQ(g.remaining(60, 60, 90'000), 60u);
  EXPECT_EQ(g.reset_ms(60, 90'000), 0);
}

// rpm = 7: T = 8571 + 3/7 ms. A microsecond clock would drift; ticks of 1/rpm ms do not.
TEST(Gcra, ExactWhenRpmDoesNotDivideAMinute) {
  Gcra g;
  g.take(7, 0);
  EXPECT_FALSE(g.allows(7, 1, 8571));
  EXPECT_EQ(g.retry_after_ms(7, 1, 8571), 1);  // 3 ticks left, rounded up to a millisecond
  ASSERT_TRUE(g.allows(7, 1, 8572));
  g.take(7, 8572);  // TAT = 8572 + 8571 3/7 = 17143 3/7
  EXPECT_FALSE(g.allows(7, 1, 17143));
  EXPECT_TRUE(g.allows(7, 1, 17144));

  Gcra full;
  for (int i = 0; i < 7; ++i) full.take(7, 0);
  EXPECT_EQ(full.tat_ms(), 60'000);  // seven intervals are exactly one minute
  EXPECT_EQ(full.tat_frac(), 0u);
  EXPECT_EQ(full.reset_ms(7, 0), 60'000);
}

struct BoundaryCase {
  uint64_t rpm, burst;
  int taken_at_zero;
  int64_t now_ms;
  bool allows;
  int64_t retry_after_ms;
};

TEST(Gcra, BoundaryTable) {
  const BoundaryCase cases[] = {
      {60, 60, 59, 0, true, 0},      // the last of the burst
      {60, 60, 60, 0, false, 1000},  // just past the burst
      {60, 1, 1, 999, false, 1},     // burst 1: strictly one per second
      {60, 1, 1, 1000, true, 0},
      {600, 60, 60, 0, false, 100},  // T = 100 ms
      {600, 60, 60, 100, true, 0},
      {1, 1, 1, 59'999, false, 1},  // one a minute
      {1, 1, 1, 60'000, true, 0},
      {6'000'000, 10, 10, 0, false, 1},  // T = 0.01 ms: the retry rounds up to 1 ms
  };
  for (const BoundaryCase& c : cases) {
    Gcra g;
    for (int i = 0; i < c.taken_at_zero; ++i) g.take(c.rpm, 0);
    EXPECT_EQ(g.allows(c.rpm, c.burst, c.now_ms), c.allows)
        << c.rpm << "/" << c.burst << " after " << c.taken_at_zero << " at " << c.now_ms;
    EXPECT_EQ(g.retry_after_ms(c.rpm, c.burst, c.now_ms), c.retry_after_ms)
        << c.rpm << "/" << c.burst << " after " << c.taken_at_zero << " at " << c.now_ms;
  }
}

TEST(Gcra, ChangedSpecAppliesToTheOldState) {
  Gcra g;
  for (int i = 0; i < 60; ++i) g.take(60, 0);  // TAT = 60 s
  // A bigger burst admits at once what it allows beyond the old one.
  EXPECT_EQ(g.remaining(60, 100, 0), 40u);
  // rpm 120, burst 10: TAT is 60 s ahead, the tolerance 5 s: wait 55 s + one new interval.
  EXPECT_FALSE(g.allows(120, 10, 0));
  EXPECT_EQ(g.retry_after_ms(120, 10, 0), 55'500);
  ASSERT_TRUE(g.allows(120, 10, 55'500));
  g.take(120, 55'500);
  EXPECT_EQ(g.tat_ms(), 60'500);
  EXPECT_EQ(g.frac_rpm(), 120u);
}

TEST(Gcra, IdleTimeDoesNotBank) {
  Gcra g;
  g.take(60, 0);
  // An hour later the bucket is full again, never fuller.
  EXPECT_EQ(g.remaining(60, 60, 3'600'000), 60u);
  g.take(60, 3'600'000);
  EXPECT_EQ(g.tat_ms(), 3'601'000);
}

}  // namespace
}  // namespace rolter
