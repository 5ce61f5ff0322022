// The spawned gateways' rolter.toml with tenants and flow control: it loads and validates as
// rolter serve would read it, with each tenant's key and band and each provider's bound.
#include <gtest/gtest.h>

#include "bench/spawn.h"
#include "config/loader.h"

namespace rolter::bench {
namespace {

SpawnOptions options() {
  return {.engines = 2,
          .strategies = {"round_robin", "cache_aware"},
          .model_prefix = "bench-",
          .block_size = 16};
}

const std::vector<std::string> kEngines = {"http://127.0.0.1:8001", "http://127.0.0.1:8002"};
const std::vector<int> kNoPorts = {0, 0};

TEST(SpawnConfigTest, TenantsAndFlowControlOn) {
  SpawnOptions o = options();
  o.tenants = make_tenants(3, 1);
  o.flow_control = FlowControlSettings{
      .max_in_flight_per_instance = 8, .queue_max_requests = 256, .queue_max_wait_ms = 5000};
  const std::string text = Spawner::gateway_config(o, kEngines, kNoPorts, kNoPorts, "");
  auto loaded = load_config_text(text, "bench.toml");
  ASSERT_TRUE(loaded) << text;
  const Config& c = loaded->config;
  ASSERT_EQ(c.keys.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(c.keys[i].name, o.tenants[i].name);
    EXPECT_EQ(c.keys[i].key_env, o.tenants[i].key_env);
    EXPECT_EQ(c.keys[i].priority, o.tenants[i].priority);
  }
  EXPECT_EQ(c.keys[0].priority, kBatchBand);
  EXPECT_EQ(c.keys[2].priority, kInteractiveBand);
  ASSERT_EQ(c.providers.size(), 2u);
  for (const auto& p : c.providers) EXPECT_EQ(p.max_in_flight_per_instance, 8u) << p.name;
  EXPECT_EQ(c.queue.max_requests, 256u);
  EXPECT_EQ(c.queue.max_wait_ms, 5000u);
  EXPECT_EQ(c.routes.size(), 2u);
}

TEST(SpawnConfigTest, FlowControlOffHasNoBounds) {
  SpawnOptions o = options();
  o.tenants = make_tenants(2, 1);
  const std::string text = Spawner::gateway_config(o, kEngines, kNoPorts, kNoPorts, "");
  auto loaded = load_config_text(text, "bench.toml");
  ASSERT_TRUE(loaded) << text;
  const Config& c = loaded->config;
  EXPECT_EQ(c.keys.size(), 2u);
  for (const auto& p : c.providers) EXPECT_FALSE(p.max_in_flight_per_instance) << p.name;
  EXPECT_EQ(text.find("[queue]"), std::string::npos);
}

TEST(SpawnConfigTest, NoTenantsNoKeys) {
  const std::string text = Spawner::gateway_config(options(), kEngines, kNoPorts, kNoPorts, "");
  auto loaded = load_config_text(text, "bench.toml");
  ASSERT_TRUE(loaded) << text;
  EXPECT_TRUE(loaded->config.keys.empty());
}

}  // namespace
}  // namespace rolter::bench
