#include "balance/scorers/lower_is_better.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace rolter {
namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

TEST(ScoreLowerIsBetterTest, Table) {
  struct Case {
    const char* name;
    std::vector<double> costs;     // NaN: unknown
    std::vector<bool> eligible;    // empty: all eligible
    std::vector<double> expected;  // for eligible candidates; ineligible must be 0
  };
  const Case cases[] = {
      {"min-max, lower is better", {10, 20, 30}, {}, {1, 0.5, 0}},
      {"order does not matter", {30, 10, 20}, {}, {0, 1, 0.5}},
      {"all equal: all 1", {7, 7, 7}, {}, {1, 1, 1}},
      {"unknown gets the known mean", {10, kUnknown, 30}, {}, {1, 0.5, 0}},
      {"unknown mean of three", {0, 10, 40, kUnknown}, {}, {1, 0.75, 0, 1.75 / 3}},
      {"unknown among equals", {5, kUnknown, 5}, {}, {1, 1, 1}},
      {"one known: neutral", {10, kUnknown, kUnknown}, {}, {0, 0, 0}},
      {"none known: neutral", {kUnknown, kUnknown}, {}, {0, 0}},
      {"single candidate: neutral", {10}, {}, {0}},
      {"infinite counts as unknown",
       {10, std::numeric_limits<double>::infinity(), 30},
       {},
       {1, 0.5, 0}},
      {"range over eligible only", {1, 10, 20, 30}, {false, true, true, true}, {0, 1, 0.5, 0}},
      {"ineligible known leaves one known: neutral",
       {1, 10, kUnknown},
       {false, true, true},
       {0, 0, 0}},
      {"negative costs rank too", {-10, 0, 10}, {}, {1, 0.5, 0}},
  };
  for (const Case& c : cases) {
    std::vector<double> values = c.costs;
    const auto eligible = [&c](size_t i) { return c.eligible.empty() || c.eligible[i]; };
    score_lower_is_better(values, eligible);
    ASSERT_EQ(values.size(), c.expected.size()) << c.name;
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_DOUBLE_EQ(values[i], eligible(i) ? c.expected[i] : 0.0)
          << c.name << ", candidate " << i;
    }
  }
}

// Ratio to the best: near-ties stay near-ties (300 against 310 ms is not 1 against 0).
TEST(ScoreLowerIsBetterTest, RatioToBestTable) {
  struct Case {
    const char* name;
    std::vector<double> costs;
    std::vector<double> expected;
  };
  const Case cases[] = {
      {"the best scores 1, others their ratio", {99, 199, 399}, {1, 0.5, 0.25}},
      {"a near-tie stays near", {299, 309}, {1, 300.0 / 310}},
      {"all equal: all 1", {7, 7, 7}, {1, 1, 1}},
      {"zero cost stays finite", {0, 1}, {1, 0.5}},
      {"unknown gets the known mean", {99, kUnknown, 199}, {1, 0.75, 0.5}},
      {"one known: neutral", {10, kUnknown}, {0, 0}},
  };
  for (const Case& c : cases) {
    std::vector<double> values = c.costs;
    score_lower_is_better(values, [](size_t) { return true; }, Scale::kRatioToBest);
    ASSERT_EQ(values.size(), c.expected.size()) << c.name;
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_DOUBLE_EQ(values[i], c.expected[i]) << c.name << ", candidate " << i;
    }
  }
}

}  // namespace
}  // namespace rolter
