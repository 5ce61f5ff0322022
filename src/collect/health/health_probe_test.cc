#include "collect/health/health_probe.h"

#include <gtest/gtest.h>

#include <chrono>

namespace rolter {
namespace {

using std::chrono::milliseconds;
using Change = HealthProbe::Change;

constexpr HealthSettings kSettings{.interval = milliseconds(1000),
                                   .timeout = milliseconds(200),
                                   .unhealthy_threshold = 3,
                                   .healthy_threshold = 2};

class HealthProbeTest : public ::testing::Test {
 protected:
  HealthProbeTest() { probe_.set_instance(&health_); }

  // One check, due now, with the answer `ok`; then the clock moves to the next one.
  Change check(bool ok) {
    EXPECT_TRUE(probe_.due());
    probe_.begin();
    const Change change = probe_.record(ok);
    clock_.advance(kSettings.interval);
    return change;
  }

  ManualClock clock_;
  InstanceHealth health_;
  HealthProbe probe_{clock_, kSettings};
};

TEST_F(HealthProbeTest, UnhealthyAfterThresholdFailuresInARowHealthyAfterThresholdSuccesses) {
  EXPECT_EQ(check(false), Change::kNone);
  EXPECT_EQ(check(false), Change::kNone);
  EXPECT_TRUE(health_.healthy);
  EXPECT_EQ(check(false), Change::kBecameUnhealthy);
  EXPECT_FALSE(health_.healthy);
  EXPECT_EQ(probe_.consecutive_failed(), 3u);
  EXPECT_EQ(check(false), Change::kNone) << "already out";
  EXPECT_EQ(check(true), Change::kNone) << "one success is not enough";
  EXPECT_FALSE(health_.healthy);
  EXPECT_EQ(check(true), Change::kBecameHealthy);
  EXPECT_TRUE(health_.healthy);
}

TEST_F(HealthProbeTest, ASuccessResetsTheFailureRun) {
  check(false);
  check(false);
  check(true);
  EXPECT_EQ(check(false), Change::kNone);
  EXPECT_EQ(check(false), Change::kNone);
  EXPECT_TRUE(health_.healthy) << "two failures since the success, threshold 3";
  EXPECT_EQ(check(false), Change::kBecameUnhealthy);
}

TEST_F(HealthProbeTest, DueEveryIntervalFromTheStartOfTheLastCheckAndNeverTwiceAtOnce) {
  EXPECT_TRUE(probe_.due()) << "the first check goes at once";
  probe_.begin();
  clock_.advance(milliseconds(5000));
  EXPECT_FALSE(probe_.due()) << "a check in flight delays the next";
  probe_.record(true);
  EXPECT_TRUE(probe_.due());
  probe_.begin();
  clock_.advance(milliseconds(150));
  probe_.record(true);
  clock_.advance(milliseconds(849));
  EXPECT_FALSE(probe_.due());
  clock_.advance(milliseconds(1));
  EXPECT_TRUE(probe_.due());
  EXPECT_EQ(probe_.timing().timeout, milliseconds(200));
  EXPECT_FALSE(probe_.check_stale()) << "a verdict has no staleness";
}

TEST_F(HealthProbeTest, AGoodCheckEndsARefusedConnectionParking) {
  park_refused(health_, clock_.now());
  ASSERT_EQ(availability(health_, clock_.now(), BreakerParams{}), OutReason::kParkedRefused);
  check(true);
  EXPECT_EQ(availability(health_, clock_.now(), BreakerParams{}), OutReason::kNone);
}

TEST_F(HealthProbeTest, RetiredItLeavesTheInstanceHealthyAndIgnoresALateAnswer) {
  check(false);
  check(false);
  check(false);
  ASSERT_FALSE(health_.healthy);
  probe_.begin();
  probe_.retire();
  EXPECT_TRUE(health_.healthy) << "no longer held out by an old verdict";
  EXPECT_EQ(probe_.record(false), Change::kNone) << "the answer of a check begun before";
  EXPECT_TRUE(health_.healthy);
}

TEST_F(HealthProbeTest, NewSettingsKeepTheCounts) {
  check(false);
  check(false);
  HealthSettings stricter = kSettings;
  stricter.unhealthy_threshold = 2;
  stricter.interval = milliseconds(100);
  probe_.set_settings(stricter);
  EXPECT_TRUE(health_.healthy);
  EXPECT_EQ(check(false), Change::kBecameUnhealthy) << "3 failures, threshold now 2";
  EXPECT_EQ(probe_.timing().interval, milliseconds(100));
}

}  // namespace
}  // namespace rolter
