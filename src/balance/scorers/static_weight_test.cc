#include "balance/scorers/static_weight.h"

#include <gtest/gtest.h>

#include <vector>

#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

std::vector<double> run(const std::vector<double>& weights, Eligible eligible) {
  const auto candidates = make_candidates(weights);
  StaticWeightScorer scorer(candidates);
  LoadsFixture loads(weights.size());
  std::vector<double> out(weights.size(), -1);
  scorer.score({}, loads.view(), eligible, out);
  return out;
}

TEST(StaticWeightScorerTest, WeightOverLargestWeight) {
  const std::vector<double> weights = {1, 2, 4, 0};
  const auto out = run(weights, [](size_t) { return true; });
  for (size_t i = 0; i < weights.size(); ++i) EXPECT_DOUBLE_EQ(out[i], weights[i] / 4) << i;
}

TEST(StaticWeightScorerTest, LargestIsOverEligibleOnly) {
  const auto out = run({1, 2, 4}, [](size_t c) { return c != 2; });
  EXPECT_DOUBLE_EQ(out[0], 0.5);
  EXPECT_DOUBLE_EQ(out[1], 1.0);
  EXPECT_LE(out[2], 1.0);
}

TEST(StaticWeightScorerTest, AllZeroIsNeutral) {
  for (double v : run({0, 0}, [](size_t) { return true; })) EXPECT_DOUBLE_EQ(v, 0.0);
}

}  // namespace
}  // namespace rolter
