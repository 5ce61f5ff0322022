#include "bench/percentile.h"

#include <gtest/gtest.h>

namespace rolter::bench {
namespace {

TEST(PercentileTest, InterpolatesBetweenRanks) {
  std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 4);
  EXPECT_DOUBLE_EQ(percentile(v, 99), 3.97);
}

TEST(PercentileTest, EdgeCases) {
  std::vector<double> none;
  EXPECT_EQ(percentile(none, 50), 0);
  std::vector<double> one = {7};
  EXPECT_EQ(percentile(one, 99), 7);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_NEAR(percentile(hundred, 99), 99.01, 1e-9);
  EXPECT_NEAR(percentile(hundred, 50), 50.5, 1e-9);
}

}  // namespace
}  // namespace rolter::bench
