#include "balance/policy/policy_factory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "balance/balancer_factory.h"
#include "balance/policy/policy_settings.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

std::vector<int> shares(LoadBalancer& lb, size_t n, int picks, const RouteContext& ctx = {}) {
  LoadsFixture loads(n);
  std::vector<int> counts(n, 0);
  for (int i = 0; i < picks; ++i) {
    const auto idx = lb.pick(ctx, loads.view());
    EXPECT_TRUE(idx.has_value());
    if (idx) ++counts[*idx];
  }
  return counts;
}

TEST(PolicyFactoryTest, MakeBalancerBuildsPolicy) {
  const auto candidates = make_candidates(3);
  PolicySettings settings;
  settings.least_inflight_weight = 1;
  const std::vector<const PolicySettings*> policies = {nullptr, &settings};
  for (const PolicySettings* policy : policies) {
    auto lb = make_balancer("policy", candidates, BalancerDeps{}, RouteSettings{.policy = policy});
    ASSERT_TRUE(lb.has_value()) << lb.error();
    EXPECT_EQ((*lb)->name(), "policy");
  }
  EXPECT_FALSE(is_known_strategy("policy"));  // the validator handles policy routes itself
  EXPECT_TRUE(strategy_reads_weights("policy"));
}

TEST(PolicyFactoryTest, NoPluginAndNoTargetWeightsIsRoundRobin) {
  const auto candidates = make_candidates({100, 1, 1});  // weights are not read
  auto lb = make_policy_balancer(candidates, nullptr, BalancerDeps{});
  LoadsFixture loads(3);
  for (size_t i = 0; i < 9; ++i) EXPECT_EQ(lb->pick({}, loads.view()), i % 3);
}

TEST(PolicyFactoryTest, TargetWeightModeSplitsByTargetWeightOverInstances) {
  // SPEC §4: weight 100 on A (one instance) and 100 on B (two instances): A 50%, B's instances
  // 25% each. Smooth WRR over per-instance weights {100, 50, 50} is exact over whole periods.
  const auto candidates = make_target_candidates({{100, 1}, {100, 2}});
  PolicySettings settings;
  settings.target_weights = true;
  auto lb = make_policy_balancer(candidates, &settings, BalancerDeps{});
  EXPECT_EQ(shares(*lb, 3, 400), (std::vector<int>{200, 100, 100}));
  // Uneven targets: 3:1 over one instance each.
  const auto uneven = make_target_candidates({{30, 1}, {10, 1}});
  auto lb2 = make_policy_balancer(uneven, &settings, BalancerDeps{});
  EXPECT_EQ(shares(*lb2, 2, 400), (std::vector<int>{300, 100}));
}

TEST(PolicyFactoryTest, EnabledPluginsOverrideTargetWeights) {
  // With a plugin enabled the weights no longer split traffic: least_inflight sends every pick to
  // the idle candidate.
  const auto candidates = make_target_candidates({{100, 1}, {1, 1}});
  PolicySettings settings;
  settings.target_weights = true;
  settings.least_inflight_weight = 1;
  auto lb = make_policy_balancer(candidates, &settings, BalancerDeps{});
  LoadsFixture loads({5, 0});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(lb->pick({}, loads.view()), 1u);
}

TEST(PolicyFactoryTest, SessionAffinityWithLeastInflightKeepsAnIdleOwner) {
  const auto candidates = make_candidates(4);
  PolicySettings settings;
  settings.least_inflight_weight = 1;
  settings.session_affinity_weight = 1;
  auto lb = make_policy_balancer(candidates, &settings, BalancerDeps{});
  RouteContext ctx;
  ctx.policy_session_key = "conversation-1";
  const auto counts = shares(*lb, 4, 40, ctx);
  EXPECT_EQ(*std::max_element(counts.begin(), counts.end()), 40);
  // Without a key, least_inflight alone sees four idle candidates: ties, spread at random.
  const auto spread = shares(*lb, 4, 400);
  for (int count : spread) EXPECT_GT(count, 50);
}

}  // namespace
}  // namespace rolter
