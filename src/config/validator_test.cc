// The semantic checks of validator.cc, driven through load_config_text() so that each finding is
// also located (line, key path) the way `rolter check` reports it.
#include "config/validator.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/loader.h"
#include "config/testing/load_fixture.h"

namespace rolter {
namespace {

// A provider `a` alone, for cases about providers (no [[keys]]: a warning, not an error).
std::string provider_plus(std::string_view extra) {
  return "[[providers]]\nname = \"a\"\n" + std::string(without_leading_newline(extra));
}

// "(first defined on line N)", N being the first line of kMinimal that contains `needle`.
std::string first_defined_in_minimal(std::string_view needle) {
  return "(first defined on line " + std::to_string(line_of(kMinimal, needle)) + ")";
}

// Every error branch of validator.cc, in its order (one case at least for each):
//   check_server:   S1 listen not host:port; S2 metrics_listen set and not host:port;
//                   S3 trusted_proxies[i] not a CIDR.
//   check_store:    T1 url neither sqlite://, postgres:// nor postgresql://.
//   check_providers: P1 name not ^[a-z0-9-]+$; P2 duplicate name; P3 unknown kind;
//                   P4 api_key_env not a variable name; P5 health_path without a leading '/';
//                   P6 duplicate instance base_url.
//     check_instance / check_url / check_zmq_endpoint: P7 bad base_url; P8 bad
//                   instances[j].base_url; P9 tcp:// endpoint with a bad host:port; P10 endpoint
//                   neither tcp://host:port nor ipc://path; P11 bad replay_endpoint (checked only
//                   when set); P12 bad lmcache endpoint.
//                   P13 load_source neither local nor engine_metrics.
//                   P14 tokenize neither none nor engine.
//   check_routes:   R1 name = ""; R2 duplicate name; R3 unknown strategy; R4 no targets;
//                   R5 target provider unknown; R6 target provider a decision_service;
//                   R7 target model = ""; R8 [routes.policy] on a non-policy route;
//                   R9 a policy route with weights on some targets only; R10 [routes.pipeline]
//                   on a non-pipeline route; R11 an unknown scorer; R12 no scorer weight > 0.
//     check_decision_service: D1 provider unknown; D2 provider not of kind decision_service;
//                   D3 criteria naming a model no target has.
//   check_groups:   G1 slug not ^[a-z0-9][a-z0-9-]{0,62}$; G2 duplicate slug; G3 slug that is a
//                   provider name; G4 strategy = "policy"; G5 unknown strategy; G6 no members;
//                   G7 member provider unknown or a decision_service.
//   check_keys:     K1 name = ""; K2 duplicate name; K3 both key_env and key_sha256; K4 neither;
//                   K5 key_env not a variable name; K6 key_sha256 not 64 lowercase hex;
//                   K7 routes[j] = ""; K8 providers[j] unknown.
// The warnings (no [[keys]], weights a strategy ignores) are in Validator.Warnings below.
TEST(Validator, EveryErrorBranch) {
  const ErrorCase cases[] = {
      // S1
      {minimal_plus("[server]\nlisten = \"[::1]\"  # <-\n"), "server.listen", "expected host:port"},
      {minimal_plus("[server]\nlisten = \"nowhere\"  # <-\n"), "server.listen",
       "expected host:port"},
      // S2
      {minimal_plus("[server]\nmetrics_listen = \"127.0.0.1\"  # <-\n"), "server.metrics_listen",
       "expected host:port"},
      {minimal_plus("[server]\nmetrics_listen = \"127.0.0.1:70000\"  # <-\n"),
       "server.metrics_listen", "port"},
      // S3: reported at the bad element, which it quotes.
      {minimal_plus("[server]\ntrusted_proxies = [\"10.0.0.0/8\", \"10.0.0.0/33\"]  # <-\n"),
       "server.trusted_proxies[1]", "\"10.0.0.0/33\": "},
      {minimal_plus("[server]\ntrusted_proxies = [\"proxy.local\"]  # <-\n"),
       "server.trusted_proxies[0]", "\"proxy.local\": "},
      // T1
      {minimal_plus("[store]\nurl = \"mysql://db/rolter\"  # <-\n"), "store.url",
       "expected sqlite:PATH or postgres://…, got \"mysql://db/rolter\""},
      // P1
      {provider_plus("base_url = \"http://a:1\"\n[[providers]]\nname = \"Qwen_A\"  # <-\n"
                     "base_url = \"http://a:2\"\n"),
       "providers[1].name", "must match ^[a-z0-9-]+$"},
      {provider_plus("base_url = \"http://a:1\"\n[[providers]]\nname = \"\"  # <-\n"
                     "base_url = \"http://a:2\"\n"),
       "providers[1].name", "must match"},
      // P2
      {minimal_plus("[[providers]]\nname = \"a\"  # <-\nbase_url = \"http://a:2\"\n"),
       "providers[1].name",
       "duplicate provider name \"a\" " + first_defined_in_minimal("name = \"a\"")},
      // P3
      {provider_plus("kind = \"grpc\"  # <-\nbase_url = \"http://a:1\"\n"), "providers[0].kind",
       "unknown kind \"grpc\"; expected openai, anthropic, gemini or decision_service"},
      // P4
      {provider_plus("api_key_env = \"MY-KEY\"  # <-\nbase_url = \"http://a:1\"\n"),
       "providers[0].api_key_env", "must name an environment variable"},
      // P5
      {provider_plus("health_path = \"health\"  # <-\nbase_url = \"http://a:1\"\n"),
       "providers[0].health_path", "must start with '/'"},
      // P6
      {provider_plus(R"(
[[providers.instances]]
base_url = "http://h:1"
[[providers.instances]]
base_url = "http://h:1"  # <-
)"),
       "providers[0].instances[1].base_url", "duplicate instance \"http://h:1\""},
      // P7
      {provider_plus("base_url = \"127.0.0.1:8001\"  # <-\n"), "providers[0].base_url",
       "bad URL \"127.0.0.1:8001\""},
      // P8
      {provider_plus(R"(
[[providers.instances]]
base_url = "http://ok:1"
[[providers.instances]]
base_url = "http://bad:99999"  # <-
lmcache = { endpoint = "http://ok:9000" }
)"),
       "providers[0].instances[1].base_url", "port out of range"},
      // P9
      {provider_plus("base_url = \"http://a:1\"\nkv_events = { endpoint = \"tcp://a:0\" }  # <-\n"),
       "providers[0].kv_events.endpoint", "bad endpoint \"tcp://a:0\""},
      // P10
      {provider_plus(
           "base_url = \"http://a:1\"\nkv_events = { endpoint = \"http://a:5557\" }  # <-\n"),
       "providers[0].kv_events.endpoint", "expected tcp://host:port or ipc://path"},
      {provider_plus("base_url = \"http://a:1\"\nkv_events = { endpoint = \"ipc://\" }  # <-\n"),
       "providers[0].kv_events.endpoint", "expected tcp://host:port or ipc://path"},
      // P11
      {provider_plus(R"(
base_url = "http://a:1"
[providers.kv_events]
endpoint = "ipc:///run/kv.sock"
replay_endpoint = "tcp://a"  # <-
)"),
       "providers[0].kv_events.replay_endpoint", "bad endpoint \"tcp://a\""},
      // P12
      {provider_plus(R"(
base_url = "http://a:1"
[providers.lmcache]
endpoint = "localhost:9000"  # <-
)"),
       "providers[0].lmcache.endpoint", "bad URL"},
      // P13: the message names the allowed values; the case must match.
      {provider_plus("base_url = \"http://a:1\"\nload_source = \"prometheus\"  # <-\n"),
       "providers[0].load_source",
       "unknown load_source \"prometheus\"; expected local or engine_metrics"},
      {provider_plus("base_url = \"http://a:1\"\nload_source = \"Engine_Metrics\"  # <-\n"),
       "providers[0].load_source", "expected local or engine_metrics"},
      {provider_plus("base_url = \"http://a:1\"\nload_source = \"\"  # <-\n"),
       "providers[0].load_source", "unknown load_source \"\""},
      // P14: the message names the allowed values; the case must match.
      {provider_plus("base_url = \"http://a:1\"\ntokenize = \"vllm\"  # <-\n"),
       "providers[0].tokenize", "unknown tokenize \"vllm\"; expected none or engine"},
      {provider_plus("base_url = \"http://a:1\"\ntokenize = \"Engine\"  # <-\n"),
       "providers[0].tokenize", "expected none or engine"},
      // R1
      {minimal_plus(R"(
[[routes]]
name = ""  # <-
[[routes.targets]]
provider = "a"
model = "x"
)"),
       "routes[1].name", "must not be empty"},
      // R2
      {minimal_plus(R"(
[[routes]]
name = "m"  # <-
[[routes.targets]]
provider = "a"
model = "x"
)"),
       "routes[1].name", "duplicate route name \"m\" " + first_defined_in_minimal("name = \"m\"")},
      // R3: the message lists the known strategies, policy mode included.
      {minimal_plus(R"(
[[routes]]
name = "b"
strategy = "fastest_ever"  # <-
[[routes.targets]]
provider = "a"
model = "x"
)"),
       "routes[1].strategy",
       "unknown strategy \"fastest_ever\"; known: round_robin, random, power_of_two, weighted, "
       "consistent_hash, cache_aware, pipeline, cheapest, fastest, predicted_latency, lora_aware, "
       "precise_cache_aware, kv_cost, lmcache_aware, least_kv_usage, adaptive, policy"},
      // R4: reported at the route's header, targets being absent.
      {minimal_plus("[[routes]]  # <-\nname = \"empty\"\n"), "routes[1].targets",
       "at least one [[routes.targets]]"},
      // R5
      {minimal_plus(R"(
[[routes]]
name = "b"
[[routes.targets]]
provider = "nope"  # <-
model = "x"
)"),
       "routes[1].targets[0].provider", "unknown provider \"nope\""},
      // R6
      {minimal_plus(R"(
[[providers]]
name = "jev"
kind = "decision_service"
base_url = "http://a:2"
[[routes]]
name = "b"
[[routes.targets]]
provider = "jev"  # <-
model = "x"
)"),
       "routes[1].targets[0].provider", "is a decision_service"},
      // R7
      {minimal_plus(R"(
[[routes]]
name = "b"
[[routes.targets]]
provider = "a"
model = ""  # <-
)"),
       "routes[1].targets[0].model", "must not be empty"},
      // R8
      {minimal_plus(R"(
[[routes]]
name = "p"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.least_inflight]  # <-
)"),
       "routes[1].policy", "applies only to strategy = \"policy\""},
      // R9: reported at the first target without a weight.
      {minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
weight = 3
[[routes.targets]]  # <-
provider = "a"
model = "m2"
)"),
       "routes[1].targets[1]", "weight on every target (1 of 2 have one)"},
      // R10
      {minimal_plus(R"(
[[routes]]
name = "p"
strategy = "cache_aware"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.pipeline]  # <-
least_load = 1.0
)"),
       "routes[1].pipeline", "applies only to strategy = \"pipeline\""},
      // R11
      {minimal_plus(R"(
[[routes]]
name = "p"
strategy = "pipeline"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.pipeline]
least_load = 1.0
prefix_afinity = 1.0  # <-
)"),
       "routes[1].pipeline.prefix_afinity",
       "unknown scorer \"prefix_afinity\"; known: session_affinity, static_weight, least_load, "
       "prefix_affinity, predicted_latency, fastest, cheapest, adapter_residency, kv_residency"},
      // R12
      {minimal_plus(R"(
[[routes]]
name = "p"
strategy = "pipeline"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.pipeline]  # <-
least_load = 0
)"),
       "routes[1].pipeline", "needs at least one scorer with weight > 0"},
      // D1
      {minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.decision_service]
provider = "ghost"  # <-
model = "d"
)"),
       "routes[1].policy.decision_service.provider", "unknown provider \"ghost\""},
      // D2
      {minimal_plus(R"(
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.decision_service]
provider = "a"  # <-
model = "d"
criteria = { "m1" = "x" }
)"),
       "routes[1].policy.decision_service.provider", "needs kind = \"decision_service\""},
      // D3
      {minimal_plus(R"(
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
criteria = { "m1" = "x", "m9" = "y" }  # <-
)"),
       "routes[1].policy.decision_service.criteria.m9", "not the model of any target"},
      // G1
      {minimal_plus(R"(
[[provider_groups]]
slug = "-fleet"  # <-
[[provider_groups.members]]
provider = "a"
)"),
       "provider_groups[0].slug", "must match ^[a-z0-9][a-z0-9-]{0,62}$"},
      {minimal_plus("[[provider_groups]]\nslug = \"" + std::string(64, 'x') + "\"  # <-\n" +
                    "[[provider_groups.members]]\nprovider = \"a\"\n"),
       "provider_groups[0].slug", "must match"},
      // G2
      {minimal_plus(R"(
[[provider_groups]]
slug = "g"
[[provider_groups.members]]
provider = "a"
[[provider_groups]]
slug = "g"  # <-
[[provider_groups.members]]
provider = "a"
)"),
       "provider_groups[1].slug", "duplicate group slug \"g\""},
      // G3
      {minimal_plus(R"(
[[provider_groups]]
slug = "a"  # <-
[[provider_groups.members]]
provider = "a"
)"),
       "provider_groups[0].slug", "also a provider name"},
      // G4
      {minimal_plus(R"(
[[provider_groups]]
slug = "g"
strategy = "policy"  # <-
[[provider_groups.members]]
provider = "a"
)"),
       "provider_groups[0].strategy", "policy mode is for routes"},
      // G5: the list of known strategies has no policy here.
      {minimal_plus(R"(
[[provider_groups]]
slug = "g"
strategy = "fastest_ever"  # <-
[[provider_groups.members]]
provider = "a"
)"),
       "provider_groups[0].strategy",
       "unknown strategy \"fastest_ever\"; known: round_robin, random, power_of_two, weighted, "
       "consistent_hash, cache_aware, pipeline, cheapest, fastest, predicted_latency, lora_aware, "
       "precise_cache_aware, kv_cost, lmcache_aware, least_kv_usage, adaptive"},
      // G6
      {minimal_plus("[[provider_groups]]  # <-\nslug = \"g\"\n"), "provider_groups[0].members",
       "at least one [[provider_groups.members]]"},
      // G7
      {minimal_plus(R"(
[[provider_groups]]
slug = "g"
[[provider_groups.members]]
provider = "zz"  # <-
)"),
       "provider_groups[0].members[0].provider", "unknown provider \"zz\""},
      {minimal_plus(R"(
[[providers]]
name = "jev"
kind = "decision_service"
base_url = "http://a:2"
[[provider_groups]]
slug = "g"
[[provider_groups.members]]
provider = "jev"  # <-
)"),
       "provider_groups[0].members[0].provider", "is a decision_service"},
      // K1
      {minimal_plus("[[keys]]\nname = \"\"  # <-\nkey_env = \"K2\"\n"), "keys[1].name",
       "must not be empty"},
      // K2
      {minimal_plus("[[keys]]\nname = \"k\"  # <-\nkey_env = \"K2\"\n"), "keys[1].name",
       "duplicate key name \"k\" " + first_defined_in_minimal("name = \"k\"")},
      // K3: reported at key_sha256, the second of the two.
      {R"(
[[keys]]
name = "k"
key_env = "K"
key_sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"  # <-
)",
       "keys[0].key_sha256", "set exactly one of key_env or key_sha256"},
      // K4: reported at the table, neither key being there.
      {"[[keys]]  # <-\nname = \"k\"\n", "keys[0]", "set exactly one of key_env or key_sha256"},
      // K5
      {"[[keys]]\nname = \"k\"\nkey_env = \"1KEY\"  # <-\n", "keys[0].key_env",
       "must name an environment variable"},
      // K6
      {R"(
[[keys]]
name = "k"
key_sha256 = "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"  # <-
)",
       "keys[0].key_sha256", "64 lowercase hex"},
      {"[[keys]]\nname = \"k\"\nkey_sha256 = \"9f86d0\"  # <-\n", "keys[0].key_sha256",
       "64 lowercase hex"},
      {"[[keys]]\nname = \"k\"\nkey_sha256 = \"" + std::string(64, 'g') + "\"  # <-\n",
       "keys[0].key_sha256", "64 lowercase hex"},
      // K7
      {minimal_plus("[[keys]]\nname = \"k2\"\nkey_env = \"K2\"\nroutes = [\"m\", \"\"]  # <-\n"),
       "keys[1].routes[1]", "must not be empty"},
      // K8
      {minimal_plus(
           "[[keys]]\nname = \"k2\"\nkey_env = \"K2\"\nproviders = [\"a\", \"b\"]  # <-\n"),
       "keys[1].providers[1]", "unknown provider \"b\""},
  };
  for (const auto& c : cases) expect_one_error(c);
}

// Values each check accepts: every form the branches above treat as valid loads cleanly.
TEST(Validator, AcceptedForms) {
  const std::string texts[] = {
      minimal_plus("[server]\nlisten = \"[::]:4000\"\n"),
      minimal_plus("[server]\nlisten = \"0.0.0.0:0\"\n"),
      minimal_plus("[server]\nlisten = \"localhost:65535\"\n"),
      minimal_plus("[server]\nmetrics_listen = \"127.0.0.1:9464\"\n"),
      minimal_plus("[server]\ntrusted_proxies = [\"10.0.0.0/8\", \"::1/128\", \"192.168.1.1\"]\n"),
      minimal_plus("[store]\nurl = \"sqlite://rolter.db\"\n"),
      minimal_plus("[store]\nurl = \"postgres://u@h/db\"\n"),
      minimal_plus("[store]\nurl = \"postgresql://u@h/db\"\n"),
      minimal_plus(R"(
[[providers]]
name = "b"
base_url = "http://b:1"
kv_events = { endpoint = "ipc:///run/kv.sock", replay_endpoint = "tcp://b:5558" }
)"),
      minimal_plus(
          "[[providers]]\nname = \"b\"\nbase_url = \"http://b:1\"\nload_source = \"local\"\n"),
      minimal_plus(R"(
[[providers]]
name = "b"
base_url = "http://b:1"
load_source = "engine_metrics"
metrics_interval_ms = 1
)"),
      minimal_plus(R"(
[[providers]]
name = "b"
base_url = "http://b:1"
tokenize = "engine"
tokenize_timeout_ms = 1
)"),
      minimal_plus("[[providers]]\nname = \"b\"\nbase_url = \"http://b:1\"\ntokenize = \"none\"\n"),
  };
  for (const auto& text : texts) {
    auto loaded = load(text);
    EXPECT_TRUE(loaded) << text << "\n" << (loaded ? "" : dump(loaded.error()));
  }
}

// A policy route whose targets all have weights is in target-weight mode (SPEC §7): valid, with
// no plugin table and no warning.
TEST(Validator, PolicyRouteWithEveryTargetWeighted) {
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
  EXPECT_TRUE(loaded->warnings.empty()) << dump(loaded->warnings);
  EXPECT_FALSE(loaded->config.routes.at(1).policy);
}

// A decision service on a route with one model has nothing to choose (SPEC §7: inactive with
// fewer than 2 distinct models): legal, but worth a warning at the plugin's table.
TEST(Validator, DecisionServiceWithOneModelWarns) {
  auto loaded = load(minimal_plus(R"(
[[providers]]
name = "jev"
kind = "decision_service"
base_url = "http://j:1"
[[routes]]
name = "p"
strategy = "policy"
[[routes.targets]]
provider = "a"
model = "m1"
[[routes.targets]]
provider = "a"
model = "m1"
[routes.policy.decision_service]
provider = "jev"
model = "d"
)"));
  ASSERT_TRUE(loaded) << dump(loaded.error());
  ASSERT_EQ(loaded->warnings.size(), 1u) << dump(loaded->warnings);
  EXPECT_EQ(loaded->warnings[0].key, "routes[1].policy.decision_service");
  EXPECT_NE(loaded->warnings[0].message.find("never asked"), std::string::npos);
}

// Duplicates of every kind in one file: each reported at the later definition, naming the line
// of the first.
TEST(Validator, DuplicateNamesNameTheFirstDefinition) {
  constexpr std::string_view kText = R"(
[[providers]]
name = "a"  # first provider
base_url = "http://127.0.0.1:8001"
[[providers]]
name = "a"  # <-
base_url = "http://127.0.0.1:8002"

[[routes]]
name = "r"  # first route
[[routes.targets]]
provider = "a"
model = "m"
[[routes]]
name = "r"  # <-
[[routes.targets]]
provider = "a"
model = "m"

[[keys]]
name = "k"  # first key
key_env = "K"
[[keys]]
name = "k"  # <-
key_env = "K2"
)";
  expect_errors_on_marked_lines(kText, {"providers[1].name", "routes[1].name", "keys[1].name"});
  const auto errors = errors_of(kText);
  ASSERT_EQ(errors.size(), 3u);
  const std::pair<std::string_view, std::string_view> expected[] = {
      {"duplicate provider name \"a\"", "first provider"},
      {"duplicate route name \"r\"", "first route"},
      {"duplicate key name \"k\"", "first key"},
  };
  for (size_t i = 0; i < errors.size(); ++i) {
    EXPECT_EQ(errors[i].message, std::string(expected[i].first) + " (first defined on line " +
                                     std::to_string(line_of(kText, expected[i].second)) + ")");
  }
}

TEST(Validator, ErrorsOfTwoChecksOnOneFile) {
  // A bad slug and an unknown member: both reported, in file order.
  expect_errors_on_marked_lines(
      minimal_plus(R"(
[[provider_groups]]
slug = "g"
[[provider_groups.members]]
provider = "a"
[[provider_groups]]
slug = "g"  # <-
[[provider_groups.members]]
provider = "zz"  # <-
)"),
      {"provider_groups[1].slug", "provider_groups[1].members[0].provider"});
  // A decision service used for traffic, by a route and by a group.
  expect_errors_on_marked_lines(
      R"(
[[providers]]
name = "jev"
kind = "decision_service"
base_url = "http://a:1"
[[routes]]
name = "r"
[[routes.targets]]
provider = "jev"  # <-
model = "m"
[[provider_groups]]
slug = "g"
[[provider_groups.members]]
provider = "jev"  # <-
)",
      {"routes[0].targets[0].provider", "provider_groups[0].members[0].provider"});
}

// The validator's warnings: a legal config that is probably not what was meant.
TEST(Validator, Warnings) {
  struct Case {
    std::string toml;
    std::vector<std::string> keys;  // of the warnings, in order, each on a marked line
  };
  const Case cases[] = {
      // No [[keys]]: about the whole file (line 0), so no marker.
      {"[[providers]]\nname = \"a\"\nbase_url = \"http://a:1\"\n", {"keys"}},
      // round_robin reads no weights; weight = 1 (the default) is not worth a warning.
      {minimal_plus(R"(
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
weight = 5  # <-
[[routes]]
name = "w"
strategy = "weighted"
[[routes.targets]]
provider = "a"
model = "m"
weight = 5
)"),
       {"routes[1].targets[1].weight"}},
      {minimal_plus(R"(
[[provider_groups]]
slug = "g"
strategy = "random"
[[provider_groups.members]]
provider = "a"
[[provider_groups.members]]
provider = "a"
weight = 2  # <-
)"),
       {"provider_groups[0].members[1].weight"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.toml);
    auto loaded = load(c.toml);
    ASSERT_TRUE(loaded) << dump(loaded.error());
    const auto& warnings = loaded->warnings;
    ASSERT_EQ(warnings.size(), c.keys.size()) << dump(warnings);
    const auto lines = lines_with(c.toml, kErrorMarker);
    for (size_t i = 0; i < warnings.size(); ++i) {
      EXPECT_EQ(warnings[i].key, c.keys[i]);
      if (c.keys[i] == "keys") {
        EXPECT_EQ(warnings[i].line, 0u);
        EXPECT_EQ(warnings[i].message, "no [[keys]]: the gateway is open to anyone");
      } else {
        ASSERT_LT(i, lines.size());
        EXPECT_EQ(warnings[i].line, lines[i]);
        EXPECT_NE(warnings[i].message.find("ignores weights"), std::string::npos);
      }
    }
  }
}

}  // namespace
}  // namespace rolter

namespace rolter {
namespace {

// A KV-event or LMCache strategy with no instance that has the source it reads is valid, but it
// only ever picks by load: `rolter check` says so, once, at the strategy.
TEST(Validator, TelemetryStrategiesWithoutTheirSource) {
  struct Case {
    std::string strategy;
    std::string provider_extra;  // appended to a second provider "b"
    bool warns;
  };
  const Case cases[] = {
      {"precise_cache_aware", "", true},
      {"kv_cost", "", true},
      {"lmcache_aware", "", true},
      {"precise_cache_aware", "[providers.kv_events]\nendpoint = \"tcp://127.0.0.1:5557\"\n", false},
      {"kv_cost", "[providers.kv_events]\nendpoint = \"tcp://127.0.0.1:5557\"\n", false},
      {"lmcache_aware", "[providers.lmcache]\nendpoint = \"http://127.0.0.1:9/occupancy\"\n", false},
      // The source a strategy reads must be its own: LMCache does not serve a KV strategy.
      {"precise_cache_aware", "[providers.lmcache]\nendpoint = \"http://127.0.0.1:9/o\"\n", true},
      {"round_robin", "", false},
  };
  for (const Case& c : cases) {
    const std::string toml = minimal_plus(
        "[[providers]]\nname = \"b\"\nbase_url = \"http://127.0.0.1:8002\"\n" + c.provider_extra +
        "[[routes]]\nname = \"t\"\nstrategy = \"" + c.strategy +
        "\"\n[[routes.targets]]\nprovider = \"a\"\nmodel = \"x\"\n[[routes.targets]]\n"
        "provider = \"b\"\nmodel = \"x\"\n");
    SCOPED_TRACE(toml);
    auto loaded = load(toml);
    ASSERT_TRUE(loaded) << dump(loaded.error());
    size_t found = 0;
    for (const auto& w : loaded->warnings) {
      if (w.message.find("falls back to least load") == std::string::npos) continue;
      ++found;
      EXPECT_EQ(w.key, "routes[1].strategy");
      EXPECT_NE(w.message.find(c.strategy), std::string::npos) << w.message;
    }
    EXPECT_EQ(found, c.warns ? 1u : 0u);
  }
}

}  // namespace
}  // namespace rolter
