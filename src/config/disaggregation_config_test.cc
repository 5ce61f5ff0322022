// Prefill/decode disaggregation's keys (SPEC §18): a route's mode, its [routes.prefill] and
// [routes.decode] tables, min_uncached_tokens and a provider's role; what they read into, their
// defaults, and the combinations `rolter check` refuses, named by key.
#include <gtest/gtest.h>

#include <string>

#include "balance/strategy_names.h"
#include "config/testing/load_fixture.h"

namespace rolter {
namespace {

// Two prefill and one decode provider, and `route` as the only route.
std::string fleet(std::string_view route, std::string_view prefill_role = "prefill",
                  std::string_view decode_role = "decode") {
  return R"(
[[providers]]
name = "p"
role = ")" + std::string(prefill_role) +
         R"("
base_url = "http://127.0.0.1:8001"

[[providers]]
name = "d"
role = ")" + std::string(decode_role) +
         R"("
base_url = "http://127.0.0.1:8002"

[[providers]]
name = "any"
base_url = "http://127.0.0.1:8003"
)" + std::string(route);
}

constexpr std::string_view kSplitRoute = R"(
[[routes]]
name = "chat"
mode = "disaggregated"
[routes.prefill]
targets = [{ provider = "p", model = "m" }]
[routes.decode]
targets = [{ provider = "d", model = "m" }, { provider = "any", model = "m" }]
)";

TEST(DisaggregationConfig, ReadsTheStepsAndTheirDefaults) {
  auto loaded = load(fleet(kSplitRoute));
  ASSERT_TRUE(loaded) << dump(loaded.error());
  const Config& c = loaded->config;
  EXPECT_EQ(c.providers[0].role, "prefill");
  EXPECT_EQ(c.providers[2].role, "both");
  const RouteConfig& r = c.routes[0];
  EXPECT_EQ(r.mode, "disaggregated");
  EXPECT_EQ(r.min_uncached_tokens, 512u);
  ASSERT_TRUE(r.prefill.has_value());
  EXPECT_EQ(r.prefill->strategy, "");  // resolved when the snapshot is built
  ASSERT_EQ(r.prefill->targets.size(), 1u);
  EXPECT_EQ(r.prefill->targets[0].provider, "p");
  // The decode step's targets and strategy are the route's own.
  EXPECT_EQ(r.strategy, strategy::kLeastKvUsage);
  ASSERT_EQ(r.targets.size(), 2u);
  EXPECT_EQ(r.targets[1].provider, "any");
}

TEST(DisaggregationConfig, ReadsEveryKey) {
  auto loaded = load(fleet(R"(
[[routes]]
name = "chat"
mode = "disaggregated"
min_uncached_tokens = 2048
[routes.prefill]
strategy = "cache_aware"
targets = [{ provider = "p", model = "m" }]
[routes.decode]
strategy = "power_of_two"
targets = [{ provider = "d", model = "m" }]
)"));
  ASSERT_TRUE(loaded) << dump(loaded.error());
  const RouteConfig& r = loaded->config.routes[0];
  EXPECT_EQ(r.min_uncached_tokens, 2048u);
  EXPECT_EQ(r.prefill->strategy, "cache_aware");
  EXPECT_EQ(r.strategy, "power_of_two");
  // An aggregated route is as before.
  auto plain = load(minimal_plus(""));
  ASSERT_TRUE(plain) << dump(plain.error());
  EXPECT_EQ(plain->config.routes[0].mode, "aggregated");
  EXPECT_FALSE(plain->config.routes[0].prefill.has_value());
}

TEST(DisaggregationConfig, ErrorsNameTheKey) {
  const ErrorCase cases[] = {
      {fleet(R"(
[[routes]]
name = "chat"
mode = "split"  # <-
targets = [{ provider = "any", model = "m" }]
)"),
       "routes[0].mode", "unknown mode \"split\""},
      {fleet(R"(
[[routes]]  # <-
name = "chat"
mode = "disaggregated"
[routes.decode]
targets = [{ provider = "d", model = "m" }]
)"),
       "routes[0].prefill", "needs [routes.prefill]"},
      {fleet(R"(
[[routes]]
name = "chat"
strategy = "cache_aware"  # <-
mode = "disaggregated"
[routes.prefill]
targets = [{ provider = "p", model = "m" }]
[routes.decode]
targets = [{ provider = "d", model = "m" }]
)"),
       "routes[0].strategy", "names its decode targets and strategy there"},
      {fleet(R"(
[[routes]]
name = "chat"
mode = "disaggregated"
[routes.prefill]
targets = [{ provider = "d", model = "m" }]  # <-
[routes.decode]
targets = [{ provider = "d", model = "m" }]
)"),
       "routes[0].prefill.targets[0].provider", "has role decode"},
      {fleet(R"(
[[routes]]
name = "chat"
mode = "disaggregated"
[routes.prefill]
targets = [{ provider = "p", model = "m" }]
[routes.decode]
targets = [{ provider = "p", model = "m" }]  # <-
)"),
       "routes[0].decode.targets[0].provider", "has role prefill"},
      {fleet(R"(
[[routes]]
name = "chat"
mode = "disaggregated"
[routes.prefill]
strategy = "policy"  # <-
targets = [{ provider = "p", model = "m" }]
[routes.decode]
targets = [{ provider = "d", model = "m" }]
)"),
       "routes[0].prefill.strategy", "other than policy or adaptive"},
      {fleet(R"(
[[routes]]
name = "chat"
mode = "disaggregated"
[routes.prefill]
strategy = "fastest_please"  # <-
targets = [{ provider = "p", model = "m" }]
[routes.decode]
targets = [{ provider = "d", model = "m" }]
)"),
       "routes[0].prefill.strategy", "unknown strategy"},
      {fleet(R"(
[[routes]]
name = "chat"
targets = [{ provider = "any", model = "m" }]
[routes.prefill]  # <-
targets = [{ provider = "p", model = "m" }]
)"),
       "routes[0].prefill", "only to mode = \"disaggregated\""},
      {fleet(R"(
[[routes]]
name = "chat"
mode = "disaggregated"
min_uncached_tokens = 0  # <-
[routes.prefill]
targets = [{ provider = "p", model = "m" }]
[routes.decode]
targets = [{ provider = "d", model = "m" }]
)"),
       "routes[0].min_uncached_tokens", ""},
      {R"(
[[providers]]
name = "p"
role = "prefil"  # <-
base_url = "http://127.0.0.1:8001"

[[routes]]
name = "chat"
targets = [{ provider = "p", model = "m" }]
)",
       "providers[0].role", "unknown role \"prefil\""},
      {R"(
[[providers]]
name = "claude"
kind = "anthropic"
role = "decode"  # <-
base_url = "https://api.anthropic.com"

[[routes]]
name = "chat"
targets = [{ provider = "claude", model = "m" }]
)",
       "providers[0].role", "only an openai provider"},
  };
  for (const auto& c : cases) expect_one_error(c);
}

}  // namespace
}  // namespace rolter
