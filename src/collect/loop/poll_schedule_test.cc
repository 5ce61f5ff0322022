#include "collect/loop/poll_schedule.h"

#include <gtest/gtest.h>

#include <chrono>

namespace rolter {
namespace {

using std::chrono::milliseconds;

constexpr PollTiming kTiming{
    .interval = milliseconds(100), .timeout = milliseconds(50), .stale_after = milliseconds(300)};

class PollScheduleTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  PollSchedule schedule_{clock_, kTiming};
};

TEST_F(PollScheduleTest, DueAtOnceThenEveryIntervalFromTheLastBegin) {
  EXPECT_TRUE(schedule_.due()) << "the first poll goes at once";
  schedule_.begin();
  EXPECT_FALSE(schedule_.due()) << "in flight";
  clock_.advance(milliseconds(30));
  schedule_.succeed();
  EXPECT_FALSE(schedule_.due()) << "30 ms since it began";
  clock_.advance(milliseconds(69));
  EXPECT_FALSE(schedule_.due());
  clock_.advance(milliseconds(1));
  EXPECT_TRUE(schedule_.due()) << "100 ms since it began, not since it ended";
}

TEST_F(PollScheduleTest, APollInFlightDelaysTheNext) {
  schedule_.begin();
  clock_.advance(milliseconds(250));
  EXPECT_FALSE(schedule_.due()) << "never two at once, however late";
  schedule_.fail();
  EXPECT_TRUE(schedule_.due());
}

TEST_F(PollScheduleTest, EachOutcomeReportsOnlyTheStartOfARun) {
  schedule_.begin();
  EXPECT_TRUE(schedule_.fail()) << "the first failure, at start";
  schedule_.begin();
  EXPECT_FALSE(schedule_.fail()) << "still failing";
  schedule_.begin();
  EXPECT_TRUE(schedule_.succeed()) << "the first success after failures";
  EXPECT_TRUE(schedule_.fresh());
  schedule_.begin();
  EXPECT_FALSE(schedule_.succeed());
  schedule_.begin();
  EXPECT_TRUE(schedule_.fail());
  EXPECT_FALSE(schedule_.fresh()) << "a failure ends freshness at once";
}

TEST_F(PollScheduleTest, AGoodAnswerGoesStaleOnceAfterStaleAfter) {
  schedule_.begin();
  schedule_.succeed();
  clock_.advance(milliseconds(299));
  EXPECT_FALSE(schedule_.check_stale());
  EXPECT_TRUE(schedule_.fresh());
  clock_.advance(milliseconds(1));
  EXPECT_TRUE(schedule_.check_stale());
  EXPECT_FALSE(schedule_.fresh());
  EXPECT_FALSE(schedule_.check_stale()) << "reported once";
  schedule_.begin();
  EXPECT_TRUE(schedule_.succeed()) << "fresh again: a new run";
}

TEST_F(PollScheduleTest, ZeroStaleAfterNeverGoesStale) {
  PollSchedule schedule(clock_, PollTiming{.interval = milliseconds(10)});
  schedule.begin();
  schedule.succeed();
  clock_.advance(std::chrono::hours(24));
  EXPECT_FALSE(schedule.check_stale());
  EXPECT_TRUE(schedule.fresh());
}

TEST_F(PollScheduleTest, RetireForgetsThePollInFlightAndTheAnswer) {
  schedule_.begin();
  schedule_.succeed();
  schedule_.begin();
  schedule_.retire();
  EXPECT_FALSE(schedule_.in_flight());
  EXPECT_FALSE(schedule_.fresh());
  EXPECT_FALSE(schedule_.check_stale()) << "nothing fresh to go stale";
}

TEST_F(PollScheduleTest, NewTimingAppliesToTheNextDueCheck) {
  schedule_.begin();
  schedule_.succeed();
  schedule_.set_timing(PollTiming{.interval = milliseconds(20), .stale_after = milliseconds(40)});
  clock_.advance(milliseconds(20));
  EXPECT_TRUE(schedule_.due());
  clock_.advance(milliseconds(20));
  EXPECT_TRUE(schedule_.check_stale());
}

}  // namespace
}  // namespace rolter
