#include "flow/drain_meter.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

using std::chrono::milliseconds;

TEST(DrainMeterTest, RateFromCompletionsInTheWindow) {
  ManualClock clock;
  DrainMeter meter;
  EXPECT_FALSE(meter.rate(clock.now()).has_value());
  for (int i = 0; i < 11; ++i) {
    meter.record(clock.now());
    if (i < 10) clock.advance(milliseconds(100));
  }
  auto rate = meter.rate(clock.now());
  ASSERT_TRUE(rate.has_value());
  EXPECT_NEAR(rate->per_second, 10.0, 1e-3);
  EXPECT_TRUE(rate->reliable);
}

TEST(DrainMeterTest, FewSamplesAreNotReliable) {
  ManualClock clock;
  DrainMeter meter;
  meter.record(clock.now());
  clock.advance(milliseconds(500));
  meter.record(clock.now());
  auto rate = meter.rate(clock.now());
  ASSERT_TRUE(rate.has_value());
  EXPECT_FALSE(rate->reliable);
  EXPECT_NEAR(rate->per_second, 2.0, 1e-3);
}

TEST(DrainMeterTest, AStalledFleetShowsAFallingRateThenNone) {
  ManualClock clock;
  DrainMeter meter;
  for (int i = 0; i < 10; ++i) {
    meter.record(clock.now());
    clock.advance(milliseconds(100));
  }
  clock.advance(milliseconds(8100));  // nothing for 8 s: the span now runs to now
  auto rate = meter.rate(clock.now());
  ASSERT_TRUE(rate.has_value());
  EXPECT_LT(rate->per_second, 1.1);
  clock.advance(std::chrono::seconds(11));
  EXPECT_FALSE(meter.rate(clock.now()).has_value());
}

TEST(DrainMeterTest, RetryAfterIsAheadOverRateRoundedUp) {
  const DrainMeter::Rate rate{.per_second = 4, .reliable = true};
  struct Case {
    size_t ahead;
    uint32_t expected;
  };
  for (const Case c : {Case{0, 1}, Case{1, 1}, Case{4, 1}, Case{5, 2}, Case{40, 10}, Case{41, 11}}) {
    EXPECT_EQ(retry_after_seconds(c.ahead, rate, 30), c.expected) << c.ahead;
  }
  EXPECT_EQ(retry_after_seconds(10, std::nullopt, 30), 30u);
  EXPECT_EQ(retry_after_seconds(10, std::nullopt, 0), 1u);
}

}  // namespace
}  // namespace rolter
