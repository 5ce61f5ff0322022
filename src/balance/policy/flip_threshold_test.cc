#include "balance/policy/flip_threshold.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "balance/policy/policy_factory.h"
#include "balance/policy/policy_settings.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

// By hand, from SPEC §7. n targets, weights a (least_inflight) and b (session_affinity), the
// owner at in-flight k, the others idle; x = 1/(1+k), S = sum of 2^-r for r < n = 2 - 2^(1-n).
//   least_inflight: owner a x / (x + n - 1), each other a / (x + n - 1)
//   session_affinity: owner b / S, the rank-1 target (the best other) b / (2S)
//   owner - best other = b/(2S) - a (1 - x) / (x + n - 1) = b/(2S) - a k / (n + (n-1) k)
// so with r = a/b the owner loses when k (2 S r - (n - 1)) > n, i.e. k > n / (2 S r - n + 1)
// (never when 2 S r <= n - 1), and ties when k equals that bound.
//   n=2, 1:1   S=1.5     2Sr=3      k > 2/2 = 1        tie at 1, flip at 2
//   n=2, 1.5:1 S=1.5     2Sr=4.5    k > 2/3.5 = 0.57   flip at 1
//   n=3, 1:1   S=1.75    2Sr=3.5    k > 3/1.5 = 2      tie at 2, flip at 3
//   n=4, 1:1   S=1.875   2Sr=3.75   k > 4/0.75 = 5.33  flip at 6
//   n=4, 1.5:1 S=1.875   2Sr=5.625  k > 4/2.625 = 1.52 flip at 2
//   n=5, 1:1   S=1.9375  2Sr=3.875  < n-1 = 4         never
//   n=7, 1.5:1 S=1.984375 2Sr=5.95  < n-1 = 6         never
//   n=8, 2:1   S=1.9921875 2Sr=7.97 k > 8/0.96875 = 8.26 flip at 9
// Check of the first row at k=1: owner 1/3 + 2/3 = 1, other 2/3 + 1/3 = 1.
TEST(FlipThresholdTest, MatchesTheHandDerivedThresholds) {
  struct Case {
    size_t targets;
    PolicyRatio ratio;
    std::optional<int> flip;
    std::optional<int> tie_at;
  };
  const std::vector<Case> cases = {
      {2, {1, 1}, 2, 1},
      {2, {1.5, 1}, 1, std::nullopt},
      {3, {1, 1}, 3, 2},
      {4, {1, 1}, 6, std::nullopt},
      {4, {1.5, 1}, 2, std::nullopt},
      {5, {1, 1}, std::nullopt, std::nullopt},
      {7, {1.5, 1}, std::nullopt, std::nullopt},
      {8, {2, 1}, 9, std::nullopt},
      // Only the ratio matters, not the scale.
      {4, {3, 2}, 2, std::nullopt},
  };
  for (const Case& c : cases) {
    const FlipThreshold t = flip_threshold(c.targets, c.ratio);
    const std::string label = std::to_string(c.targets) + " targets, " +
                              std::to_string(c.ratio.least_inflight) + ":" +
                              std::to_string(c.ratio.session_affinity);
    EXPECT_EQ(t.targets, c.targets);
    EXPECT_EQ(t.flip, c.flip) << label;
    EXPECT_EQ(t.tie_at, c.tie_at) << label;
  }
}

TEST(FlipThresholdTest, ATieIsACoinFlipInTheRealBalancer) {
  // 2 targets at 1:1 tie at owner load 1: the balancer splits that session between both.
  const auto candidates = make_candidates(2);
  PolicySettings settings;
  settings.least_inflight_weight = 1;
  settings.session_affinity_weight = 1;
  SeededRandom random(11);
  auto lb = make_policy_balancer(candidates, &settings, BalancerDeps{.random = &random});
  RouteContext ctx;
  ctx.policy_session_key = "any-session";
  LoadsFixture loads(2);
  const size_t owner = *lb->pick(ctx, loads.view());
  loads.set(owner, 1);
  int kept = 0;
  for (int i = 0; i < 1000; ++i) kept += *lb->pick(ctx, loads.view()) == owner ? 1 : 0;
  EXPECT_GT(kept, 400);
  EXPECT_LT(kept, 600);
  loads.set(owner, 2);
  EXPECT_NE(*lb->pick(ctx, loads.view()), owner);
}

TEST(FlipThresholdTest, FewerThanTwoTargetsNeverFlip) {
  EXPECT_EQ(flip_threshold(1, {1, 1}).flip, std::nullopt);
}

}  // namespace
}  // namespace rolter
