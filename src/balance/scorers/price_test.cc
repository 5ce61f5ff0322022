#include "balance/scorers/price.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

TEST(PriceScorerTest, CheaperIsBetterUnknownNeutral) {
  struct Case {
    const char* name;
    std::vector<std::optional<double>> prices;
    std::vector<bool> eligible;    // empty: all eligible
    std::vector<double> expected;  // for eligible candidates
  };
  const Case cases[] = {
      {"ranked", {2.0, 10.0, 6.0}, {}, {1, 0, 0.5}},
      {"all equal: all 1", {3.0, 3.0, 3.0}, {}, {1, 1, 1}},
      {"free is cheapest", {0.0, 4.0}, {}, {1, 0}},
      {"unknown gets the known mean", {2.0, std::nullopt, 10.0, 6.0}, {}, {1, 0.5, 0, 0.5}},
      {"one known: neutral", {2.0, std::nullopt}, {}, {0, 0}},
      {"no prices: neutral", {std::nullopt, std::nullopt}, {}, {0, 0}},
      {"cheapest ineligible", {1.0, 2.0, 4.0}, {false, true, true}, {0, 1, 0}},
  };
  for (const Case& c : cases) {
    const size_t n = c.prices.size();
    auto candidates = make_candidates(n);
    for (size_t i = 0; i < n; ++i) candidates[i].price = c.prices[i];
    PriceScorer scorer(candidates);
    LoadsFixture loads(n);
    std::vector<double> out(n, -1);
    const auto eligible = [&c](size_t i) { return c.eligible.empty() || c.eligible[i]; };
    scorer.score({}, loads.view(), eligible, out);
    for (size_t i = 0; i < n; ++i) {
      if (eligible(i)) {
        EXPECT_DOUBLE_EQ(out[i], c.expected[i]) << c.name << ", candidate " << i;
      }
    }
  }
}

}  // namespace
}  // namespace rolter
