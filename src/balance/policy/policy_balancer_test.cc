#include "balance/policy/policy_balancer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "balance/explain.h"
#include "balance/strategies/round_robin.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

// A plugin that votes fixed scores with a fixed multiplier, as a table row describes it.
class FixedPlugin final : public PolicyPlugin {
 public:
  FixedPlugin(std::string name, std::vector<double> scores, double multiplier)
      : name_(std::move(name)), scores_(std::move(scores)), multiplier_(multiplier) {}
  std::string_view name() const override { return name_; }
  double vote(const RouteContext&, const Loads&, Eligible, std::span<double> out) override {
    for (size_t i = 0; i < out.size(); ++i) out[i] = scores_[i];
    return multiplier_;
  }

 private:
  std::string name_;
  std::vector<double> scores_;
  double multiplier_;
};

struct PluginRow {
  double weight;
  double multiplier;
  std::vector<double> scores;
};

PolicyBalancer make_finisher(size_t n, const std::vector<PluginRow>& plugins, Random& random) {
  std::vector<PolicyBalancer::Entry> entries;
  for (size_t p = 0; p < plugins.size(); ++p) {
    entries.push_back({std::make_unique<FixedPlugin>("plugin" + std::to_string(p),
                                                     plugins[p].scores, plugins[p].multiplier),
                       plugins[p].weight});
  }
  return PolicyBalancer(n, std::move(entries), std::make_unique<RoundRobinBalancer>(n), random);
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(PolicyBalancerTest, TotalsAreWeightedSumsOfL1NormalisedScores) {
  struct Case {
    std::string name;
    std::vector<PluginRow> plugins;
    std::vector<bool> eligible;
    std::vector<double> totals;  // expected, by hand
    size_t voters;
  };
  const std::vector<Case> cases = {
      // {1,3} -> {1/4, 3/4}; {2,2} -> {1/2, 1/2}.
      {"two plugins of weight 1", {{1, 1, {1, 3}}, {1, 1, {2, 2}}}, {true, true}, {0.75, 1.25}, 2},
      // The scale of a plugin's scores does not matter, only their shares: {10,30} = {1,3}.
      {"scale-free", {{1, 1, {10, 30}}, {1, 1, {2, 2}}}, {true, true}, {0.75, 1.25}, 2},
      // weight 2 x multiplier 0.5 = 1 in total: {1,0,1} -> {1/2, 0, 1/2}; weight 3: {0,1,0}.
      {"weight times multiplier",
       {{2, 0.5, {1, 0, 1}}, {3, 1, {0, 1, 0}}},
       {true, true, true},
       {0.5, 3, 0.5},
       2},
      // Multiplier 0 abstains, however large its scores.
      {"abstaining plugin", {{1, 1, {1, 3}}, {100, 0, {9, 1}}}, {true, true}, {0.25, 0.75}, 1},
      // Scores that sum to 0 carry no opinion.
      {"all-zero plugin", {{1, 1, {1, 3}}, {100, 1, {0, 0}}}, {true, true}, {0.25, 0.75}, 1},
      // Its only non-zero score is on an ineligible candidate: no opinion among the eligible.
      {"zero among the eligible",
       {{1, 1, {1, 3, 0}}, {100, 1, {0, 0, 5}}},
       {true, true, false},
       {0.25, 0.75, 0},
       1},
      // Candidate 2 is ineligible: {1,1,(2)} normalises to {1/2, 1/2, 0}, not {1/4, 1/4, ...}.
      {"ineligible candidates excluded from normalisation",
       {{1, 1, {1, 1, 2}}},
       {true, true, false},
       {0.5, 0.5, 0},
       1},
      // NaN, negative and infinite scores count as 0; a NaN or negative multiplier abstains.
      {"misbehaving plugin",
       {{1, 1, {kNaN, -1, 1, std::numeric_limits<double>::infinity()}},
        {5, kNaN, {1, 1, 1, 1}},
        {5, -1, {1, 1, 1, 1}}},
       {true, true, true, true},
       {0, 0, 1, 0},
       1},
      {"nobody votes", {{1, 0, {1, 1}}, {1, 1, {0, 0}}}, {true, true}, {0, 0}, 0},
  };
  for (const Case& c : cases) {
    SeededRandom random(1);
    PolicyBalancer lb = make_finisher(c.totals.size(), c.plugins, random);
    LoadsFixture loads(c.totals.size());
    std::vector<double> totals(c.totals.size(), -1);
    const size_t voters = lb.totals(
        {}, loads.view(), [&](size_t i) { return c.eligible[i]; }, totals);
    EXPECT_EQ(voters, c.voters) << c.name;
    for (size_t i = 0; i < totals.size(); ++i) {
      EXPECT_NEAR(totals[i], c.totals[i], 1e-12) << c.name << ", candidate " << i;
    }
  }
}

TEST(PolicyBalancerTest, PicksTheHighestTotal) {
  SeededRandom random(1);
  // Totals {0.25 + 0.5, 0.75 + 0.5} = {0.75, 1.25}: candidate 1.
  PolicyBalancer lb = make_finisher(2, {{1, 1, {1, 3}}, {1, 1, {2, 2}}}, random);
  LoadsFixture loads(2);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(lb.pick({}, loads.view()), 1u);
  // Without the better candidate, the other.
  EXPECT_EQ(lb.pick_eligible({}, loads.view(), [](size_t i) { return i == 0; }), 0u);
}

TEST(PolicyBalancerTest, NormalisationOverTheEligibleDecidesTheWinner) {
  // Plugin A (weight 1) {2, 0, (6)}, plugin B (weight 0.6) {0, 1, 0}; candidate 2 ineligible.
  // Over the eligible, A gives {1, 0} and B {0, 0.6}: candidate 0 wins, 1 > 0.6. Had the
  // ineligible 6 joined A's sum, A would give candidate 0 only 2/8 = 0.25 and candidate 1 would
  // win.
  SeededRandom random(1);
  PolicyBalancer lb = make_finisher(3, {{1, 1, {2, 0, 6}}, {0.6, 1, {0, 1, 0}}}, random);
  LoadsFixture loads(3);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(lb.pick_eligible({}, loads.view(), [](size_t c) { return c != 2; }), 0u);
  }
}

TEST(PolicyBalancerTest, ExactTiesAreBrokenUniformlyAtRandom) {
  SeededRandom random(7);
  // Plugin A (weight 1) {1, 0, 0, 0} -> {1, 0, 0, 0}; plugin B (weight 1.5) {0, 0, 2, 1} ->
  // {0, 0, 1, 0.5}. Totals {1, 0, 1, 0.5}: candidates 0 and 2 tie.
  PolicyBalancer lb = make_finisher(4, {{1, 1, {1, 0, 0, 0}}, {1.5, 1, {0, 0, 2, 1}}}, random);
  LoadsFixture loads(4);
  std::vector<double> totals(4);
  lb.totals(
      {}, loads.view(), [](size_t) { return true; }, totals);
  ASSERT_TRUE(PolicyBalancer::same_total(totals[0], totals[2]));
  std::vector<int> counts(4, 0);
  constexpr int kPicks = 4000;
  for (int i = 0; i < kPicks; ++i) ++counts[*lb.pick({}, loads.view())];
  EXPECT_EQ(counts[1], 0);
  EXPECT_EQ(counts[3], 0);
  // Seeded, so the counts are fixed; the bounds only say "about half each".
  EXPECT_GT(counts[0], kPicks * 45 / 100);
  EXPECT_GT(counts[2], kPicks * 45 / 100);
}

TEST(PolicyBalancerTest, SameTotalIsRelativeAndTight) {
  EXPECT_TRUE(PolicyBalancer::same_total(5.0 / 7, 1.0 / 7 + 4.0 / 7));
  EXPECT_TRUE(PolicyBalancer::same_total(0, 0));
  EXPECT_FALSE(PolicyBalancer::same_total(1.0, 1.0 + 1e-9));
  EXPECT_FALSE(PolicyBalancer::same_total(0, 1e-300));
}

TEST(PolicyBalancerTest, NoOpinionIsRoundRobinOverTheEligible) {
  SeededRandom random(1);
  // One plugin abstains, the other scores only zeros: nobody has an opinion.
  PolicyBalancer lb = make_finisher(4, {{1, 0, {1, 2, 3, 4}}, {1, 1, {0, 0, 0, 0}}}, random);
  LoadsFixture loads(4);
  const auto eligible = [](size_t i) { return i != 1; };
  const std::vector<size_t> expected = {0, 2, 3, 0, 2, 3, 0, 2, 3};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(lb.pick_eligible({}, loads.view(), eligible), expected[i]) << "pick " << i;
  }
  // No plugin at all: the same.
  PolicyBalancer bare = make_finisher(3, {}, random);
  LoadsFixture three(3);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(bare.pick({}, three.view()), i % 3);
}

TEST(PolicyBalancerTest, NeverIneligibleAndNulloptWhenNoneEligible) {
  SeededRandom random(3);
  PolicyBalancer lb = make_finisher(3, {{1, 1, {5, 1, 1}}}, random);
  LoadsFixture loads(3);
  for (int i = 0; i < 100; ++i) {
    const auto idx = lb.pick_eligible({}, loads.view(), [](size_t c) { return c != 0; });
    ASSERT_TRUE(idx.has_value());
    EXPECT_NE(*idx, 0u);
  }
  EXPECT_EQ(lb.pick_eligible({}, loads.view(), [](size_t) { return false; }), std::nullopt);
  LoadsFixture wrong(2);
  EXPECT_EQ(lb.pick({}, wrong.view()), std::nullopt);
  PolicyBalancer empty = make_finisher(0, {}, random);
  LoadsFixture none(0);
  EXPECT_EQ(empty.pick({}, none.view()), std::nullopt);
}

TEST(PolicyBalancerTest, ExplainRecordsEachPluginsContribution) {
  SeededRandom random(1);
  PolicyBalancer lb = make_finisher(2, {{1, 1, {1, 3}}, {2, 1, {1, 1}}}, random);
  LoadsFixture loads(2);
  Explain explain(2);
  RouteContext ctx;
  ctx.explain = &explain;
  EXPECT_EQ(lb.pick(ctx, loads.view()), 1u);
  const auto& rows = explain.rows();
  ASSERT_EQ(rows[1].scores.size(), 2u);
  EXPECT_EQ(rows[1].scores[0].first, "plugin0");
  EXPECT_DOUBLE_EQ(rows[1].scores[0].second, 0.75);
  EXPECT_EQ(rows[1].scores[1].first, "plugin1");
  EXPECT_DOUBLE_EQ(rows[1].scores[1].second, 1.0);
  EXPECT_DOUBLE_EQ(*rows[1].total, 1.75);
  EXPECT_DOUBLE_EQ(*rows[0].total, 1.25);

  PolicyBalancer silent = make_finisher(2, {{1, 0, {1, 1}}}, random);
  Explain why(2);
  ctx.explain = &why;
  (void)silent.pick(ctx, loads.view());
  ASSERT_EQ(why.reasons().size(), 1u);
  EXPECT_NE(why.reasons()[0].find("no plugin had an opinion"), std::string::npos);
}

}  // namespace
}  // namespace rolter
