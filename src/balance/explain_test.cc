#include "balance/explain.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "balance/route_context.h"
#include "balance/scored_stack.h"
#include "balance/scorers/least_load.h"
#include "balance/scorers/static_weight.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"
#include "common/random.h"

namespace rolter {
namespace {

TEST(Explain, RendersOneLineOfAsciiJson) {
  Explain explain(2);
  explain.eligible(1, false);
  explain.load(0, 3);
  explain.score(0, "prefix", 0.5);
  explain.score(0, "prefix", 0.75);  // a second value for a component replaces the first
  explain.total(0, 0.75);
  explain.reason("best \"match\" kept");
  explain.load(9, 1);  // out of range: ignored
  const std::vector<std::string> labels = {"a/m", "b/\xc3\xa9"};
  EXPECT_EQ(explain.to_json("cache_aware", labels, 0),
            R"({"strategy":"cache_aware","winner":"a/m","reasons":["best \"match\" kept"],)"
            R"("candidates":[{"target":"a/m","eligible":true,"load":3,"scores":{"prefix":0.75},)"
            R"("total":0.75},{"target":"b/??","eligible":false}]})");
  EXPECT_NE(explain.to_json("x", labels, std::nullopt).find(R"("winner":null)"), std::string::npos);
}

TEST(Explain, ScoredStackRecordsWeightedComponentsOfEligibleCandidates) {
  std::vector<ScoredStack::Entry> entries;
  entries.push_back({std::make_unique<LeastLoadScorer>(), 2.0});
  entries.push_back({std::make_unique<StaticWeightScorer>(make_candidates({1, 2, 4})), 1.0});
  SeededRandom random(1);
  ScoredStack stack("pipeline", 3, std::move(entries), random);
  LoadsFixture loads({0, 2, 4});
  Explain explain(3);
  RouteContext ctx;
  ctx.explain = &explain;
  const auto pick = stack.pick_eligible(ctx, loads.view(), [](size_t i) { return i != 2; });
  // Candidate 2 is ineligible. Least load over eligible {0, 1} (loads 0, 2): 1 and 0, weighted
  // 2; static weight over eligible (1 and 2 of the largest eligible 2): 0.5 and 1. Totals 2.5, 1.
  ASSERT_EQ(pick, 0u);
  const auto& rows = explain.rows();
  EXPECT_DOUBLE_EQ(rows[0].scores[0].second, 2.0);
  EXPECT_DOUBLE_EQ(rows[0].scores[1].second, 0.5);
  EXPECT_DOUBLE_EQ(rows[1].scores[0].second, 0.0);
  EXPECT_DOUBLE_EQ(rows[1].scores[1].second, 1.0);
  EXPECT_DOUBLE_EQ(*rows[0].total, 2.5);
  EXPECT_DOUBLE_EQ(*rows[1].total, 1.0);
  EXPECT_EQ(rows[0].scores[0].first, "least_load");
  EXPECT_TRUE(rows[2].scores.empty());
  EXPECT_FALSE(rows[2].total.has_value());
}

TEST(Explain, NothingIsRecordedWithoutAnExplain) {
  std::vector<ScoredStack::Entry> entries;
  entries.push_back({std::make_unique<LeastLoadScorer>(), 1.0});
  SeededRandom random(1);
  ScoredStack stack("pipeline", 2, std::move(entries), random);
  LoadsFixture loads({1, 0});
  RouteContext ctx;  // ctx.explain == nullptr
  EXPECT_EQ(stack.pick(ctx, loads.view()), 1u);
}

}  // namespace
}  // namespace rolter
