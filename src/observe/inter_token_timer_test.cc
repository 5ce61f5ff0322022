#include "observe/inter_token_timer.h"

#include <gtest/gtest.h>
#include <prometheus/histogram.h>

#include "observe/sharded_series.h"

namespace rolter {
namespace {

using std::chrono::milliseconds;

TEST(InterTokenTimerTest, GapsAfterTheFirstContentSpreadOverThePiecesRead) {
  prometheus::Histogram series({0.01, 0.1, 1});
  WorkerCells cells(1);
  ShardedHistogram histogram(cells, series, {0.01, 0.1, 1});
  InterTokenTimer timer(&histogram);
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  timer.arrived(t0, 2);                      // the first content: time to first token, not here
  timer.arrived(t0 + milliseconds(50), 0);   // a read without content changes nothing
  timer.arrived(t0 + milliseconds(40), 1);   // 40 ms after the last content
  timer.arrived(t0 + milliseconds(100), 3);  // 60 ms for three pieces: three gaps of 20 ms
  histogram.fold();
  const auto h = series.Collect().histogram;
  EXPECT_EQ(h.sample_count, 4u);
  EXPECT_NEAR(h.sample_sum, 0.1, 1e-9);
  EXPECT_EQ(h.bucket[0].cumulative_count, 0u);  // none at or under 10 ms
  EXPECT_EQ(h.bucket[1].cumulative_count, 4u);
}

TEST(InterTokenTimerTest, WithoutAHistogramNothingIsObserved) {
  InterTokenTimer timer(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  timer.arrived(t0, 1);
  timer.arrived(t0 + milliseconds(5), 1);  // no crash, nothing to observe into
}

}  // namespace
}  // namespace rolter
