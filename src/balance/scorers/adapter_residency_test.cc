#include "balance/scorers/adapter_residency.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

RouteContext for_adapter(std::string_view adapter) {
  RouteContext ctx;
  ctx.adapter = adapter;
  return ctx;
}

std::vector<double> scores(
    AdapterResidencyScorer& scorer, std::string_view adapter, size_t n,
    Eligible eligible = [](size_t) { return true; }) {
  LoadsFixture loads(n);
  std::vector<double> out(n, -1);
  scorer.score(for_adapter(adapter), loads.view(), eligible, out);
  return out;
}

std::vector<CandidateSpec> with_max_loras(const std::vector<uint32_t>& max_loras) {
  auto candidates = make_candidates(max_loras.size());
  for (size_t i = 0; i < max_loras.size(); ++i) candidates[i].max_loras = max_loras[i];
  return candidates;
}

TEST(AdapterResidencyScorerTest, HoldersScoreOne) {
  AdapterResidencyScorer scorer(with_max_loras({8, 8, 8}));
  scorer.observe(0, for_adapter("sql-lora"));
  scorer.observe(2, for_adapter("sql-lora"));
  scorer.observe(1, for_adapter("chat-lora"));
  EXPECT_EQ(scores(scorer, "sql-lora", 3), std::vector<double>({1, 0, 1}));
  EXPECT_EQ(scores(scorer, "chat-lora", 3), std::vector<double>({0, 1, 0}));
}

TEST(AdapterResidencyScorerTest, NeutralCases) {
  AdapterResidencyScorer scorer(with_max_loras({8, 8, 8}));
  scorer.observe(1, for_adapter("sql-lora"));
  scorer.observe(1, RouteContext{});  // no adapter: nothing recorded
  // Nobody holds it, no adapter at all, or the only holder is ineligible: all 0.
  EXPECT_EQ(scores(scorer, "unseen-lora", 3), std::vector<double>({0, 0, 0}));
  EXPECT_EQ(scores(scorer, "", 3), std::vector<double>({0, 0, 0}));
  EXPECT_EQ(scores(scorer, "sql-lora", 3, [](size_t i) { return i != 1; }),
            std::vector<double>({0, 0, 0}));
}

TEST(AdapterResidencyScorerTest, LruBoundedByMaxLoras) {
  // Candidate 0 keeps 2 adapters; candidate 1 keeps none (max_loras 0).
  AdapterResidencyScorer scorer(with_max_loras({2, 0}));
  struct Step {
    const char* served;             // served on candidate 0 (and offered to candidate 1)
    std::vector<std::string> held;  // what candidate 0 holds afterwards
    std::vector<std::string> gone;  // what it no longer holds
  };
  const Step steps[] = {
      {"a", {"a"}, {"b"}},       // a first
      {"b", {"a", "b"}, {}},     // room for a second
      {"a", {"a", "b"}, {}},     // a is now the most recent, b the least
      {"c", {"a", "c"}, {"b"}},  // c evicts b, the least recently served
      {"b", {"b", "c"}, {"a"}},  // b evicts a
      {"b", {"b", "c"}, {"a"}},  // serving a resident adapter evicts nothing
  };
  for (const Step& step : steps) {
    scorer.observe(0, for_adapter(step.served));
    scorer.observe(1, for_adapter(step.served));
    for (const auto& a : step.held) {
      EXPECT_TRUE(scorer.holds(0, a)) << "after " << step.served << ": " << a;
    }
    for (const auto& a : step.gone) {
      EXPECT_FALSE(scorer.holds(0, a)) << "after " << step.served << ": " << a;
    }
    EXPECT_FALSE(scorer.holds(1, step.served)) << "max_loras 0 holds nothing";
  }
}

TEST(AdapterResidencyScorerTest, OutOfRangeObserveIsIgnored) {
  AdapterResidencyScorer scorer(with_max_loras({8}));
  scorer.observe(5, for_adapter("sql-lora"));
  EXPECT_EQ(scores(scorer, "sql-lora", 1), std::vector<double>({0}));
}

}  // namespace
}  // namespace rolter
