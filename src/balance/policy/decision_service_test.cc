#include "balance/policy/decision_service.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "balance/decision_verdict.h"
#include "balance/policy/least_inflight.h"
#include "balance/policy/policy_balancer.h"
#include "balance/strategies/round_robin.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

const auto kAll = [](size_t) { return true; };

// Candidates serving the given models, one instance each unless a model repeats.
std::vector<CandidateSpec> serving(const std::vector<std::string>& models) {
  std::vector<CandidateSpec> out;
  for (size_t i = 0; i < models.size(); ++i) {
    out.push_back({.identity = "p" + std::to_string(i) + "/" + models[i] + "@http://10.0.0." +
                               std::to_string(i) + ":8000",
                   .model = models[i],
                   .target = i});
  }
  return out;
}

DecisionVerdict verdict(double small, double large, double confidence) {
  return {.choice = small > large ? "small" : "large",
          .probabilities = {{"small", small}, {"large", large}},
          .confidence = confidence};
}

TEST(DecisionPluginTest, ScoresEachInstanceByItsModelsProbability) {
  // Two instances of "small", one of "large", one of a model the verdict does not name.
  const auto candidates = serving({"small", "small", "large", "other"});
  DecisionPlugin plugin(candidates);
  ASSERT_TRUE(plugin.active());
  const DecisionVerdict v = verdict(0.7, 0.3, 0.8);
  RouteContext ctx;
  ctx.decision = &v;
  LoadsFixture loads(4);
  std::vector<double> out(4, -1);
  EXPECT_DOUBLE_EQ(plugin.vote(
                       ctx, loads.view(), [](size_t i) { return i != 1; }, out),
                   0.8);
  EXPECT_EQ(out, (std::vector<double>{0.7, 0, 0.3, 0}));
}

TEST(DecisionPluginTest, Abstains) {
  struct Case {
    std::string name;
    std::vector<std::string> models;
    std::optional<DecisionVerdict> verdict;
  };
  const std::vector<Case> cases = {
      {"no verdict", {"small", "large"}, std::nullopt},
      {"one model", {"small", "small"}, verdict(0.5, 0.5, 1)},
      {"one model and passthrough", {"small", ""}, verdict(0.5, 0.5, 1)},
      {"all passthrough", {"", ""}, verdict(0.5, 0.5, 1)},
      {"confidence 0", {"small", "large"}, verdict(0.5, 0.5, 0)},
      {"confidence above 1", {"small", "large"}, verdict(0.5, 0.5, 1.5)},
  };
  for (const Case& c : cases) {
    const auto candidates = serving(c.models);
    DecisionPlugin plugin(candidates);
    RouteContext ctx;
    if (c.verdict) ctx.decision = &*c.verdict;
    LoadsFixture loads(candidates.size());
    std::vector<double> out(candidates.size());
    EXPECT_EQ(plugin.vote(ctx, loads.view(), kAll, out), 0.0) << c.name;
  }
}

TEST(DecisionPluginTest, ConfidenceScalesTheWeightInTheFinisher) {
  // decision (weight 10) and least_inflight (weight 1) over small, small, large, with loads
  // 0, 0, 0 and p(small) = 0.2, p(large) = 0.8:
  //   decision, confidence 0.5: scores {0.2, 0.2, 0.8} sum 1.2 -> 10 x 0.5 x {1/6, 1/6, 2/3}
  //                             = {0.8333, 0.8333, 3.3333}
  //   least_inflight: {1, 1, 1} -> {1/3, 1/3, 1/3}
  //   totals {1.1667, 1.1667, 3.6667}: large wins.
  const auto candidates = serving({"small", "small", "large"});
  std::vector<PolicyBalancer::Entry> entries;
  entries.push_back({std::make_unique<DecisionPlugin>(candidates), 10});
  entries.push_back({std::make_unique<LeastInflightPlugin>(), 1});
  SeededRandom random(1);
  PolicyBalancer lb(3, std::move(entries), std::make_unique<RoundRobinBalancer>(3), random);
  const DecisionVerdict v = verdict(0.2, 0.8, 0.5);
  RouteContext ctx;
  ctx.decision = &v;
  LoadsFixture loads(3);
  std::vector<double> totals(3);
  EXPECT_EQ(lb.totals(ctx, loads.view(), kAll, totals), 2u);
  EXPECT_NEAR(totals[0], 5.0 / 6 + 1.0 / 3, 1e-12);
  EXPECT_NEAR(totals[1], 5.0 / 6 + 1.0 / 3, 1e-12);
  EXPECT_NEAR(totals[2], 10.0 / 3 + 1.0 / 3, 1e-12);
  EXPECT_EQ(lb.pick(ctx, loads.view()), 2u);
  // The large instance busy with 20 requests still wins: least_inflight's whole weight is 1.
  loads.set(2, 20);
  EXPECT_EQ(lb.pick(ctx, loads.view()), 2u);
}

}  // namespace
}  // namespace rolter
