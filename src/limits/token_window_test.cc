#include "limits/token_window.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

TEST(TokenWindow, AdmitsUpToTheLimit) {
  TokenWindow w;
  ASSERT_TRUE(TokenWindow::allows(w.summary(0), 1000, 600));
  w.reserve(600, 0);
  const TokenWindow::Summary s = w.summary(500);
  EXPECT_EQ(s.used, 600u);
  EXPECT_TRUE(TokenWindow::allows(s, 1000, 400));
  EXPECT_FALSE(TokenWindow::allows(s, 1000, 401));
  EXPECT_EQ(TokenWindow::remaining(s, 1000), 400u);
  EXPECT_EQ(TokenWindow::reset_ms(s, 500), 59'500);
}

TEST(TokenWindow, EstimateAboveTheLimitNeverPasses) {
  TokenWindow w;
  EXPECT_FALSE(TokenWindow::allows(w.summary(0), 1000, 1001));
  EXPECT_EQ(w.retry_after_ms(1000, 1001, 0), TokenWindow::kEstimateTooLargeRetryMs);
  EXPECT_TRUE(TokenWindow::allows(w.summary(0), 1000, 1000));
}

TEST(TokenWindow, SlidesOneSecondAtATime) {
  TokenWindow w;
  w.reserve(600, 0);       // second 0
  w.reserve(300, 30'500);  // second 30
  EXPECT_EQ(w.summary(59'999).used, 900u);
  EXPECT_EQ(w.summary(60'000).used, 300u);  // second 0 left at 60 s
  EXPECT_EQ(w.summary(90'000).used, 0u);
  // Retry-after: until the oldest buckets that cover the excess have left.
  EXPECT_EQ(w.retry_after_ms(1000, 500, 40'000), 20'000);  // excess 400: second 0 suffices
  EXPECT_EQ(w.retry_after_ms(1000, 800, 40'000), 50'000);  // excess 700: second 30 too
  EXPECT_EQ(w.retry_after_ms(1000, 100, 40'000), 0);
  EXPECT_EQ(TokenWindow::reset_ms(w.summary(40'000), 40'000), 20'000);
}

TEST(TokenWindow, SettlementRefundsAndChargesTheReservationsBucket) {
  struct Case {
    uint64_t reserved, actual;
    int64_t settle_at_ms;
    uint64_t used_after;
  };
  const Case cases[] = {
      {600, 100, 5'000, 100},  // refund
      {600, 900, 5'000, 900},  // overshoot is charged, even past tpm
      {600, 600, 5'000, 600},  // exact
      {600, 0, 59'999, 0},     // still in the window at its last millisecond
      {600, 0, 60'000, 0},     // left the window: dropped (and nothing is counted anyway)
  };
  for (const Case& c : cases) {
    TokenWindow w;
    w.reserve(c.reserved, 200);
    w.settle(200, c.reserved, c.actual, c.settle_at_ms);
    EXPECT_EQ(w.summary(c.settle_at_ms).used, c.used_after)
        << c.reserved << " -> " << c.actual << " at " << c.settle_at_ms;
  }
}

TEST(TokenWindow, SettlementNeverGoesBelowZeroNorTouchesAReusedSlot) {
  TokenWindow w;
  w.reserve(100, 0);
  w.settle(0, 500, 0, 1'000);  // a refund larger than the bucket
  EXPECT_EQ(w.summary(1'000).used, 0u);

  TokenWindow reused;
  reused.reserve(600, 0);       // second 0, slot 0
  reused.reserve(200, 60'000);  // second 60, the same slot
  reused.settle(0, 600, 0, 60'500);
  EXPECT_EQ(reused.summary(60'500).used, 200u);
}

TEST(TokenWindow, ReserveAddsToTheBucketOfNow) {
  TokenWindow w;
  w.reserve(10, 1'000);
  w.reserve(20, 1'999);
  w.reserve(30, 2'000);
  EXPECT_EQ(w.summary(2'000).used, 60u);
  EXPECT_EQ(w.summary(61'000).used, 30u);  // second 1 left, second 2 stays
  const TokenWindow::Summary after = TokenWindow::after_reserve(w.summary(2'500), 5, 2'500);
  w.reserve(5, 2'500);
  EXPECT_EQ(after.used, w.summary(2'500).used);
  EXPECT_EQ(after.oldest_second, w.summary(2'500).oldest_second);
}

TEST(TokenWindow, NegativeTimesUseFloorSeconds) {
  EXPECT_EQ(TokenWindow::second_of(-1), -1);
  EXPECT_EQ(TokenWindow::second_of(-1000), -1);
  EXPECT_EQ(TokenWindow::second_of(-1001), -2);
  TokenWindow w;
  w.reserve(7, -1);
  EXPECT_EQ(w.summary(58'999).used, 7u);
  EXPECT_EQ(w.summary(59'000).used, 0u);
}

}  // namespace
}  // namespace rolter
