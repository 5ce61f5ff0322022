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

}  // namespace
}  // namespace rolter::bench
