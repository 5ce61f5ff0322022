#include "balance/adaptive/adaptive_policy.h"

#include <gtest/gtest.h>

#include <limits>

namespace rolter {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// SPEC §6.10's sanitising rules, one row each.
TEST(AdaptivePolicyTest, SanitiserTable) {
  struct Case {
    const char* what;
    AdaptivePolicy raw;
    AdaptivePolicy want;
  };
  const Case cases[] = {
      {"defaults unchanged", {}, {}},
      {"negative weights become 0",
       {.latency_weight = -1, .cost_weight = -0.5, .load_weight = -2},
       {.latency_weight = 0, .cost_weight = 0, .load_weight = 0}},
      {"NaN and infinite weights become 0",
       {.latency_weight = kNan, .cost_weight = kInf, .load_weight = -kInf},
       {.latency_weight = 0, .cost_weight = 0, .load_weight = 0}},
      {"exploration above 0.5 is clamped", {.exploration_ratio = 0.9}, {.exploration_ratio = 0.5}},
      {"negative exploration is 0", {.exploration_ratio = -0.1}, {.exploration_ratio = 0}},
      {"NaN exploration is 0", {.exploration_ratio = kNan}, {.exploration_ratio = 0}},
      {"in-range values are kept",
       {.enabled = true,
        .latency_weight = 2,
        .cost_weight = 0,
        .load_weight = 1.5,
        .exploration_ratio = 0.1,
        .min_samples = 10},
       {.enabled = true,
        .latency_weight = 2,
        .cost_weight = 0,
        .load_weight = 1.5,
        .exploration_ratio = 0.1,
        .min_samples = 10}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(sanitize_adaptive_policy(c.raw), c.want) << c.what;
  }
}

TEST(AdaptivePolicyTest, AllZeroBlendIsValidButNeverEngages) {
  const AdaptivePolicy p = sanitize_adaptive_policy(
      {.enabled = true, .latency_weight = 0, .cost_weight = 0, .load_weight = 0});
  EXPECT_TRUE(p.enabled);
  EXPECT_FALSE(p.has_weight());
  EXPECT_FALSE(p.can_engage());
  EXPECT_TRUE(sanitize_adaptive_policy({.enabled = true, .load_weight = 0.1}).can_engage());
  EXPECT_FALSE(sanitize_adaptive_policy({.enabled = false}).can_engage());
}

}  // namespace
}  // namespace rolter
