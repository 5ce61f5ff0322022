#include "config/loader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace rolter {
namespace {

// Fixtures start with a newline after R"( for readability; dropping it makes line 1 the first
// line of TOML, so the line numbers asserted below are the lines of the raw string.
tl::expected<LoadedConfig, ConfigErrors> load(std::string_view text) {
  if (!text.empty() && text.front() == '\n') text.remove_prefix(1);
  return load_config_text(text, "test.toml");
}

// All errors, one per line, for failure messages.
std::string dump(const ConfigErrors& errors) {
  std::string out;
  for (const auto& e : errors) out += e.to_string() + "\n";
  return out;
}

// Loads text that must fail and returns its errors.
ConfigErrors errors_of(std::string_view text) {
  auto loaded = load(text);
  EXPECT_FALSE(loaded) << "expected errors";
  return loaded ? ConfigErrors{} : loaded.error();
}

// Expects exactly one error, at `line` and `key`, whose message contains `fragment`.
void expect_one_error(std::string_view text, uint32_t line, std::string_view key,
                      std::string_view fragment) {
  ConfigErrors errors = errors_of(text);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].line, line) << dump(errors);
  EXPECT_EQ(errors[0].key, key) << dump(errors);
  EXPECT_NE(errors[0].message.find(fragment), std::string::npos) << dump(errors);
}

// The smallest valid fleet, with a key so that no warning is expected; tests append to it.
constexpr std::string_view kMinimal = R"(
[[providers]]
name = "a"
base_url = "http://127.0.0.1:8001"

[[routes]]
name = "m"
[[routes.targets]]
provider = "a"
model = "m1"

[[keys]]
name = "k"
key_env = "K"
)";  // 13 lines

// kMinimal followed by `extra`, whose first line (after its leading newline) becomes line 14.
std::string minimal_plus(std::string_view extra) {
  if (!extra.empty() && extra.front() == '\n') extra.remove_prefix(1);
  return std::string(kMinimal) + std::string(extra);
}

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

TEST(LoadConfig, DefaultsApplied) {
  auto loaded = load(kMinimal);
  ASSERT_TRUE(loaded) << dump(loaded.error());
  const Config& c = loaded->config;
  const Config defaults;
  EXPECT_EQ(c.server.listen, "127.0.0.1:4000");
  EXPECT_EQ(c.server.workers, 0u);
  EXPECT_EQ(c.server.max_body_bytes, 33554432u);
  EXPECT_EQ(c.server.upstream_timeout_ms, 600000u);
  EXPECT_EQ(c.store.url, "");
  EXPECT_EQ(c.providers[0].kind, "openai");
  EXPECT_EQ(c.providers[0].max_loras, 8u);
  EXPECT_FALSE(c.providers[0].instances[0].kv_events);
  EXPECT_EQ(c.routes[0].strategy, "round_robin");
  EXPECT_FALSE(c.routes[0].targets[0].weight);
  EXPECT_EQ(c.adaptive_routing.min_samples, 50u);
  EXPECT_EQ(c.health.interval_ms, 5000u);
  EXPECT_EQ(c.breaker.failure_threshold, 5u);
  EXPECT_EQ(c.retry.on_status, defaults.retry.on_status);
  EXPECT_EQ(c.retry.max_attempts, 3u);
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
  EXPECT_EQ(loaded->warnings[0].line, 48u);
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

TEST(LoadConfig, UnknownKeyTopLevel) {
  // A bare key after [[keys]] would belong to keys[0], so the top-level key goes first.
  auto errors = errors_of("colour = \"blue\"\n" + std::string(kMinimal));
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].line, 1u);
  EXPECT_EQ(errors[0].column, 1u);
  EXPECT_EQ(errors[0].key, "colour");
  EXPECT_EQ(errors[0].to_string(), "test.toml:1:1: colour: unknown key");
  expect_one_error(minimal_plus(R"(
colour = 1
)"),
                   14, "keys[0].colour", "unknown key");
}

TEST(LoadConfig, UnknownKeyNested) {
  expect_one_error(R"(
[[providers]]
name = "a"
base_url = "http://127.0.0.1:8001"
[providers.cost]
input = 1
ouptut = 2
)",
                   6, "providers[0].cost.ouptut", "unknown key");
  expect_one_error(minimal_plus(R"(
[[routes]]
name = "b"
[[routes.targets]]
provider = "a"
model = "x"
wieght = 2
)"),
                   19, "routes[1].targets[0].wieght", "unknown key");
  expect_one_error(minimal_plus(R"(
[server]
listen = "127.0.0.1:1"
[server.tls]
cert = "x"
)"),
                   16, "server.tls", "unknown key");
  // An unknown section is an unknown key of the root.
  expect_one_error(minimal_plus(R"(
[logging]
level = "debug"
)"),
                   14, "logging", "unknown key");
}

TEST(LoadConfig, TypeErrors) {
  expect_one_error(minimal_plus(R"(
[server]
workers = "four"
)"),
                   15, "server.workers", "expected integer, got string");
  expect_one_error(minimal_plus(R"(
[server]
listen = 4000
)"),
                   15, "server.listen", "expected string, got integer");
  expect_one_error(minimal_plus(R"(
[adaptive_routing]
enabled = "yes"
)"),
                   15, "adaptive_routing.enabled", "expected boolean, got string");
  expect_one_error(minimal_plus(R"(
[adaptive_routing]
cost_weight = "0.5"
)"),
                   15, "adaptive_routing.cost_weight", "expected number, got string");
  expect_one_error(minimal_plus(R"(
[health]
interval_ms = 1.5
)"),
                   15, "health.interval_ms", "expected integer, got float");
  expect_one_error(minimal_plus(R"(
[retry]
on_status = [500, "502"]
)"),
                   15, "retry.on_status[1]", "expected integer, got string");
  expect_one_error("server = 1\n" + std::string(kMinimal), 1, "server",
                   "expected table, got integer");
  expect_one_error(R"(
[providers]
name = "a"
)",
                   1, "providers", "expected array of tables, got table");
  expect_one_error(minimal_plus(R"(
[[keys]]
name = "k2"
key_env = "K2"
routes = "qwen3"
)"),
                   17, "keys[1].routes", "expected array, got string");
}

TEST(LoadConfig, RangeErrors) {
  expect_one_error(minimal_plus(R"(
[server]
workers = -1
)"),
                   15, "server.workers", "must be >= 0, got -1");
  expect_one_error(minimal_plus(R"(
[server]
workers = 4294967296
)"),
                   15, "server.workers", "must be <= 4294967295, got 4294967296");
  expect_one_error(minimal_plus(R"(
[retry]
max_attempts = 0
)"),
                   15, "retry.max_attempts", "must be >= 1, got 0");
  expect_one_error(minimal_plus(R"(
[retry]
on_status = [429, 99, 500]
)"),
                   15, "retry.on_status[1]", "between 100 and 599, got 99");
  expect_one_error(minimal_plus(R"(
[adaptive_routing]
exploration_ratio = 1.5
)"),
                   15, "adaptive_routing.exploration_ratio", "between 0 and 1, got 1.5");
}

TEST(LoadConfig, CollectsEveryError) {
  auto errors = errors_of(R"(
[server]
listen = "nowhere"
workers = -2

[[providers]]
name = "Bad_Name"
kind = "grpc"
base_url = "ftp://x"

[[routes]]
name = "r"
strategy = "fastest_ever"
[[routes.targets]]
provider = "ghost"
model = "m"
weight = -1
colour = "red"

[retry]
max_attempts = 0
)");
  ASSERT_EQ(errors.size(), 10u) << dump(errors);
  const std::pair<uint32_t, std::string_view> expected[] = {
      {2, "server.listen"},
      {3, "server.workers"},
      {6, "providers[0].name"},
      {7, "providers[0].kind"},
      {8, "providers[0].base_url"},
      {12, "routes[0].strategy"},
      {14, "routes[0].targets[0].provider"},
      {16, "routes[0].targets[0].weight"},
      {17, "routes[0].targets[0].colour"},
      {20, "retry.max_attempts"},
  };
  for (size_t i = 0; i < errors.size(); ++i) {
    EXPECT_EQ(errors[i].line, expected[i].first) << dump(errors);
    EXPECT_EQ(errors[i].key, expected[i].second) << dump(errors);
    EXPECT_EQ(errors[i].file, "test.toml");
  }
}

TEST(LoadConfig, SyntaxError) {
  auto errors = errors_of(R"(
[server]
listen = "127.0.0.1:4000"
workers = = 3
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].line, 3u);
  EXPECT_GT(errors[0].column, 0u);
  EXPECT_EQ(errors[0].key, "");
  EXPECT_NE(errors[0].message.find("syntax error"), std::string::npos);
  EXPECT_EQ(errors[0].to_string().rfind("test.toml:3:", 0), 0u) << errors[0].to_string();
}

TEST(LoadConfig, DuplicateTomlKeyIsSyntaxError) {
  auto errors = errors_of(R"(
[server]
workers = 1
workers = 2
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].line, 3u);
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

TEST(LoadConfig, MissingRequiredKeyUsesTableLine) {
  expect_one_error(minimal_plus(R"(
[[routes]]
name = "b"
[[routes.targets]]
model = "x"
)"),
                   16, "routes[1].targets[0].provider", "missing required key");
  expect_one_error(R"(
[[providers]]
base_url = "http://h"
)",
                   1, "providers[0].name", "missing required key");
}

TEST(LoadConfig, BaseUrlAndInstancesConflict) {
  expect_one_error(R"(
[[providers]]
name = "a"
base_url = "http://127.0.0.1:8001"
[[providers.instances]]
base_url = "http://127.0.0.1:8002"
)",
                   4, "providers[0].instances", "not both");
  expect_one_error(R"(
[[providers]]
name = "a"
)",
                   1, "providers[0].base_url", "missing required key");
  expect_one_error(R"(
[[providers]]
name = "a"
[providers.kv_events]
endpoint = "tcp://127.0.0.1:5557"
[[providers.instances]]
base_url = "http://127.0.0.1:8002"
)",
                   3, "providers[0].kv_events", "set it on each instance");
}

TEST(LoadConfig, DuplicateNames) {
  auto errors = errors_of(R"(
[[providers]]
name = "a"
base_url = "http://127.0.0.1:8001"
[[providers]]
name = "a"
base_url = "http://127.0.0.1:8002"

[[routes]]
name = "r"
[[routes.targets]]
provider = "a"
model = "m"
[[routes]]
name = "r"
[[routes.targets]]
provider = "a"
model = "m"

[[keys]]
name = "k"
key_env = "K"
[[keys]]
name = "k"
key_env = "K2"
)");
  ASSERT_EQ(errors.size(), 3u) << dump(errors);
  EXPECT_EQ(errors[0].line, 5u);
  EXPECT_EQ(errors[0].message, "duplicate provider name \"a\" (first defined on line 2)");
  EXPECT_EQ(errors[1].line, 14u);
  EXPECT_EQ(errors[1].key, "routes[1].name");
  EXPECT_EQ(errors[2].line, 23u);
  EXPECT_EQ(errors[2].key, "keys[1].name");
}

TEST(LoadConfig, UnknownProviderInTarget) {
  expect_one_error(minimal_plus(R"(
[[routes]]
name = "b"
[[routes.targets]]
provider = "nope"
model = "x"
)"),
                   17, "routes[1].targets[0].provider", "unknown provider \"nope\"");
}

TEST(LoadConfig, UnknownStrategyListsKnownOnes) {
  auto errors = errors_of(minimal_plus(R"(
[[routes]]
name = "b"
strategy = "fastest_ever"
[[routes.targets]]
provider = "a"
model = "x"
)"));
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].line, 16u);
  EXPECT_EQ(errors[0].key, "routes[1].strategy");
  EXPECT_NE(errors[0].message.find("unknown strategy \"fastest_ever\""), std::string::npos);
  EXPECT_NE(errors[0].message.find("round_robin"), std::string::npos);
  EXPECT_NE(errors[0].message.find("policy"), std::string::npos);
}

TEST(LoadConfig, GroupStrategy) {
  expect_one_error(minimal_plus(R"(
[[provider_groups]]
slug = "g"
strategy = "policy"
[[provider_groups.members]]
provider = "a"
)"),
                   16, "provider_groups[0].strategy", "policy mode is for routes");
}

TEST(LoadConfig, NegativeWeight) {
  expect_one_error(minimal_plus(R"(
[[routes]]
name = "b"
strategy = "weighted"
[[routes.targets]]
provider = "a"
model = "x"
weight = -0.5
)"),
                   20, "routes[1].targets[0].weight", "must be finite and >= 0, got -0.5");
}

TEST(LoadConfig, NonFiniteWeights) {
  for (const char* value : {"nan", "inf", "-inf", "+inf"}) {
    expect_one_error(minimal_plus(std::string(R"(
[[routes]]
name = "b"
strategy = "weighted"
[[routes.targets]]
provider = "a"
model = "x"
weight = )") + value + "\n"),
                     20, "routes[1].targets[0].weight", "must be finite");
  }
  expect_one_error(minimal_plus(R"(
[[provider_groups]]
slug = "g"
strategy = "weighted"
[[provider_groups.members]]
provider = "a"
weight = nan
)"),
                   19, "provider_groups[0].members[0].weight", "got nan");
}

TEST(LoadConfig, BadUrls) {
  expect_one_error(R"(
[[providers]]
name = "a"
base_url = "127.0.0.1:8001"
)",
                   3, "providers[0].base_url", "bad URL \"127.0.0.1:8001\"");
  expect_one_error(R"(
[[providers]]
name = "a"
[[providers.instances]]
base_url = "http://ok:1"
[[providers.instances]]
base_url = "http://bad:99999"
lmcache = { endpoint = "http://ok:9000" }
)",
                   6, "providers[0].instances[1].base_url", "port out of range");
  expect_one_error(R"(
[[providers]]
name = "a"
base_url = "http://a:1"
kv_events = { endpoint = "http://a:5557" }
)",
                   4, "providers[0].kv_events.endpoint", "expected tcp://host:port");
  expect_one_error(R"(
[[providers]]
name = "a"
base_url = "http://a:1"
[providers.lmcache]
endpoint = "localhost:9000"
)",
                   5, "providers[0].lmcache.endpoint", "bad URL");
  expect_one_error(minimal_plus(R"(
[server]
listen = "[::1]"
)"),
                   15, "server.listen", "expected host:port");
}

TEST(LoadConfig, ListenForms) {
  for (const char* listen : {"[::]:4000", "0.0.0.0:0", "localhost:65535"}) {
    auto loaded = load(minimal_plus("[server]\nlisten = \"" + std::string(listen) + "\"\n"));
    EXPECT_TRUE(loaded) << listen << "\n" << (loaded ? "" : dump(loaded.error()));
  }
}

TEST(LoadConfig, ProviderNameAndKind) {
  expect_one_error(R"(
[[providers]]
name = "Qwen_A"
base_url = "http://a:1"
)",
                   2, "providers[0].name", "must match ^[a-z0-9-]+$");
  expect_one_error(R"(
[[providers]]
name = ""
base_url = "http://a:1"
)",
                   2, "providers[0].name", "must match");
  expect_one_error(R"(
[[providers]]
name = "a"
api_key_env = "MY-KEY"
base_url = "http://a:1"
)",
                   3, "providers[0].api_key_env", "must name an environment variable");
}

TEST(LoadConfig, GroupSlugs) {
  expect_one_error(minimal_plus(R"(
[[provider_groups]]
slug = "-fleet"
[[provider_groups.members]]
provider = "a"
)"),
                   15, "provider_groups[0].slug", "must match ^[a-z0-9][a-z0-9-]{0,62}$");
  expect_one_error(minimal_plus(R"(
[[provider_groups]]
slug = ")" + std::string(64, 'x') +
                                R"("
[[provider_groups.members]]
provider = "a"
)"),
                   15, "provider_groups[0].slug", "must match");
  expect_one_error(minimal_plus(R"(
[[provider_groups]]
slug = "a"
[[provider_groups.members]]
provider = "a"
)"),
                   15, "provider_groups[0].slug", "also a provider name");
  auto errors = errors_of(minimal_plus(R"(
[[provider_groups]]
slug = "g"
[[provider_groups.members]]
provider = "a"
[[provider_groups]]
slug = "g"
[[provider_groups.members]]
provider = "zz"
)"));
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  EXPECT_EQ(errors[0].line, 19u);
  EXPECT_NE(errors[0].message.find("duplicate group slug"), std::string::npos);
  EXPECT_EQ(errors[1].line, 21u);
  EXPECT_EQ(errors[1].key, "provider_groups[1].members[0].provider");
}

TEST(LoadConfig, Keys) {
  expect_one_error(R"(
[[keys]]
name = "k"
key_env = "K"
key_sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
)",
                   4, "keys[0].key_sha256", "exactly one of key_env or key_sha256");
  expect_one_error(R"(
[[keys]]
name = "k"
)",
                   1, "keys[0]", "exactly one of key_env or key_sha256");
  expect_one_error(R"(
[[keys]]
name = "k"
key_sha256 = "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"
)",
                   3, "keys[0].key_sha256", "64 lowercase hex");
  expect_one_error(R"(
[[keys]]
name = "k"
key_env = "1KEY"
)",
                   3, "keys[0].key_env", "must name an environment variable");
  expect_one_error(minimal_plus(R"(
[[keys]]
name = "k2"
key_env = "K2"
providers = ["a", "b"]
)"),
                   17, "keys[1].providers[1]", "unknown provider \"b\"");
}

TEST(LoadConfig, DecisionServiceOnlyForThePlugin) {
  auto errors = errors_of(R"(
[[providers]]
name = "jev"
kind = "decision_service"
base_url = "http://a:1"
[[routes]]
name = "r"
[[routes.targets]]
provider = "jev"
model = "m"
[[provider_groups]]
slug = "g"
[[provider_groups.members]]
provider = "jev"
)");
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  EXPECT_EQ(errors[0].key, "routes[0].targets[0].provider");
  EXPECT_EQ(errors[0].line, 8u);
  EXPECT_NE(errors[0].message.find("is a decision_service"), std::string::npos);
  EXPECT_EQ(errors[1].key, "provider_groups[0].members[0].provider");
  EXPECT_EQ(errors[1].line, 13u);

  expect_one_error(minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.decision_service]
provider = "a"
model = "d"
criteria = { "m1" = "x" }
)"),
                   21, "routes[1].policy.decision_service.provider",
                   "needs kind = \"decision_service\"");
}

TEST(LoadConfig, DecisionCriteriaNameTargetModels) {
  expect_one_error(R"(
[[providers]]
name = "a"
base_url = "http://a:1"
[[providers]]
name = "jev"
kind = "decision_service"
base_url = "http://a:2"
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.decision_service]
provider = "jev"
model = "d"
criteria = { "m1" = "x", "m9" = "y" }
)",
                   17, "routes[0].policy.decision_service.criteria.m9",
                   "not the model of any target");
}

TEST(LoadConfig, PolicyRoutes) {
  // Weights on some targets but not all: reported at the first target without one.
  expect_one_error(minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
weight = 3
[[routes.targets]]
provider = "a"
model = "m2"
)"),
                   21, "routes[1].targets[1]", "weight on every target (1 of 2");
  expect_one_error(minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.least_inflight]
weight = 0
)"),
                   21, "routes[1].policy.least_inflight.weight", "must be finite and > 0");
  expect_one_error(minimal_plus(R"(
[[routes]]
name = "p"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.least_inflight]
)"),
                   19, "routes[1].policy", "applies only to strategy = \"policy\"");
  expect_one_error(minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.session_affinity]
keys = [{header = "a", body = "b"}]
)"),
                   21, "routes[1].policy.session_affinity.keys[0]",
                   "exactly one of header or body");
  expect_one_error(minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.sticky]
weight = 1
)"),
                   20, "routes[1].policy.sticky", "unknown key");
  // All targets weighted: target weight mode.
  auto loaded = load(minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
weight = 3
[[routes.targets]]
provider = "a"
model = "m2"
weight = 1
)"));
  ASSERT_TRUE(loaded) << dump(loaded.error());
  EXPECT_TRUE(loaded->warnings.empty());
  EXPECT_FALSE(loaded->config.routes[1].policy);
}

TEST(LoadConfig, RouteWithoutTargets) {
  expect_one_error(minimal_plus(R"(
[[routes]]
name = "empty"
)"),
                   14, "routes[1].targets", "at least one [[routes.targets]]");
}

TEST(LoadConfig, WeightWarnings) {
  auto loaded = load(R"(
[[providers]]
name = "a"
base_url = "http://a:1"
[[routes]]
name = "r"
strategy = "round_robin"
[[routes.targets]]
provider = "a"
model = "m"
weight = 1
[[routes.targets]]
provider = "a"
model = "n"
weight = 5
[[routes]]
name = "w"
strategy = "weighted"
[[routes.targets]]
provider = "a"
model = "m"
weight = 5
)");
  ASSERT_TRUE(loaded) << dump(loaded.error());
  ASSERT_EQ(loaded->warnings.size(), 2u) << dump(loaded->warnings);
  EXPECT_EQ(loaded->warnings[0].line, 0u);  // no [[keys]]: about the whole file
  EXPECT_EQ(loaded->warnings[0].key, "keys");
  EXPECT_EQ(loaded->warnings[1].line, 14u);
  EXPECT_EQ(loaded->warnings[1].key, "routes[0].targets[1].weight");
  EXPECT_EQ(loaded->warnings[1].message, "strategy round_robin ignores weights");
}

TEST(LoadConfig, NonTableArrayElement) {
  expect_one_error("provider_groups = [1]\n" + std::string(kMinimal), 1, "provider_groups[0]",
                   "expected table, got integer");
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

}  // namespace
}  // namespace rolter
