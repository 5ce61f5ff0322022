#include "sim/latency_model.h"

#include <gtest/gtest.h>

namespace rolter::sim {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(LatencyModelTest, TokensArePacedAfterTheFirst) {
  LatencyModel m({.ttft_ms = 20, .token_ms = 5, .time_scale = 1.0});
  EXPECT_EQ(m.token_offset(10, 0), milliseconds(20));
  EXPECT_EQ(m.token_offset(10, 1), milliseconds(25));
  EXPECT_EQ(m.token_offset(10, 4), milliseconds(40));
}

TEST(LatencyModelTest, NonStreamingAnswersAfterTtftPlusAllTokens) {
  LatencyModel m({.ttft_ms = 20, .token_ms = 5, .time_scale = 1.0});
  EXPECT_EQ(m.completion_time(10, 16), milliseconds(100));
  EXPECT_EQ(m.completion_time(10, 0), milliseconds(20));
  EXPECT_EQ(m.embedding_time(10), milliseconds(20));
}

TEST(LatencyModelTest, TimeScaleMultipliesEveryDelay) {
  LatencyModel half({.ttft_ms = 20, .token_ms = 5, .time_scale = 0.5});
  EXPECT_EQ(half.token_offset(1, 2), milliseconds(15));
  EXPECT_EQ(half.completion_time(1, 4), milliseconds(20));
  LatencyModel fine({.ttft_ms = 0.5, .token_ms = 0.25, .time_scale = 1.0});
  EXPECT_EQ(fine.token_offset(1, 2), microseconds(1000));
  EXPECT_FALSE(half.instant());
}

TEST(LatencyModelTest, ZeroScaleIsInstant) {
  LatencyModel m({.ttft_ms = 20, .token_ms = 5, .time_scale = 0});
  EXPECT_TRUE(m.instant());
  EXPECT_EQ(m.token_offset(10, 100), LatencyModel::Duration::zero());
  EXPECT_EQ(m.completion_time(10, 100), LatencyModel::Duration::zero());
}

TEST(LatencyModelTest, NegativeInputsMeanNoDelay) {
  LatencyModel m({.ttft_ms = -3, .token_ms = -1, .time_scale = 1.0});
  EXPECT_EQ(m.completion_time(1, 10), LatencyModel::Duration::zero());
  EXPECT_EQ(m.params().ttft_ms, 0);
}

}  // namespace
}  // namespace rolter::sim
