#include "bench/replay_result.h"

#include <gtest/gtest.h>

namespace rolter::bench {
namespace {

// A lone request in flight makes max/mean the engine count whatever the strategy: it counts in
// the mean but not in the peak, which only busy samples (>= 1 request per engine) set.
TEST(RunSamplesTest, ImbalancePeakCountsOnlyBusySamples) {
  RunSamples s;
  s.add_imbalance_sample(/*max_load=*/1, /*mean_load=*/1.0 / 8);  // 8 engines, one request
  s.add_imbalance_sample(12, 8);                                  // busy: 1.5
  s.add_imbalance_sample(3, 2);                                   // busy: 1.5
  s.add_imbalance_sample(2, 1);                                   // busy: 2
  s.add_imbalance_sample(5, 0);                                   // nothing in flight: ignored
  EXPECT_EQ(s.imbalance_samples, 4u);
  EXPECT_DOUBLE_EQ(s.imbalance_sum, 8 + 1.5 + 1.5 + 2);
  EXPECT_DOUBLE_EQ(s.imbalance_peak, 2);
}

// ITL pools the intervals of every answer: two answers of 3 and 2 tokens give 3 intervals, and
// a one-token answer none.
TEST(RunSamplesTest, ItlPoolsEveryAnswersIntervals) {
  RunSamples s;
  const std::vector<double> a = {100, 110, 130};  // intervals 10, 20
  const std::vector<double> b = {50, 150};        // interval 100
  const std::vector<double> c = {70};             // none
  add_token_intervals(a, s.itl_ms);
  add_token_intervals(b, s.itl_ms);
  add_token_intervals(c, s.itl_ms);
  EXPECT_EQ(s.itl_ms, (std::vector<double>{10, 20, 100}));
  const StrategyResult r = summarize("x", s, 0);
  EXPECT_EQ(r.itl_samples, 3u);
  EXPECT_DOUBLE_EQ(r.itl_p50_ms, 20);
  EXPECT_DOUBLE_EQ(r.itl_p99_ms, 20 + 0.98 * 80);  // linear between the two highest
}

TEST(RunSamplesTest, NoTokensNoItl) {
  RunSamples s;
  const StrategyResult r = summarize("x", s, 0);
  EXPECT_EQ(r.itl_samples, 0u);
  EXPECT_EQ(r.itl_p50_ms, 0);
  EXPECT_EQ(r.itl_p99_ms, 0);
}

}  // namespace
}  // namespace rolter::bench
