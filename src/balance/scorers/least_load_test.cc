#include "balance/scorers/least_load.h"

#include <gtest/gtest.h>

#include <vector>

#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

std::vector<double> run(const std::vector<uint32_t>& load_values, Eligible eligible) {
  LoadsFixture loads(load_values);
  std::vector<double> out(load_values.size(), -1);
  LeastLoadScorer scorer;
  scorer.score({}, loads.view(), eligible, out);
  return out;
}

TEST(LeastLoadScorerTest, OneMinusLoadOverMax) {
  const std::vector<uint32_t> loads = {0, 5, 10, 8};
  const auto out = run(loads, [](size_t) { return true; });
  for (size_t i = 0; i < loads.size(); ++i) EXPECT_DOUBLE_EQ(out[i], 1.0 - loads[i] / 10.0) << i;
}

TEST(LeastLoadScorerTest, AllIdleScoresOne) {
  for (double v : run({0, 0, 0}, [](size_t) { return true; })) EXPECT_DOUBLE_EQ(v, 1.0);
}

TEST(LeastLoadScorerTest, MaxIsOverEligibleOnly) {
  // Candidate 2 is busy but ineligible: the others normalise by 4, not by 100.
  const auto out = run({2, 4, 100}, [](size_t c) { return c != 2; });
  EXPECT_DOUBLE_EQ(out[0], 0.5);
  EXPECT_DOUBLE_EQ(out[1], 0.0);
  EXPECT_GE(out[2], 0.0);
  EXPECT_LE(out[2], 1.0);
  // Eligible ones idle while an ineligible one is busy: all idle as far as the choice goes.
  const auto idle = run({0, 0, 7}, [](size_t c) { return c != 2; });
  EXPECT_DOUBLE_EQ(idle[0], 1.0);
  EXPECT_DOUBLE_EQ(idle[1], 1.0);
}

}  // namespace
}  // namespace rolter
