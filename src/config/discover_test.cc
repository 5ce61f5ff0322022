// SPEC §17 in the config: `discover` URLs, the resolver, the interval, and the templates a
// discovered instance's kv_events and lmcache tables are made from.

#include "config/discover.h"

#include <gtest/gtest.h>

#include <string>

#include "config/testing/load_fixture.h"

namespace rolter {
namespace {

TEST(ParseDiscover, AddressRecordsNeedAPort) {
  auto spec = parse_discover("dns://vllm-headless.ns.svc.cluster.local:8000");
  ASSERT_TRUE(spec) << spec.error();
  EXPECT_EQ(spec->kind, DiscoverSpec::Kind::kAddress);
  EXPECT_EQ(spec->name, "vllm-headless.ns.svc.cluster.local");
  EXPECT_EQ(spec->port, 8000);
  EXPECT_EQ(spec->path, "");

  auto with_path = parse_discover("dns://engines.test.:8001/v1/");
  ASSERT_TRUE(with_path) << with_path.error();
  EXPECT_EQ(with_path->name, "engines.test") << "the root's dot is dropped";
  EXPECT_EQ(with_path->path, "/v1");

  EXPECT_FALSE(parse_discover("dns://engines.test"));
  EXPECT_FALSE(parse_discover("dns://engines.test:0"));
  EXPECT_FALSE(parse_discover("dns://engines.test:65536"));
  EXPECT_FALSE(parse_discover("dns://engines.test:80x"));
  EXPECT_FALSE(parse_discover("dns://:8000"));
  EXPECT_FALSE(parse_discover("dns://bad..name:8000"));
  EXPECT_FALSE(parse_discover("dns://spa ce:8000"));
  EXPECT_FALSE(parse_discover("http://engines.test:8000"));
  EXPECT_FALSE(parse_discover(""));
}

TEST(ParseDiscover, SrvRecordsCarryTheirPorts) {
  auto spec = parse_discover("dns+srv://_http._tcp.vllm.ns.svc.cluster.local");
  ASSERT_TRUE(spec) << spec.error();
  EXPECT_EQ(spec->kind, DiscoverSpec::Kind::kSrv);
  EXPECT_EQ(spec->name, "_http._tcp.vllm.ns.svc.cluster.local");
  EXPECT_EQ(spec->port, 0);
  auto refused = parse_discover("dns+srv://_http._tcp.vllm:8000");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("no port"), std::string::npos) << refused.error();
}

TEST(ParseDiscoverResolver, AnAddressWithAnOptionalPort) {
  EXPECT_EQ(parse_discover_resolver("127.0.0.1:5353").value_or("?"), "127.0.0.1:5353");
  EXPECT_EQ(parse_discover_resolver("10.96.0.10").value_or("?"), "10.96.0.10:53");
  EXPECT_EQ(parse_discover_resolver("[::1]:5353").value_or("?"), "[::1]:5353");
  EXPECT_EQ(parse_discover_resolver("fd00::a").value_or("?"), "[fd00::a]:53");
  EXPECT_EQ(parse_discover_resolver("[fd00::a]").value_or("?"), "[fd00::a]:53");
  auto named = parse_discover_resolver("kube-dns:53");
  ASSERT_FALSE(named);
  EXPECT_NE(named.error().find("not an IP address"), std::string::npos) << named.error();
  EXPECT_FALSE(parse_discover_resolver("127.0.0.1:0"));
  EXPECT_FALSE(parse_discover_resolver(""));
}

TEST(DiscoveredInstance, TemplatesNameTheInstanceByItsAddress) {
  DiscoverConfig discover{.url = "dns://engines.test:8000/v1"};
  discover.kv_events =
      KvEventsConfig{.endpoint = "tcp://{host}:5557", .replay_endpoint = "tcp://{host}:5558"};
  discover.lmcache = LmcacheConfig{.endpoint = "http://{host}:9000/occupancy"};
  const InstanceConfig v4 = discovered_instance(discover, {.host = "10.0.0.7", .port = 8000});
  EXPECT_EQ(v4.base_url, "http://10.0.0.7:8000/v1");
  ASSERT_TRUE(v4.kv_events);
  EXPECT_EQ(v4.kv_events->endpoint, "tcp://10.0.0.7:5557");
  EXPECT_EQ(v4.kv_events->replay_endpoint, "tcp://10.0.0.7:5558");
  ASSERT_TRUE(v4.lmcache);
  EXPECT_EQ(v4.lmcache->endpoint, "http://10.0.0.7:9000/occupancy");

  const InstanceConfig v6 = discovered_instance(discover, {.host = "fd00::7", .port = 8001});
  EXPECT_EQ(v6.base_url, "http://[fd00::7]:8001/v1");
  EXPECT_EQ(v6.kv_events->endpoint, "tcp://[fd00::7]:5557");
}

std::string discovered_provider(const std::string& keys) {
  return R"(
[[providers]]
name = "vllm"
)" + keys +
         R"(
[[routes]]
name = "m"
[[routes.targets]]
provider = "vllm"
model = "x"
)";
}

TEST(DiscoverConfig, ReadWithItsDefaultsAndNoInstances) {
  auto loaded = load(discovered_provider(R"(discover = "dns://engines.test:8000"
[providers.kv_events]
endpoint = "tcp://{host}:5557"
)"));
  ASSERT_TRUE(loaded) << dump(loaded.error());
  const ProviderConfig& p = loaded->config.providers.at(0);
  ASSERT_TRUE(p.discover);
  EXPECT_EQ(p.discover->url, "dns://engines.test:8000");
  EXPECT_EQ(p.discover->interval_ms, 5000u);
  EXPECT_EQ(p.discover->resolver, "");
  ASSERT_TRUE(p.discover->kv_events) << "the provider's table is the instances' template";
  EXPECT_EQ(p.discover->kv_events->endpoint, "tcp://{host}:5557");
  EXPECT_TRUE(p.instances.empty()) << "instances come from lookups, not from the file";
}

// A KV-event strategy over a discovered provider reads the template's streams: `rolter check`
// must not warn that the strategy has no source, as it does when the provider has none.
TEST(DiscoverConfig, KvTemplateIsTheSourceOfAKvStrategy) {
  auto warned = [](const std::string& kv_table) {
    std::string toml = discovered_provider("discover = \"dns://engines.test:8000\"\n" + kv_table);
    toml.replace(toml.find("name = \"m\"\n"), 11, "name = \"m\"\nstrategy = \"precise_cache_aware\"\n");
    auto loaded = load(toml);
    EXPECT_TRUE(loaded) << dump(loaded.error());
    if (!loaded) return true;
    for (const auto& w : loaded->warnings) {
      if (w.message.find("falls back to least load") != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_FALSE(warned("[providers.kv_events]\nendpoint = \"tcp://{host}:5557\"\n"));
  EXPECT_TRUE(warned("")) << "without a template, every pick is by load";
}

TEST(DiscoverConfig, MistakesAreNamedByKey) {
  const ErrorCase cases[] = {
      {discovered_provider("discover = \"dns://engines.test\"  # <-"), "providers[0].discover",
       "needs the instances' port"},
      {discovered_provider("discover = \"dns://e.test:80\"\ndiscover_interval_ms = 100  # <-"),
       "providers[0].discover_interval_ms", "at least 500"},
      {discovered_provider(
           "discover = \"dns://e.test:80\"\ndiscover_resolver = \"dns.example\"  # <-"),
       "providers[0].discover_resolver", "not an IP address"},
      {discovered_provider(
           "base_url = \"http://127.0.0.1:1\"\ndiscover = \"dns://e.test:80\"  # <-"),
       "providers[0].discover", "not several"},
      {discovered_provider(
           "base_url = \"http://127.0.0.1:1\"\ndiscover_resolver = \"127.0.0.1\"  # <-"),
       "providers[0].discover_resolver", "only with discover"},
      {discovered_provider("discover = \"dns://e.test:80\"\n[providers.kv_events]\n"
                           "endpoint = \"tcp://10.0.0.1:5557\"  # <-"),
       "providers[0].kv_events.endpoint", "{host}"},
  };
  for (const auto& c : cases) expect_one_error(c);
}

}  // namespace
}  // namespace rolter
