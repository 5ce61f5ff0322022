#include "balance/evidence/latency_ewma.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <thread>
#include <vector>

namespace rolter {
namespace {

TEST(LatencyEwmaTest, NoValueBeforeTheFirstSample) {
  LatencyEwma ewma;
  EXPECT_EQ(ewma.value(), std::nullopt);
  EXPECT_EQ(ewma.samples(), 0u);
}

TEST(LatencyEwmaTest, AlphaOneFifthExactValues) {
  struct Case {
    const char* name;
    std::vector<double> samples;
    std::vector<double> expected;  // the average after each sample
  };
  const Case cases[] = {
      // The first sample is the average; then each moves it a fifth of the way.
      {"steps", {100, 200, 50, 106}, {100, 120, 106, 106}},
      {"zero is a sample, not 'no sample'", {0, 10}, {0, 2}},
      {"constant stays put", {42, 42, 42}, {42, 42, 42}},
      {"one outlier fades", {100, 1100, 100, 100}, {100, 300, 260, 228}},
  };
  for (const Case& c : cases) {
    LatencyEwma ewma;
    for (size_t i = 0; i < c.samples.size(); ++i) {
      ewma.record(c.samples[i]);
      ASSERT_TRUE(ewma.value().has_value()) << c.name;
      EXPECT_DOUBLE_EQ(*ewma.value(), c.expected[i]) << c.name << ", after sample " << i;
      EXPECT_EQ(ewma.samples(), i + 1) << c.name;
    }
  }
}

TEST(LatencyEwmaTest, IgnoresNonFiniteAndNegativeSamples) {
  const double ignored[] = {std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(), -1.0};
  LatencyEwma ewma;
  for (double v : ignored) ewma.record(v);
  EXPECT_EQ(ewma.value(), std::nullopt);
  EXPECT_EQ(ewma.samples(), 0u);

  ewma.record(50);
  for (double v : ignored) ewma.record(v);
  EXPECT_EQ(ewma.value(), 50.0);
  EXPECT_EQ(ewma.samples(), 1u);
}

TEST(LatencyEwmaTest, ConcurrentRecordsLoseNoSample) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5000;
  LatencyEwma ewma;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&ewma] {
      for (int i = 0; i < kPerThread; ++i) ewma.record(80);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ewma.samples(), static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_EQ(ewma.value(), 80.0);
}

}  // namespace
}  // namespace rolter
