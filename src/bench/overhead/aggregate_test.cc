#include "bench/overhead/aggregate.h"

#include <gtest/gtest.h>

#include <optional>

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

Figures with_cpu_and_c32(std::optional<double> cpu, double c32) {
  Figures f;
  f.cpu_s_per_10k = cpu;
  f.rps_c32 = c32;
  return f;
}

std::optional<double> cpu_of(const Figures& f) { return f.cpu_s_per_10k; }
std::optional<double> c32_of(const Figures& f) { return f.rps_c32; }

// Each round's ratio is taken within the round: a fast round and a slow one do not mix.
TEST(AggregateTest, SameRoundRatiosPairRoundsAndSkipMissingFigures) {
  PathResult rolter, nginx;
  rolter.rounds = {with_cpu_and_c32(0.30, 300), with_cpu_and_c32(0.60, 100),
                   with_cpu_and_c32(std::nullopt, 200), with_cpu_and_c32(0.50, 400)};
  nginx.rounds = {with_cpu_and_c32(0.25, 400), with_cpu_and_c32(0.40, 200),
                  with_cpu_and_c32(0.30, 250), with_cpu_and_c32(0.50, 0)};
  const auto cpu = same_round_ratio(rolter, nginx, cpu_of);
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->rounds, 3u);  // round 3: rolter has no CPU figure
  EXPECT_DOUBLE_EQ(cpu->min, 1.0);
  EXPECT_DOUBLE_EQ(cpu->max, 1.5);
  EXPECT_DOUBLE_EQ(cpu->median, 1.2);
  const auto c32 = same_round_ratio(rolter, nginx, c32_of);
  ASSERT_TRUE(c32.has_value());
  EXPECT_EQ(c32->rounds, 3u);  // round 4: nginx served nothing
  EXPECT_DOUBLE_EQ(c32->min, 0.5);
  EXPECT_DOUBLE_EQ(c32->max, 0.8);
  EXPECT_DOUBLE_EQ(c32->median, 0.75);
  // (The medians' ratio would be 0.50 / 0.35, about 1.43, for CPU.)
  PathResult empty;
  EXPECT_FALSE(same_round_ratio(empty, nginx, cpu_of).has_value());
}

}  // namespace
}  // namespace rolter::bench::overhead
