#include "fleet/availability.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class AvailabilityTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  InstanceHealth health_;
  BreakerParams breaker_{.failure_threshold = 3, .open_for = seconds(10), .half_open_probes = 1};
  OutReason now_reason() { return availability(health_, clock_.now(), breaker_); }
};

TEST_F(AvailabilityTest, FreshInstanceIsAvailable) {
  EXPECT_EQ(now_reason(), OutReason::kNone);
  EXPECT_TRUE(admit(health_, clock_.now(), breaker_));
}

TEST_F(AvailabilityTest, BreakerOpensAtThresholdAndHalfOpensAfterOpenFor) {
  for (int i = 0; i < 2; ++i) record_failure(health_, clock_.now(), breaker_);
  EXPECT_EQ(now_reason(), OutReason::kNone) << "below the threshold";
  record_failure(health_, clock_.now(), breaker_);
  EXPECT_EQ(now_reason(), OutReason::kBreakerOpen);
  EXPECT_FALSE(admit(health_, clock_.now(), breaker_));

  clock_.advance(seconds(10) - milliseconds(1));
  EXPECT_EQ(now_reason(), OutReason::kBreakerOpen);
  clock_.advance(milliseconds(1));
  EXPECT_EQ(now_reason(), OutReason::kNone) << "open_for elapsed: a probe may go";
  EXPECT_TRUE(admit(health_, clock_.now(), breaker_)) << "the half-open probe";
  EXPECT_FALSE(admit(health_, clock_.now(), breaker_)) << "only half_open_probes at a time";
  EXPECT_EQ(now_reason(), OutReason::kBreakerOpen);

  record_success(health_);
  EXPECT_EQ(now_reason(), OutReason::kNone);
  EXPECT_TRUE(admit(health_, clock_.now(), breaker_));
  EXPECT_TRUE(admit(health_, clock_.now(), breaker_)) << "closed: no probe limit";
}

TEST_F(AvailabilityTest, FailedProbeReopens) {
  for (int i = 0; i < 3; ++i) record_failure(health_, clock_.now(), breaker_);
  clock_.advance(seconds(10));
  ASSERT_TRUE(admit(health_, clock_.now(), breaker_));
  record_failure(health_, clock_.now(), breaker_);
  EXPECT_EQ(now_reason(), OutReason::kBreakerOpen);
  clock_.advance(seconds(9));
  EXPECT_EQ(now_reason(), OutReason::kBreakerOpen) << "open_for counts from the failed probe";
}

TEST_F(AvailabilityTest, SuccessResetsConsecutiveFailures) {
  record_failure(health_, clock_.now(), breaker_);
  record_failure(health_, clock_.now(), breaker_);
  record_success(health_);
  record_failure(health_, clock_.now(), breaker_);
  record_failure(health_, clock_.now(), breaker_);
  EXPECT_EQ(now_reason(), OutReason::kNone);
}

TEST_F(AvailabilityTest, ParkFor429EndsOnTime) {
  park_for(health_, clock_.now(), seconds(2));
  EXPECT_EQ(now_reason(), OutReason::kParked429);
  EXPECT_EQ(back_at(health_, breaker_), (clock_.now() + seconds(2)).time_since_epoch().count());
  clock_.advance(milliseconds(1999));
  EXPECT_EQ(now_reason(), OutReason::kParked429);
  clock_.advance(milliseconds(1));
  EXPECT_EQ(now_reason(), OutReason::kNone);
}

TEST_F(AvailabilityTest, RefusedParkingBacksOffExponentiallyTo30s) {
  const int64_t expected_ms[] = {1000, 2000, 4000, 8000, 16000, 30000, 30000};
  for (int64_t ms : expected_ms) {
    park_refused(health_, clock_.now());
    EXPECT_EQ(now_reason(), OutReason::kParkedRefused);
    clock_.advance(milliseconds(ms - 1));
    EXPECT_EQ(now_reason(), OutReason::kParkedRefused) << ms;
    clock_.advance(milliseconds(1));
    EXPECT_EQ(now_reason(), OutReason::kNone) << ms;
  }
  record_success(health_);
  park_refused(health_, clock_.now());
  clock_.advance(seconds(1));
  EXPECT_EQ(now_reason(), OutReason::kNone) << "a success resets the backoff to 1 s";
}

TEST_F(AvailabilityTest, HealthThresholds) {
  uint32_t ok = 0, failed = 0;
  record_health_check(health_, false, ok, failed, 2, 3);
  record_health_check(health_, false, ok, failed, 2, 3);
  EXPECT_EQ(now_reason(), OutReason::kNone);
  record_health_check(health_, false, ok, failed, 2, 3);
  EXPECT_EQ(now_reason(), OutReason::kUnhealthy);
  record_health_check(health_, true, ok, failed, 2, 3);
  EXPECT_EQ(now_reason(), OutReason::kUnhealthy);
  record_health_check(health_, true, ok, failed, 2, 3);
  EXPECT_EQ(now_reason(), OutReason::kNone);
}

TEST_F(AvailabilityTest, HealthCheckSuccessEndsRefusedParking) {
  park_refused(health_, clock_.now());
  uint32_t ok = 0, failed = 0;
  record_health_check(health_, true, ok, failed, 2, 3);
  EXPECT_EQ(now_reason(), OutReason::kNone);
}

TEST_F(AvailabilityTest, HealthCheckSuccessDoesNotEnd429Parking) {
  // A 429 says "busy until Retry-After", which a passing /health does not contradict; only a
  // refused connection's parking is ended by a health check.
  park_for(health_, clock_.now(), seconds(5));
  const int64_t parked_until = back_at(health_, breaker_);
  uint32_t ok = 0, failed = 0;
  for (int i = 0; i < 3; ++i) record_health_check(health_, true, ok, failed, 2, 3);
  EXPECT_EQ(now_reason(), OutReason::kParked429);
  EXPECT_EQ(back_at(health_, breaker_), parked_until);
  clock_.advance(seconds(5));
  EXPECT_EQ(now_reason(), OutReason::kNone);
}

// back_at is the later of the parking's end and the breaker's half-open time.
TEST_F(AvailabilityTest, BackAtWithOpenBreaker) {
  clock_.advance(seconds(100));  // a non-zero opened_at, so a missing term shows
  const auto ticks_at = [this](Clock::Duration later) {
    return (clock_.now() + later).time_since_epoch().count();
  };
  const int64_t half_open = ticks_at(seconds(10));
  for (int i = 0; i < 3; ++i) record_failure(health_, clock_.now(), breaker_);
  ASSERT_EQ(now_reason(), OutReason::kBreakerOpen);
  EXPECT_EQ(back_at(health_, breaker_), half_open) << "breaker alone";

  park_for(health_, clock_.now(), seconds(3));
  EXPECT_EQ(back_at(health_, breaker_), half_open) << "a shorter park does not bring it forward";

  park_for(health_, clock_.now(), seconds(25));
  EXPECT_EQ(back_at(health_, breaker_), ticks_at(seconds(25))) << "a longer park pushes it back";
}

TEST_F(AvailabilityTest, HalfOpenAdmitsExactlyHalfOpenProbes) {
  breaker_.half_open_probes = 3;
  for (int i = 0; i < 3; ++i) record_failure(health_, clock_.now(), breaker_);
  clock_.advance(seconds(10));
  for (uint32_t probe = 1; probe <= 3; ++probe) {
    EXPECT_EQ(now_reason(), OutReason::kNone) << "before probe " << probe;
    EXPECT_TRUE(admit(health_, clock_.now(), breaker_)) << "probe " << probe;
  }
  EXPECT_EQ(now_reason(), OutReason::kBreakerOpen) << "every probe is out";
  EXPECT_FALSE(admit(health_, clock_.now(), breaker_)) << "probe 4 is refused";
  EXPECT_EQ(health_.probes_in_flight.load(), 3u);

  // One probe's success closes the breaker: no probe limit any more.
  record_success(health_);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(admit(health_, clock_.now(), breaker_)) << i;
}

}  // namespace
}  // namespace rolter
