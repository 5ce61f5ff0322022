#include "bench/overhead/aggregate.h"

#include <gtest/gtest.h>

namespace rolter::bench::overhead {
namespace {

Figures with_latency(double p50, double p99, double ttft50) {
  Figures f;
  f.latency = {p50, p99, p99 * 2};
  f.ttft = {ttft50, ttft50 * 2, ttft50 * 3};
  return f;
}

TEST(AggregateTest, AddedLatencyIsPerRoundDifferenceFromDirect) {
  std::vector<PathResult> paths(2);
  paths[0].name = "direct";
  paths[0].rounds = {with_latency(100, 200, 110), with_latency(120, 260, 130)};
  paths[1].name = "rolter";
  paths[1].rounds = {with_latency(150, 300, 170), with_latency(180, 330, 190)};
  compute_added(paths, 0);
  EXPECT_DOUBLE_EQ(paths[0].rounds[0].added_latency.p50, 0);
  EXPECT_DOUBLE_EQ(paths[0].rounds[1].added_ttft.p999, 0);
  EXPECT_DOUBLE_EQ(paths[1].rounds[0].added_latency.p50, 50);
  EXPECT_DOUBLE_EQ(paths[1].rounds[0].added_latency.p99, 100);
  EXPECT_DOUBLE_EQ(paths[1].rounds[1].added_latency.p50, 60);
  EXPECT_DOUBLE_EQ(paths[1].rounds[1].added_latency.p999, 140);
  EXPECT_DOUBLE_EQ(paths[1].rounds[1].added_ttft.p50, 60);
}

TEST(AggregateTest, MedianOfRoundsAndSummedErrors) {
  std::vector<Figures> rounds(3);
  rounds[0].rps_c32 = 300;
  rounds[1].rps_c32 = 100;
  rounds[2].rps_c32 = 200;
  rounds[0].latency.p99 = 9;
  rounds[1].latency.p99 = 1;
  rounds[2].latency.p99 = 5;
  rounds[0].cpu_s_per_10k = 0.3;
  rounds[2].cpu_s_per_10k = 0.1;
  rounds[1].c32_errors = 2;
  rounds[2].latency_errors = 1;
  rounds[0].probes.push_back({});
  Figures m = median_figures(rounds);
  EXPECT_DOUBLE_EQ(m.rps_c32, 200);
  EXPECT_DOUBLE_EQ(m.latency.p99, 5);
  ASSERT_TRUE(m.cpu_s_per_10k);
  EXPECT_DOUBLE_EQ(*m.cpu_s_per_10k, 0.2);  // of the rounds that had it
  EXPECT_EQ(m.errors(), 3u);
  EXPECT_TRUE(m.probes.empty());
}

TEST(AggregateTest, Median) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({3}), 3);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({5, 1, 3}), 3);
}

}  // namespace
}  // namespace rolter::bench::overhead
