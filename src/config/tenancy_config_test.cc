// [[teams]], a key's limits and budget, [limits], [usage] and [metrics] (SPEC §15): what they read
// into, and the errors that name the offending key.
#include <gtest/gtest.h>

#include <string>

#include "config/testing/load_fixture.h"

namespace rolter {
namespace {

TEST(TenancyConfig, ReadsKeysTeamsAndBackends) {
  auto loaded = load(minimal_plus(R"(team = "research"
rpm = 60
burst = 60
tpm = 100000
max_in_flight = 4
budget = { usd = 50, period = "day" }
[[keys.route_limits]]
route = "m*"
tpm = 1000

[[teams]]
name = "research"
rpm = 600
budget = { usd = 500 }
[[teams.route_limits]]
route = "fleet/*"
max_in_flight = 16

[limits]
backend = "redis"
redis_url = "redis://127.0.0.1:6380/2"
timeout_ms = 50
on_backend_error = "closed"
default_output_tokens = 256

[usage]
flush_secs = 3

[metrics]
per_key = true
)"));
  ASSERT_TRUE(loaded) << dump(loaded.error());
  const Config& c = loaded->config;
  ASSERT_EQ(c.keys.size(), 1u);
  const KeyConfig& k = c.keys[0];
  EXPECT_EQ(k.team, "research");
  EXPECT_EQ(k.limits.rpm, 60u);
  EXPECT_EQ(k.limits.burst, 60u);
  EXPECT_EQ(k.limits.tpm, 100000u);
  EXPECT_EQ(k.limits.max_in_flight, 4u);
  ASSERT_TRUE(k.limits.budget);
  EXPECT_EQ(k.limits.budget->usd, 50);
  EXPECT_EQ(k.limits.budget->period, BudgetPeriod::kDay);
  ASSERT_EQ(k.route_limits.size(), 1u);
  EXPECT_EQ(k.route_limits[0].route, "m*");
  EXPECT_EQ(k.route_limits[0].limits.tpm, 1000u);
  ASSERT_EQ(c.teams.size(), 1u);
  EXPECT_EQ(c.teams[0].limits.rpm, 600u);
  ASSERT_TRUE(c.teams[0].limits.budget);
  EXPECT_EQ(c.teams[0].limits.budget->period, BudgetPeriod::kMonth);  // the default
  EXPECT_EQ(c.teams[0].route_limits[0].limits.max_in_flight, 16u);
  EXPECT_EQ(c.limits.backend, "redis");
  EXPECT_EQ(c.limits.timeout_ms, 50u);
  EXPECT_EQ(c.limits.on_backend_error, "closed");
  EXPECT_EQ(c.limits.default_output_tokens, 256u);
  EXPECT_EQ(c.usage.flush_secs, 3u);
  EXPECT_TRUE(c.metrics.per_key);
}

TEST(TenancyConfig, ReadsRedissWithACaFile) {
  // Any readable PEM file will do for the check; the system bundle is one.
  auto loaded = load(minimal_plus(R"([limits]
backend = "redis"
redis_url = "rediss://redis.internal:6380/1"
redis_ca_file = "/etc/ssl/certs/ca-certificates.crt"
)"));
  ASSERT_TRUE(loaded) << dump(loaded.error());
  EXPECT_EQ(loaded->config.limits.redis_url, "rediss://redis.internal:6380/1");
  EXPECT_EQ(loaded->config.limits.redis_ca_file, "/etc/ssl/certs/ca-certificates.crt");
  // Without a CA file, the system store alone is trusted.
  loaded = load(minimal_plus("[limits]\nbackend = \"redis\"\nredis_url = \"rediss://h\"\n"));
  ASSERT_TRUE(loaded) << dump(loaded.error());
}

TEST(TenancyConfig, CaFileMustBeReadableWhereTheGatewayRuns) {
  const std::string text = minimal_plus(
      "[limits]\nredis_url = \"rediss://h\"\nredis_ca_file = \"/nonexistent/ca.pem\"\n");
  // Secrets are not local (a control plane): the file is not looked at.
  EXPECT_TRUE(load(text));
  auto loaded = load_config_text(without_leading_newline(text), "test.toml",
                                 LoadOptions{.local_secrets = true});
  ASSERT_FALSE(loaded);
  bool found = false;
  for (const auto& e : loaded.error()) {
    found = found || e.to_string().find("limits.redis_ca_file") != std::string::npos;
  }
  EXPECT_TRUE(found) << dump(loaded.error());
}

TEST(TenancyConfig, DefaultsAreLocalAndOpen) {
  auto loaded = load(kMinimal);
  ASSERT_TRUE(loaded) << dump(loaded.error());
  const Config& c = loaded->config;
  EXPECT_EQ(c.limits.backend, "local");
  EXPECT_EQ(c.limits.timeout_ms, 20u);
  EXPECT_EQ(c.limits.on_backend_error, "open");
  EXPECT_EQ(c.limits.default_output_tokens, 1024u);
  EXPECT_EQ(c.usage.flush_secs, 10u);
  EXPECT_FALSE(c.metrics.per_key);
  EXPECT_TRUE(c.keys[0].limits.empty());
}

TEST(TenancyConfig, ErrorsNameTheKey) {
  const ErrorCase cases[] = {
      {minimal_plus("team = \"nobody\"  # <-\n"), "keys[0].team", "no [[teams]] named \"nobody\""},
      {minimal_plus("burst = 5  # <-\n"), "keys[0].burst", "burst goes with rpm"},
      {minimal_plus("rpm = -1  # <-\n"), "keys[0].rpm", ""},
      {minimal_plus("budget = { usd = 5, period = \"year\" }  # <-\n"), "keys[0].budget.period",
       "must be \"day\", \"week\" or \"month\""},
      {minimal_plus("budget = { period = \"day\" }  # <-\n"), "keys[0].budget.usd", "missing"},
      {minimal_plus("budget = { usd = -5 }  # <-\n"), "keys[0].budget.usd", ""},
      {minimal_plus("[[keys.route_limits]]  # <-\nrpm = 5\n"), "keys[0].route_limits[0].route",
       "missing"},
      {minimal_plus("[[teams]]\nname = \"t\"\n[[teams]]\nname = \"t\"  # <-\n"), "teams[1].name",
       "duplicate"},
      {minimal_plus("[limits]\nbackend = \"memcached\"  # <-\n"), "limits.backend",
       "must be \"local\" or \"redis\""},
      // An absent key is reported at its table.
      {minimal_plus("[limits]  # <-\nbackend = \"redis\"\n"), "limits.redis_url",
       "needs a redis_url"},
      {minimal_plus("[limits]\nredis_url = \"redis://h\"\nredis_ca_file = \"/ca.pem\"  # <-\n"),
       "limits.redis_ca_file", "rediss:// redis_url only"},
      {minimal_plus("[shared_state]\nredis_url = \"rediss://h:6380\"  # <-\n"),
       "shared_state.redis_url", "TLS is supported for [limits], not [shared_state]"},
      {minimal_plus("[limits]\nredis_url = \"http://h\"  # <-\n"), "limits.redis_url",
       "expected redis://"},
      {minimal_plus("[limits]\non_backend_error = \"maybe\"  # <-\n"), "limits.on_backend_error",
       "must be \"open\" or \"closed\""},
      {minimal_plus("[limits]\ntimeout_ms = 0  # <-\n"), "limits.timeout_ms", ""},
      {minimal_plus("[usage]\nflush_secs = 0  # <-\n"), "usage.flush_secs", ""},
      {minimal_plus("[metrics]\nper_key = \"yes\"  # <-\n"), "metrics.per_key", "expected boolean"},
  };
  for (const auto& c : cases) expect_one_error(c);
}

}  // namespace
}  // namespace rolter
