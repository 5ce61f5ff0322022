// The spawned gateways' rolter.toml with tenants and flow control: it loads and validates as
// rolter serve would read it, with each tenant's key and band and each provider's bound.
#include <gtest/gtest.h>

#include <toml++/toml.h>

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

// --pd 1:2: two providers by role over the engines in order, each instance with its KV-event
// stream, and one disaggregated route per strategy whose prefill stage names the strategy and
// whose decode stage keeps the default. Read back as TOML, table by table, then through the
// gateway's loader.
TEST(SpawnConfigTest, DisaggregatedRoutes) {
  SpawnOptions o = options();
  o.engines = 3;
  o.pd = PdSplit{.prefill = 1, .decode = 2};
  o.min_uncached_tokens = 256;
  const std::vector<std::string> engines = {"http://127.0.0.1:8001", "http://127.0.0.1:8002",
                                            "http://127.0.0.1:8003"};
  const std::vector<int> kv = {5001, 5002, 5003};
  const std::vector<int> replay = {6001, 0, 6003};
  const std::string text = Spawner::gateway_config(o, engines, kv, replay, "");
  toml::table t;
  try {
    t = toml::parse(text);
  } catch (const toml::parse_error& e) {
    FAIL() << e.what() << "\n" << text;
  }
  const toml::array* providers = t["providers"].as_array();
  ASSERT_TRUE(providers) << text;
  ASSERT_EQ(providers->size(), 2u) << text;
  struct Want {
    const char* name;
    const char* role;
    std::vector<size_t> engines;
  };
  const Want want[] = {{"pd-prefill", "prefill", {0}}, {"pd-decode", "decode", {1, 2}}};
  for (size_t p = 0; p < 2; ++p) {
    const toml::table& provider = *providers->get(p)->as_table();
    EXPECT_EQ(provider["name"].value_or(""), std::string(want[p].name));
    EXPECT_EQ(provider["role"].value_or(""), std::string(want[p].role));
    EXPECT_EQ(provider["tokenize"].value_or(""), std::string("engine"));
    const toml::array* instances = provider["instances"].as_array();
    ASSERT_TRUE(instances) << text;
    ASSERT_EQ(instances->size(), want[p].engines.size()) << text;
    for (size_t i = 0; i < instances->size(); ++i) {
      const size_t e = want[p].engines[i];
      const toml::table& inst = *instances->get(i)->as_table();
      EXPECT_EQ(inst["base_url"].value_or(""), engines[e]);
      EXPECT_EQ(inst["kv_events"]["endpoint"].value_or(""),
                "tcp://127.0.0.1:" + std::to_string(kv[e]));
      EXPECT_EQ(inst["kv_events"]["replay_endpoint"].value_or(""),
                replay[e] ? "tcp://127.0.0.1:" + std::to_string(replay[e]) : "");
      EXPECT_EQ(inst["kv_events"]["block_size"].value_or(0), 16);
    }
  }
  const toml::array* routes = t["routes"].as_array();
  ASSERT_TRUE(routes);
  ASSERT_EQ(routes->size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const toml::table& route = *routes->get(r)->as_table();
    EXPECT_EQ(route["name"].value_or(""), "bench-pd-" + o.strategies[r]);
    EXPECT_EQ(route["mode"].value_or(""), std::string("disaggregated"));
    EXPECT_EQ(route["min_uncached_tokens"].value_or(0), 256);
    EXPECT_FALSE(route.contains("strategy")) << "the strategy belongs to the prefill stage";
    EXPECT_EQ(route["prefill"]["strategy"].value_or(""), o.strategies[r]);
    EXPECT_EQ(route["prefill"]["targets"][0]["provider"].value_or(""), std::string("pd-prefill"));
    EXPECT_EQ(route["prefill"]["targets"][0]["model"].value_or(""), std::string("sim-model"));
    EXPECT_FALSE(route["decode"]["strategy"]) << "decode keeps the default, least load";
    EXPECT_EQ(route["decode"]["targets"][0]["provider"].value_or(""), std::string("pd-decode"));
    EXPECT_EQ(route["decode"]["targets"].as_array()->size(), 1u);
  }
  // And the gateway's own loader takes it as such.
  auto loaded = load_config_text(text, "bench.toml");
  ASSERT_TRUE(loaded) << text;
  const Config& c = loaded->config;
  ASSERT_EQ(c.providers.size(), 2u);
  EXPECT_EQ(c.providers[0].role, "prefill");
  EXPECT_EQ(c.providers[1].role, "decode");
  EXPECT_EQ(c.providers[1].instances.size(), 2u);
  ASSERT_EQ(c.routes.size(), 2u);
  for (const auto& route : c.routes) {
    EXPECT_EQ(route.mode, "disaggregated") << route.name;
    EXPECT_EQ(route.min_uncached_tokens, 256u) << route.name;
    ASSERT_TRUE(route.prefill) << route.name;
    EXPECT_EQ(route.prefill->targets.size(), 1u) << route.name;
    EXPECT_TRUE(route.decode_table) << route.name;
  }
}

// Without --pd nothing of the disaggregated config appears.
TEST(SpawnConfigTest, AggregatedHasNoRoles) {
  const std::string text = Spawner::gateway_config(options(), kEngines, kNoPorts, kNoPorts, "");
  EXPECT_EQ(text.find("role"), std::string::npos);
  EXPECT_EQ(text.find("disaggregated"), std::string::npos);
}

}  // namespace
}  // namespace rolter::bench
