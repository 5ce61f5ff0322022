#include "config/loader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "config/testing/load_fixture.h"

// The loader's own work: TOML syntax, the schema walk (keys, types, ranges, required keys) and
// defaults. The semantic checks of validator.cc are in validator_test.cc.

namespace rolter {
namespace {

constexpr std::string_view kFull = R"(
[server]
listen = "0.0.0.0:8080"
workers = 4
max_body_bytes = 1048576
upstream_timeout_ms = 1000
connect_timeout_ms = 200
first_byte_timeout_ms = 900
drain_timeout_ms = 0

[store]
url = "postgres://rolter@db/rolter"

[[providers]]
name = "qwen-a"
kind = "openai"
base_url = "http://127.0.0.1:8001/v1"
api_key_env = "QWEN_A_KEY"
max_loras = 4
health_path = "/health"
load_source = "engine_metrics"
metrics_interval_ms = 100
tokenize = "engine"
tokenize_timeout_ms = 75
[providers.cost]
input = 0.2
output = 1
[providers.kv_events]
endpoint = "tcp://127.0.0.1:5557"
replay_endpoint = "tcp://127.0.0.1:5558"
topic = "kv"
block_size = 32
max_blocks = 5000
stale_secs = 60
[providers.lmcache]
endpoint = "http://127.0.0.1:9000/occupancy"
refresh_secs = 5
stale_secs = 20

[[providers]]
name = "qwen-b"
kind = "anthropic"
[[providers.instances]]
base_url = "http://10.0.0.1:8000"
kv_events = { endpoint = "tcp://10.0.0.1:5557" }
[[providers.instances]]
base_url = "https://[::1]:8443"
lmcache = { endpoint = "http://10.0.0.2:9000" }

[[providers]]
name = "jev"
kind = "decision_service"
base_url = "http://127.0.0.1:7000"

[[routes]]
name = "qwen3"
strategy = "weighted"
[[routes.targets]]
provider = "qwen-a"
model = "Qwen/Qwen3-8B"
weight = 3
[[routes.targets]]
provider = "qwen-b"
model = "Qwen/Qwen3-8B"

[[routes]]
name = "smart"
strategy = "policy"
[[routes.targets]]
provider = "qwen-a"
model = "qwen3-0.6b"
[[routes.targets]]
provider = "qwen-b"
model = "qwen3-32b"
[routes.policy.session_affinity]
weight = 2
keys = [{header = "x-session"}, {body = "user"}]
body_path_suffixes = ["/responses"]
[routes.policy.least_inflight]
weight = 0.5
[routes.policy.decision_service]
weight = 10
provider = "jev"
model = "jev-latest"
instructions = "Pick the smallest model."
criteria = { "qwen3-0.6b" = "fast", "qwen3-32b" = "" }

[[provider_groups]]
slug = "fleet"
strategy = "weighted"
[[provider_groups.members]]
provider = "qwen-a"
weight = 2
upstream_model = "Qwen/Qwen3-8B"
[[provider_groups.members]]
provider = "qwen-b"

[[keys]]
name = "team-a"
key_env = "TEAM_A_KEY"
routes = ["qwen3", "fleet/*"]
providers = []
[[keys]]
name = "team-b"
key_sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
providers = ["qwen-a"]

[adaptive_routing]
enabled = true
latency_weight = 2
cost_weight = 0.0
load_weight = 1.5
exploration_ratio = 0.1
min_samples = 10

[health]
interval_ms = 1000
timeout_ms = 500
unhealthy_threshold = 2
healthy_threshold = 1

[breaker]
failure_threshold = 3
open_ms = 1000
half_open_probes = 2

[retry]
max_attempts = 1
on_status = [503]
park_on_429_max_ms = 0
)";

TEST(LoadConfig, FullConfigParsesEveryField) {
  auto loaded = load(kFull);
  ASSERT_TRUE(loaded) << dump(loaded.error());
  EXPECT_TRUE(loaded->warnings.empty()) << dump(loaded->warnings);
  const Config& c = loaded->config;
  EXPECT_EQ(c.path, "test.toml");

  EXPECT_EQ(c.server.listen, "0.0.0.0:8080");
  EXPECT_EQ(c.server.workers, 4u);
  EXPECT_EQ(c.server.max_body_bytes, 1048576u);
  EXPECT_EQ(c.server.upstream_timeout_ms, 1000u);
  EXPECT_EQ(c.server.connect_timeout_ms, 200u);
  EXPECT_EQ(c.server.first_byte_timeout_ms, 900u);
  EXPECT_EQ(c.server.drain_timeout_ms, 0u);
  EXPECT_EQ(c.server.header_timeout_ms, 10000u) << "default";
  EXPECT_EQ(c.server.idle_timeout_ms, 75000u) << "default";
  EXPECT_EQ(c.store.url, "postgres://rolter@db/rolter");

  ASSERT_EQ(c.providers.size(), 3u);
  const ProviderConfig& a = c.providers[0];
  EXPECT_EQ(a.name, "qwen-a");
  EXPECT_EQ(a.kind, "openai");
  EXPECT_EQ(a.api_key_env, "QWEN_A_KEY");
  EXPECT_EQ(a.max_loras, 4u);
  EXPECT_EQ(a.health_path, "/health");
  EXPECT_EQ(a.load_source, "engine_metrics");
  EXPECT_EQ(a.metrics_interval_ms, 100u);
  EXPECT_EQ(a.tokenize, "engine");
  EXPECT_EQ(a.tokenize_timeout_ms, 75u);
  ASSERT_TRUE(a.cost);
  EXPECT_DOUBLE_EQ(a.cost->input, 0.2);
  EXPECT_DOUBLE_EQ(a.cost->output, 1.0);
  ASSERT_EQ(a.instances.size(), 1u);
  EXPECT_EQ(a.instances[0].base_url, "http://127.0.0.1:8001/v1");
  ASSERT_TRUE(a.instances[0].kv_events);
  EXPECT_EQ(a.instances[0].kv_events->endpoint, "tcp://127.0.0.1:5557");
  EXPECT_EQ(a.instances[0].kv_events->replay_endpoint, "tcp://127.0.0.1:5558");
  EXPECT_EQ(a.instances[0].kv_events->topic, "kv");
  EXPECT_EQ(a.instances[0].kv_events->block_size, 32u);
  EXPECT_EQ(a.instances[0].kv_events->max_blocks, 5000u);
  EXPECT_EQ(a.instances[0].kv_events->stale_secs, 60u);
  ASSERT_TRUE(a.instances[0].lmcache);
  EXPECT_EQ(a.instances[0].lmcache->endpoint, "http://127.0.0.1:9000/occupancy");
  EXPECT_EQ(a.instances[0].lmcache->refresh_secs, 5u);
  EXPECT_EQ(a.instances[0].lmcache->stale_secs, 20u);

  const ProviderConfig& b = c.providers[1];
  EXPECT_EQ(b.kind, "anthropic");
  EXPECT_EQ(b.max_loras, 8u);  // default
  EXPECT_EQ(b.load_source, "local") << "default";
  EXPECT_EQ(b.metrics_interval_ms, 250u) << "default";
  EXPECT_EQ(b.tokenize, "none") << "default";
  EXPECT_EQ(b.tokenize_timeout_ms, 50u) << "default";
  EXPECT_FALSE(b.cost);
  ASSERT_EQ(b.instances.size(), 2u);
  EXPECT_EQ(b.instances[0].base_url, "http://10.0.0.1:8000");
  ASSERT_TRUE(b.instances[0].kv_events);
  EXPECT_EQ(b.instances[0].kv_events->block_size, 16u);  // default
  EXPECT_EQ(b.instances[0].kv_events->max_blocks, 1000000u);
  EXPECT_EQ(b.instances[0].kv_events->stale_secs, 30u);
  EXPECT_FALSE(b.instances[0].lmcache);
  EXPECT_EQ(b.instances[1].base_url, "https://[::1]:8443");
  ASSERT_TRUE(b.instances[1].lmcache);
  EXPECT_EQ(b.instances[1].lmcache->refresh_secs, 2u);  // default
  EXPECT_EQ(b.instances[1].lmcache->stale_secs, 10u);
  EXPECT_EQ(c.providers[2].kind, "decision_service");

  ASSERT_EQ(c.routes.size(), 2u);
  const RouteConfig& r0 = c.routes[0];
  EXPECT_EQ(r0.name, "qwen3");
  EXPECT_EQ(r0.strategy, "weighted");
  ASSERT_EQ(r0.targets.size(), 2u);
  EXPECT_EQ(r0.targets[0].provider, "qwen-a");
  EXPECT_EQ(r0.targets[0].model, "Qwen/Qwen3-8B");
  EXPECT_EQ(r0.targets[0].weight, 3.0);
  EXPECT_FALSE(r0.targets[1].weight);  // absent, not 1
  EXPECT_FALSE(r0.policy);

  const RouteConfig& r1 = c.routes[1];
  EXPECT_EQ(r1.strategy, "policy");
  ASSERT_TRUE(r1.policy);
  EXPECT_EQ(r1.policy->session_affinity_weight, 2.0);
  ASSERT_EQ(r1.policy->session_keys.size(), 2u);
  EXPECT_EQ(r1.policy->session_keys[0].header, "x-session");
  EXPECT_EQ(r1.policy->session_keys[0].body, "");
  EXPECT_EQ(r1.policy->session_keys[1].body, "user");
  EXPECT_EQ(r1.policy->body_path_suffixes, std::vector<std::string>{"/responses"});
  EXPECT_EQ(r1.policy->least_inflight_weight, 0.5);
  ASSERT_TRUE(r1.policy->decision_service);
  const auto& ds = *r1.policy->decision_service;
  EXPECT_EQ(ds.weight, 10.0);
  EXPECT_EQ(ds.provider, "jev");
  EXPECT_EQ(ds.model, "jev-latest");
  EXPECT_EQ(ds.instructions, "Pick the smallest model.");
  ASSERT_EQ(ds.criteria.size(), 2u);
  EXPECT_EQ(ds.criteria.at("qwen3-0.6b"), "fast");
  EXPECT_FALSE(ds.criteria.at("qwen3-32b"));  // empty = no description

  ASSERT_EQ(c.provider_groups.size(), 1u);
  const ProviderGroupConfig& g = c.provider_groups[0];
  EXPECT_EQ(g.slug, "fleet");
  EXPECT_EQ(g.strategy, "weighted");
  ASSERT_EQ(g.members.size(), 2u);
  EXPECT_EQ(g.members[0].provider, "qwen-a");
  EXPECT_EQ(g.members[0].weight, 2.0);
  EXPECT_EQ(g.members[0].upstream_model, "Qwen/Qwen3-8B");
  EXPECT_EQ(g.members[1].weight, 1.0);
  EXPECT_EQ(g.members[1].upstream_model, "");

  ASSERT_EQ(c.keys.size(), 2u);
  EXPECT_EQ(c.keys[0].name, "team-a");
  EXPECT_EQ(c.keys[0].key_env, "TEAM_A_KEY");
  EXPECT_EQ(c.keys[0].routes, (std::vector<std::string>{"qwen3", "fleet/*"}));
  EXPECT_TRUE(c.keys[0].providers.empty());
  EXPECT_EQ(c.keys[1].key_sha256,
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
  EXPECT_EQ(c.keys[1].providers, std::vector<std::string>{"qwen-a"});

  EXPECT_TRUE(c.adaptive_routing.enabled);
  EXPECT_EQ(c.adaptive_routing.latency_weight, 2.0);
  EXPECT_EQ(c.adaptive_routing.cost_weight, 0.0);
  EXPECT_EQ(c.adaptive_routing.load_weight, 1.5);
  EXPECT_EQ(c.adaptive_routing.exploration_ratio, 0.1);
  EXPECT_EQ(c.adaptive_routing.min_samples, 10u);
  EXPECT_EQ(c.health.interval_ms, 1000u);
  EXPECT_EQ(c.health.timeout_ms, 500u);
  EXPECT_EQ(c.health.unhealthy_threshold, 2u);
  EXPECT_EQ(c.health.healthy_threshold, 1u);
  EXPECT_EQ(c.breaker.failure_threshold, 3u);
  EXPECT_EQ(c.breaker.open_ms, 1000u);
  EXPECT_EQ(c.breaker.half_open_probes, 2u);
  EXPECT_EQ(c.retry.max_attempts, 1u);
  EXPECT_EQ(c.retry.on_status, std::vector<uint32_t>{503});
  EXPECT_EQ(c.retry.park_on_429_max_ms, 0u);
}

// Every default against SPEC §3's literal values, never against Config{}: a wrong default in
// config.h must fail here. Defaults the SPEC example does not list (header/idle timeouts,
// max_connections, metrics_listen, forwarded_headers, trusted_proxies) are the ones config.h
// documents.
TEST(LoadConfig, DefaultsApplied) {
  auto loaded = load(kMinimal);
  ASSERT_TRUE(loaded) << dump(loaded.error());
  EXPECT_TRUE(loaded->warnings.empty()) << dump(loaded->warnings);
  const Config& c = loaded->config;

  const ServerConfig& s = c.server;
  EXPECT_EQ(s.listen, "127.0.0.1:4000");
  EXPECT_EQ(s.workers, 0u);
  EXPECT_EQ(s.max_body_bytes, 33554432u);
  EXPECT_EQ(s.upstream_timeout_ms, 600000u);
  EXPECT_EQ(s.connect_timeout_ms, 2000u);
  EXPECT_EQ(s.first_byte_timeout_ms, 120000u);
  EXPECT_EQ(s.drain_timeout_ms, 30000u);
  EXPECT_EQ(s.header_timeout_ms, 10000u);
  EXPECT_EQ(s.idle_timeout_ms, 75000u);
  EXPECT_EQ(s.max_connections, 0u);
  EXPECT_EQ(s.metrics_listen, "");
  EXPECT_TRUE(s.forwarded_headers);
  EXPECT_TRUE(s.trusted_proxies.empty());
  EXPECT_EQ(c.store.url, "");

  ASSERT_EQ(c.providers.size(), 1u);
  const ProviderConfig& p = c.providers[0];
  EXPECT_EQ(p.kind, "openai");
  EXPECT_EQ(p.api_key_env, "");
  EXPECT_EQ(p.max_loras, 8u);
  EXPECT_EQ(p.health_path, "");
  EXPECT_EQ(p.load_source, "local");
  EXPECT_EQ(p.metrics_interval_ms, 250u);
  EXPECT_EQ(p.tokenize, "none");
  EXPECT_EQ(p.tokenize_timeout_ms, 50u);
  EXPECT_FALSE(p.cost);
  ASSERT_EQ(p.instances.size(), 1u);
  EXPECT_FALSE(p.instances[0].kv_events);
  EXPECT_FALSE(p.instances[0].lmcache);

  ASSERT_EQ(c.routes.size(), 1u);
  EXPECT_EQ(c.routes[0].strategy, "round_robin");
  ASSERT_EQ(c.routes[0].targets.size(), 1u);
  EXPECT_FALSE(c.routes[0].targets[0].weight);
  EXPECT_FALSE(c.routes[0].policy);
  EXPECT_TRUE(c.provider_groups.empty());
  ASSERT_EQ(c.keys.size(), 1u);
  EXPECT_EQ(c.keys[0].key_sha256, "");
  EXPECT_TRUE(c.keys[0].routes.empty());
  EXPECT_TRUE(c.keys[0].providers.empty());

  EXPECT_TRUE(c.shared_state.redis_url.empty());  // nothing shared
  EXPECT_EQ(c.shared_state.key, "rolter:prefixes");
  EXPECT_EQ(c.shared_state.max_entries, 10000u);
  EXPECT_EQ(c.shared_state.replay_entries, 2000u);

  EXPECT_FALSE(c.adaptive_routing.enabled);
  EXPECT_EQ(c.adaptive_routing.latency_weight, 1.0);
  EXPECT_EQ(c.adaptive_routing.cost_weight, 0.5);
  EXPECT_EQ(c.adaptive_routing.load_weight, 0.25);
  EXPECT_EQ(c.adaptive_routing.exploration_ratio, 0.05);
  EXPECT_EQ(c.adaptive_routing.min_samples, 50u);

  EXPECT_EQ(c.health.interval_ms, 5000u);
  EXPECT_EQ(c.health.timeout_ms, 1000u);
  EXPECT_EQ(c.health.unhealthy_threshold, 3u);
  EXPECT_EQ(c.health.healthy_threshold, 2u);

  EXPECT_EQ(c.breaker.failure_threshold, 5u);
  EXPECT_EQ(c.breaker.open_ms, 30000u);
  EXPECT_EQ(c.breaker.half_open_probes, 1u);

  EXPECT_EQ(c.retry.max_attempts, 3u);
  EXPECT_EQ(c.retry.on_status, (std::vector<uint32_t>{429, 500, 502, 503, 504}));
  EXPECT_EQ(c.retry.park_on_429_max_ms, 60000u);
}

// The defaults inside optional tables, which only exist when the table is written.
TEST(LoadConfig, TableDefaultsApplied) {
  auto loaded = load(minimal_plus(R"(
[[providers]]
name = "b"
base_url = "http://127.0.0.1:8002"
kv_events = { endpoint = "tcp://127.0.0.1:5557" }
lmcache = { endpoint = "http://127.0.0.1:9000/occupancy" }
[providers.cost]

[[provider_groups]]
slug = "g"
[[provider_groups.members]]
provider = "b"
)"));
  ASSERT_TRUE(loaded) << dump(loaded.error());
  EXPECT_TRUE(loaded->warnings.empty()) << dump(loaded->warnings);
  const ProviderConfig& b = loaded->config.providers.at(1);
  ASSERT_TRUE(b.cost);
  EXPECT_EQ(b.cost->input, 0.0);
  EXPECT_EQ(b.cost->output, 0.0);
  ASSERT_EQ(b.instances.size(), 1u);
  ASSERT_TRUE(b.instances[0].kv_events);
  const KvEventsConfig& kv = *b.instances[0].kv_events;
  EXPECT_EQ(kv.replay_endpoint, "");
  EXPECT_EQ(kv.topic, "");
  EXPECT_EQ(kv.block_size, 16u);
  EXPECT_EQ(kv.max_blocks, 1000000u);
  EXPECT_EQ(kv.stale_secs, 30u);
  ASSERT_TRUE(b.instances[0].lmcache);
  EXPECT_EQ(b.instances[0].lmcache->refresh_secs, 2u);
  EXPECT_EQ(b.instances[0].lmcache->stale_secs, 10u);

  ASSERT_EQ(loaded->config.provider_groups.size(), 1u);
  const ProviderGroupConfig& g = loaded->config.provider_groups[0];
  EXPECT_EQ(g.strategy, "round_robin");
  ASSERT_EQ(g.members.size(), 1u);
  EXPECT_EQ(g.members[0].weight, 1.0);
  EXPECT_EQ(g.members[0].upstream_model, "");
}

TEST(LoadConfig, PolicyDefaults) {
  auto loaded = load(minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.session_affinity]
[routes.policy.least_inflight]
)"));
  ASSERT_TRUE(loaded) << dump(loaded.error());
  const PolicyConfig& p = *loaded->config.routes[1].policy;
  EXPECT_EQ(p.session_affinity_weight, 1.0);
  ASSERT_EQ(p.session_keys.size(), 3u);
  EXPECT_EQ(p.session_keys[0].header, "session-id");
  EXPECT_EQ(p.session_keys[1].header, "x-client-request-id");
  EXPECT_EQ(p.session_keys[2].body, "prompt_cache_key");
  EXPECT_EQ(p.body_path_suffixes, (std::vector<std::string>{"/responses", "/messages"}));
  EXPECT_EQ(p.least_inflight_weight, 1.0);
  EXPECT_FALSE(p.decision_service);
}

// SPEC §3's example with cache_aware swapped for a strategy every build knows.
constexpr std::string_view kSpecExample = R"(
[server]
listen = "127.0.0.1:4000"
workers = 0                    # 0 = one per core
max_body_bytes = 33554432
upstream_timeout_ms = 600000   # whole request
connect_timeout_ms = 2000
first_byte_timeout_ms = 120000
drain_timeout_ms = 30000

[store]                        # control plane store; default: sqlite beside the config
url = "sqlite://rolter.db"     # or "postgres://user@host/db"

[[providers]]
name = "qwen-a"                # unique; [a-z0-9-]
kind = "openai"                # openai | anthropic | decision_service
base_url = "http://127.0.0.1:8001"
api_key_env = "QWEN_A_KEY"     # optional
max_loras = 8                  # adapters the engine keeps resident (vLLM --max-loras)
health_path = "/health"        # optional active health check
[providers.cost]               # catalog price per million tokens (used by adaptive, cheapest)
input = 0.20
output = 0.60
[providers.kv_events]          # vLLM KV-event stream of this instance (section 6.8)
endpoint = "tcp://127.0.0.1:5557"
replay_endpoint = "tcp://127.0.0.1:5558"   # optional ROUTER replay socket
topic = ""                     # vLLM default topic is empty
block_size = 16                # tokens per KV block on the engine
max_blocks = 1000000
stale_secs = 30
[providers.lmcache]            # section 6.9
endpoint = "http://127.0.0.1:9000/occupancy"
refresh_secs = 2
stale_secs = 10

[[routes]]
name = "qwen3"                 # the public model name clients send
strategy = "round_robin"       # section 6, or "policy" (section 7)
[[routes.targets]]
provider = "qwen-a"
model = "Qwen/Qwen3-8B"        # upstream model name written into the forwarded body
weight = 1

[[provider_groups]]            # section 4
slug = "fleet"
strategy = "round_robin"
[[provider_groups.members]]
provider = "qwen-a"
weight = 2
upstream_model = "Qwen/Qwen3-8B"   # optional; absent = passthrough of the requested model

[[keys]]
name = "team-a"
key_env = "TEAM_A_KEY"         # or key_sha256 = "<hex>"
routes = ["qwen3", "fleet/*"]  # allowed addresses; empty = all
providers = []                 # allowed providers; empty = all

[adaptive_routing]             # section 6.10
enabled = false
latency_weight = 1.0
cost_weight = 0.5
load_weight = 0.25
exploration_ratio = 0.05
min_samples = 50

[health]
interval_ms = 5000
timeout_ms = 1000
unhealthy_threshold = 3
healthy_threshold = 2

[breaker]
failure_threshold = 5          # consecutive failures that open it
open_ms = 30000
half_open_probes = 1

[retry]
max_attempts = 3
on_status = [429, 500, 502, 503, 504]
park_on_429_max_ms = 60000     # Retry-After honoured up to this
)";

TEST(LoadConfig, SpecExample) {
  auto loaded = load(kSpecExample);
  ASSERT_TRUE(loaded) << dump(loaded.error());
  // The example gives a round_robin group a member weight of 2: legal, but worth a warning.
  ASSERT_EQ(loaded->warnings.size(), 1u) << dump(loaded->warnings);
  EXPECT_EQ(loaded->warnings[0].line, line_of(kSpecExample, "weight = 2"));
  EXPECT_EQ(loaded->warnings[0].key, "provider_groups[0].members[0].weight");
  EXPECT_EQ(loaded->warnings[0].message, "strategy round_robin ignores weights");
  EXPECT_EQ(loaded->config.providers[0].instances[0].kv_events->topic, "");
  EXPECT_EQ(loaded->config.routes[0].targets[0].weight, 1.0);
}

TEST(LoadConfig, SpecPolicyExample) {
  auto loaded = load(R"(
[[providers]]
name = "small"
base_url = "http://127.0.0.1:8001"
[[providers]]
name = "big"
base_url = "http://127.0.0.1:8002"
[[providers]]
name = "jev"
kind = "decision_service"
base_url = "http://127.0.0.1:7000"

[[routes]]
name = "qwen3"
strategy = "policy"
[[routes.targets]]
provider = "small"
model = "qwen3-0.6b"
[[routes.targets]]
provider = "big"
model = "qwen3-32b"
[routes.policy.session_affinity]
weight = 1
keys = [{header = "session-id"}, {header = "x-client-request-id"}, {body = "prompt_cache_key"}]
[routes.policy.least_inflight]
weight = 1
[routes.policy.decision_service]
weight = 10
provider = "jev"
model = "jev-latest"
instructions = "Pick the smallest model that can handle the request well."
criteria = { "qwen3-0.6b" = "fast, simple requests", "qwen3-32b" = "reasoning, math, code" }
)");
  ASSERT_TRUE(loaded) << dump(loaded.error());
  ASSERT_EQ(loaded->warnings.size(), 1u);
  EXPECT_EQ(loaded->warnings[0].message, "no [[keys]]: the gateway is open to anyone");
  EXPECT_EQ(loaded->warnings[0].to_string(),
            "test.toml: keys: no [[keys]]: the gateway is open to anyone");
  const auto& ds = *loaded->config.routes[0].policy->decision_service;
  EXPECT_EQ(ds.criteria.at("qwen3-32b"), "reasoning, math, code");
}

// A key the schema does not know is an error where it is written, whatever its depth.
TEST(LoadConfig, UnknownKeys) {
  const ErrorCase cases[] = {
      // A bare key after [[keys]] would belong to keys[0], so the top-level key goes first.
      {"colour = \"blue\"  # <-\n" + std::string(kMinimal), "colour", "unknown key"},
      {minimal_plus("colour = 1  # <-\n"), "keys[0].colour", "unknown key"},
      {R"(
[[providers]]
name = "a"
base_url = "http://127.0.0.1:8001"
[providers.cost]
input = 1
ouptut = 2  # <-
)",
       "providers[0].cost.ouptut", "unknown key"},
      {minimal_plus(R"(
[[routes]]
name = "b"
[[routes.targets]]
provider = "a"
model = "x"
wieght = 2  # <-
)"),
       "routes[1].targets[0].wieght", "unknown key"},
      // An unknown sub-table is reported at its header.
      {minimal_plus(R"(
[server]
listen = "127.0.0.1:1"
[server.tls]  # <-
cert = "x"
)"),
       "server.tls", "unknown key"},
      // An unknown section is an unknown key of the root.
      {minimal_plus(R"(
[logging]  # <-
level = "debug"
)"),
       "logging", "unknown key"},
      {minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.sticky]  # <-
weight = 1
)"),
       "routes[1].policy.sticky", "unknown key"},
  };
  for (const auto& c : cases) expect_one_error(c);
}

TEST(LoadConfig, UnknownKeyHasColumn) {
  auto errors = errors_of("colour = \"blue\"\n" + std::string(kMinimal));
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].column, 1u);
  EXPECT_EQ(errors[0].to_string(), "test.toml:1:1: colour: unknown key");
}

TEST(LoadConfig, TypeErrors) {
  const ErrorCase cases[] = {
      {minimal_plus("[server]\nworkers = \"four\"  # <-\n"), "server.workers",
       "expected integer, got string"},
      {minimal_plus("[server]\nlisten = 4000  # <-\n"), "server.listen",
       "expected string, got integer"},
      {minimal_plus("[adaptive_routing]\nenabled = \"yes\"  # <-\n"), "adaptive_routing.enabled",
       "expected boolean, got string"},
      {minimal_plus("[adaptive_routing]\ncost_weight = \"0.5\"  # <-\n"),
       "adaptive_routing.cost_weight", "expected number, got string"},
      {minimal_plus("[health]\ninterval_ms = 1.5  # <-\n"), "health.interval_ms",
       "expected integer, got float"},
      {minimal_plus("[retry]\non_status = [500, \"502\"]  # <-\n"), "retry.on_status[1]",
       "expected integer, got string"},
      {"server = 1  # <-\n" + std::string(kMinimal), "server", "expected table, got integer"},
      {"[providers]  # <-\nname = \"a\"\n", "providers", "expected array of tables, got table"},
      {"provider_groups = [1]  # <-\n" + std::string(kMinimal), "provider_groups[0]",
       "expected table, got integer"},
      {minimal_plus(R"(
[[keys]]
name = "k2"
key_env = "K2"
routes = "qwen3"  # <-
)"),
       "keys[1].routes", "expected array, got string"},
  };
  for (const auto& c : cases) expect_one_error(c);
}

// A target weight in a weighted route, with `value` on the marked line.
std::string weighted_target(std::string_view value) {
  constexpr std::string_view kRoute = R"(
[[routes]]
name = "b"
strategy = "weighted"
[[routes.targets]]
provider = "a"
model = "x"
weight = )";
  return minimal_plus(std::string(kRoute) + std::string(value) + "  # <-\n");
}

TEST(LoadConfig, RangeErrors) {
  std::vector<ErrorCase> cases = {
      {minimal_plus("[server]\nworkers = -1  # <-\n"), "server.workers", "must be >= 0, got -1"},
      {minimal_plus("[server]\nworkers = 4294967296  # <-\n"), "server.workers",
       "must be <= 4294967295, got 4294967296"},
      {minimal_plus("[retry]\nmax_attempts = 0  # <-\n"), "retry.max_attempts",
       "must be >= 1, got 0"},
      {minimal_plus("[[providers]]\nname = \"b\"\nbase_url = \"http://b:1\"\n"
                    "metrics_interval_ms = 0  # <-\n"),
       "providers[1].metrics_interval_ms", "must be >= 1, got 0"},
      {minimal_plus("[[providers]]\nname = \"b\"\nbase_url = \"http://b:1\"\n"
                    "tokenize_timeout_ms = 0  # <-\n"),
       "providers[1].tokenize_timeout_ms", "must be >= 1, got 0"},
      {minimal_plus("[retry]\non_status = [429, 99, 500]  # <-\n"), "retry.on_status[1]",
       "between 100 and 599, got 99"},
      {minimal_plus("[adaptive_routing]\nexploration_ratio = 1.5  # <-\n"),
       "adaptive_routing.exploration_ratio", "between 0 and 1, got 1.5"},
      {minimal_plus("[shared_state]\nmax_entries = 0  # <-\n"), "shared_state.max_entries",
       "must be >= 1, got 0"},
      {minimal_plus("[shared_state]\nredis_url = \"redis://u:pw@cache\"  # <-\n"),
       "shared_state.redis_url", "credentials do not belong in the URL: use redis_password_env"},
      {minimal_plus("[shared_state]\nredis_url = \"http://cache\"  # <-\n"),
       "shared_state.redis_url", "expected redis://host[:port][/db], rediss://"},
      {weighted_target("-0.5"), "routes[1].targets[0].weight", "must be finite and >= 0, got -0.5"},
      {minimal_plus(R"(
[[provider_groups]]
slug = "g"
strategy = "weighted"
[[provider_groups.members]]
provider = "a"
weight = nan  # <-
)"),
       "provider_groups[0].members[0].weight", "got nan"},
      // A policy plugin weight must be > 0 (SPEC §3): 0 would be a plugin that never votes.
      {minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.least_inflight]
weight = 0  # <-
)"),
       "routes[1].policy.least_inflight.weight", "must be finite and > 0"},
  };
  for (const char* value : {"nan", "inf", "-inf", "+inf"}) {
    cases.push_back({weighted_target(value), "routes[1].targets[0].weight", "must be finite"});
  }
  for (const auto& c : cases) expect_one_error(c);
}

// Required keys that are absent, and keys that exclude each other. A missing key is reported at
// its table's header.
TEST(LoadConfig, MissingAndConflictingKeys) {
  const ErrorCase cases[] = {
      {minimal_plus(R"(
[[routes]]
name = "b"
[[routes.targets]]  # <-
model = "x"
)"),
       "routes[1].targets[0].provider", "missing required key"},
      {"[[providers]]  # <-\nbase_url = \"http://h\"\n", "providers[0].name",
       "missing required key"},
      {"[[providers]]  # <-\nname = \"a\"\n", "providers[0].base_url", "missing required key"},
      {R"(
[[providers]]
name = "a"
base_url = "http://127.0.0.1:8001"
[[providers.instances]]  # <-
base_url = "http://127.0.0.1:8002"
)",
       "providers[0].instances", "not both"},
      {R"(
[[providers]]
name = "a"
instances = []  # <-
)",
       "providers[0].instances", "needs at least one instance"},
      {R"(
[[providers]]
name = "a"
[providers.kv_events]  # <-
endpoint = "tcp://127.0.0.1:5557"
[[providers.instances]]
base_url = "http://127.0.0.1:8002"
)",
       "providers[0].kv_events", "set it on each instance"},
      {minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.session_affinity]
keys = [{header = "a", body = "b"}]  # <-
)"),
       "routes[1].policy.session_affinity.keys[0]", "exactly one of header or body"},
      {minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.session_affinity]
keys = []  # <-
)"),
       "routes[1].policy.session_affinity.keys", "the plugin never votes"},
  };
  for (const auto& c : cases) expect_one_error(c);
}

TEST(LoadConfig, CollectsEveryError) {
  expect_errors_on_marked_lines(
      R"(
[server]
listen = "nowhere"  # <-
workers = -2  # <-

[[providers]]
name = "Bad_Name"  # <-
kind = "grpc"  # <-
base_url = "ftp://x"  # <-

[[routes]]
name = "r"
strategy = "fastest_ever"  # <-
[[routes.targets]]
provider = "ghost"  # <-
model = "m"
weight = -1  # <-
colour = "red"  # <-

[retry]
max_attempts = 0  # <-
)",
      {"server.listen", "server.workers", "providers[0].name", "providers[0].kind",
       "providers[0].base_url", "routes[0].strategy", "routes[0].targets[0].provider",
       "routes[0].targets[0].weight", "routes[0].targets[0].colour", "retry.max_attempts"});
}

TEST(LoadConfig, SyntaxError) {
  constexpr std::string_view kText = R"(
[server]
listen = "127.0.0.1:4000"
workers = = 3
)";
  auto errors = errors_of(kText);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  const uint32_t line = line_of(kText, "= =");
  EXPECT_EQ(errors[0].line, line);
  EXPECT_GT(errors[0].column, 0u);
  EXPECT_EQ(errors[0].key, "");
  EXPECT_NE(errors[0].message.find("syntax error"), std::string::npos);
  const std::string prefix = "test.toml:" + std::to_string(line) + ":";
  EXPECT_EQ(errors[0].to_string().rfind(prefix, 0), 0u) << errors[0].to_string();
}

TEST(LoadConfig, DuplicateTomlKeyIsSyntaxError) {
  constexpr std::string_view kText = R"(
[server]
workers = 1
workers = 2
)";
  auto errors = errors_of(kText);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].line, lines_with(kText, "workers").at(1)) << "the second definition";
}

TEST(LoadConfig, MissingFile) {
  auto loaded = load_config_file("/nonexistent/dir/rolter.toml");
  ASSERT_FALSE(loaded);
  ASSERT_EQ(loaded.error().size(), 1u);
  const ConfigError& e = loaded.error()[0];
  EXPECT_EQ(e.file, "/nonexistent/dir/rolter.toml");
  EXPECT_EQ(e.line, 0u);
  EXPECT_EQ(e.to_string().rfind("/nonexistent/dir/rolter.toml: cannot open", 0), 0u)
      << e.to_string();
}

TEST(LoadConfig, DirectoryIsUnreadable) {
  auto loaded = load_config_file("/");
  ASSERT_FALSE(loaded);
  ASSERT_EQ(loaded.error().size(), 1u);
  EXPECT_EQ(loaded.error()[0].line, 0u);
}

TEST(LoadConfig, ReadsFile) {
  std::string path = ::testing::TempDir() + "rolter_loader_test.toml";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::string text(kMinimal.substr(1));
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  auto loaded = load_config_file(path);
  std::remove(path.c_str());
  ASSERT_TRUE(loaded) << dump(loaded.error());
  EXPECT_EQ(loaded->config.path, path);
  EXPECT_EQ(loaded->config.providers[0].name, "a");
}

TEST(ConfigError, ToString) {
  EXPECT_EQ((ConfigError{"f.toml", 3, 7, "a.b", "bad"}).to_string(), "f.toml:3:7: a.b: bad");
  EXPECT_EQ((ConfigError{"f.toml", 3, 0, "a.b", "bad"}).to_string(), "f.toml:3: a.b: bad");
  EXPECT_EQ((ConfigError{"f.toml", 0, 0, "a.b", "bad"}).to_string(), "f.toml: a.b: bad");
  EXPECT_EQ((ConfigError{"f.toml", 2, 1, "", "bad"}).to_string(), "f.toml:2:1: bad");
}

TEST(LoadConfig, ArbitraryBytesDoNotThrow) {
  const std::string inputs[] = {
      std::string("\0\xff\xfe", 3), "[[", "a = \"\\u00\"", "[a]\n[a]\n", "x = 1979-05-27T07:32:00Z",
      std::string(1000, '[')};
  for (const auto& text : inputs) EXPECT_FALSE(load_config_text(text, "x.toml"));
}

// Values that are likely secrets (a key pasted where a variable name belongs, a password in a
// URL) never appear in an error message, which ends up in logs.
TEST(LoadConfig, SecretsNeverEchoed) {
  struct Case {
    const char* toml;
    const char* secret;
  };
  const Case cases[] = {
      {"[[providers]]\nname = \"a\"\nbase_url = \"http://a:1\"\n"
       "api_key_env = \"sk-live-0123456789abcdef0123\"\n",
       "0123456789abcdef0123"},
      {"[[keys]]\nname = \"k\"\nkey_env = \"sk-team-9876543210fedcba\"\n", "9876543210fedcba"},
      {"[[providers]]\nname = \"a\"\nbase_url = \"http://user:s3cretpw@host:bad\"\n", "s3cretpw"},
      {"[store]\nurl = \"mysql://admin:hunter2pw@db/rolter\"\n", "hunter2pw"},
      {"[[providers]]\nname = \"a\"\nbase_url = \"http://a:1\"\n"
       "kv_events = { endpoint = \"udp://u:zmqsecret@h:1\" }\n",
       "zmqsecret"},
  };
  for (const auto& c : cases) {
    auto loaded = load_config_text(c.toml, "test.toml");
    ASSERT_FALSE(loaded) << c.toml;
    for (const auto& error : loaded.error()) {
      EXPECT_EQ(error.to_string().find(c.secret), std::string::npos) << error.to_string();
    }
  }
}

// Writes `text` to `path`; false when the file cannot be written.
bool write_file(const std::string& path, std::string_view text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  std::fwrite(text.data(), 1, text.size(), f);
  return std::fclose(f) == 0;
}

TEST(LoadConfig, TlsReadsBothPaths) {
  const std::string cert = ::testing::TempDir() + "rolter_loader_tls_cert.pem";
  const std::string key = ::testing::TempDir() + "rolter_loader_tls_key.pem";
  ASSERT_TRUE(write_file(cert, "cert"));
  ASSERT_TRUE(write_file(key, "key"));
  auto loaded = load(minimal_plus("[tls]\ncert = \"" + cert + "\"\nkey = \"" + key + "\"\n"));
  std::remove(cert.c_str());
  std::remove(key.c_str());
  ASSERT_TRUE(loaded) << dump(loaded.error());
  EXPECT_EQ(loaded->config.tls.cert, cert);
  EXPECT_EQ(loaded->config.tls.key, key);
}

TEST(LoadConfig, TlsAbsentMeansPlaintext) {
  auto loaded = load(kMinimal);
  ASSERT_TRUE(loaded) << dump(loaded.error());
  EXPECT_TRUE(loaded->config.tls.cert.empty());
  EXPECT_TRUE(loaded->config.tls.key.empty());
}

// Relative paths name files beside the config file, not in the working directory.
TEST(LoadConfig, TlsRelativePathsResolveBesideTheConfig) {
  const std::string dir = ::testing::TempDir() + "rolter_loader_tls_dir";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(write_file(dir + "/server.pem", "cert"));
  ASSERT_TRUE(write_file(dir + "/server.key", "key"));
  const std::string config = dir + "/rolter.toml";
  ASSERT_TRUE(
      write_file(config, minimal_plus("[tls]\ncert = \"server.pem\"\nkey = \"server.key\"\n")));
  auto loaded = load_config_file(config);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(loaded) << dump(loaded.error());
  EXPECT_EQ(loaded->config.tls.cert, dir + "/server.pem");
  EXPECT_EQ(loaded->config.tls.key, dir + "/server.key");
}

TEST(LoadConfig, TlsErrorsNameTheKey) {
  const std::string cert = ::testing::TempDir() + "rolter_loader_tls_only.pem";
  ASSERT_TRUE(write_file(cert, "cert"));
  const std::string missing = ::testing::TempDir() + "rolter_loader_tls_missing.pem";
  const std::string has_cert = "cert = \"" + cert + "\"\n";
  const ErrorCase cases[] = {
      {minimal_plus("[tls]  # <-\n" + has_cert), "tls.key", "set both tls.cert and tls.key"},
      {minimal_plus("[tls]  # <-\nkey = \"" + cert + "\"\n"), "tls.cert",
       "set both tls.cert and tls.key"},
      {minimal_plus("[tls]\ncert = \"" + missing + "\"  # <-\nkey = \"" + cert + "\"\n"),
       "tls.cert", "cannot read \"" + missing + "\": No such file"},
      {minimal_plus("[tls]\n" + has_cert + "key = \"" + missing + "\"  # <-\n"), "tls.key",
       "cannot read"},
      {minimal_plus("[tls]\n" + has_cert + "key = \"/\"  # <-\n"), "tls.key", "cannot read"},
      {minimal_plus("[tls]\n" + has_cert + "key = \"\"  # <-\n"), "tls.key", "must not be empty"},
      {minimal_plus("[tls]\n" + has_cert + "key = 1  # <-\n"), "tls.key", "expected string"},
      {minimal_plus("[tls]\n" + has_cert + "key = \"" + cert + "\"\nca = \"x\"  # <-\n"), "tls.ca",
       "unknown key"},
  };
  for (const auto& c : cases) expect_one_error(c);
  std::remove(cert.c_str());
}

}  // namespace
}  // namespace rolter
