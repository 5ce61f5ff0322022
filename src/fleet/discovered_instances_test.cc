// DiscoveredInstances: sets replace, compare and version; apply() fills a config's discovered
// providers and leaves the others alone.

#include "fleet/discovered_instances.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

Config two_providers() {
  Config config;
  ProviderConfig fixed;
  fixed.name = "fixed";
  fixed.instances.push_back(InstanceConfig{.base_url = "http://127.0.0.1:9"});
  ProviderConfig found;
  found.name = "vllm";
  found.discover = DiscoverConfig{.url = "dns://engines.test:8000"};
  found.discover->kv_events = KvEventsConfig{.endpoint = "tcp://{host}:5557"};
  config.providers = {fixed, found};
  return config;
}

TEST(DiscoveredInstances, ASetChangesOnlyWhenItsAddressesDo) {
  DiscoveredInstances found;
  EXPECT_EQ(found.generation(), 0u);
  EXPECT_TRUE(found.set("vllm", "dns://engines.test:8000",
                        {{"10.0.0.2", 8000}, {"10.0.0.1", 8000}, {"10.0.0.2", 8000}}));
  EXPECT_EQ(found.generation(), 1u);
  EXPECT_EQ(found.get("vllm", "dns://engines.test:8000"),
            (std::vector<DiscoveredAddress>{{"10.0.0.1", 8000}, {"10.0.0.2", 8000}}))
      << "sorted, each address once";
  EXPECT_FALSE(
      found.set("vllm", "dns://engines.test:8000", {{"10.0.0.2", 8000}, {"10.0.0.1", 8000}}))
      << "the same set in another order is no change";
  EXPECT_EQ(found.generation(), 1u);
  EXPECT_TRUE(found.set("vllm", "dns://engines.test:8000", {{"10.0.0.1", 8000}}));
  EXPECT_EQ(found.generation(), 2u);
  EXPECT_TRUE(found.get("vllm", "dns://other.test:8000").empty()) << "keyed by URL too";
  found.forget("vllm", "dns://engines.test:8000");
  EXPECT_EQ(found.generation(), 3u);
  EXPECT_TRUE(found.get("vllm", "dns://engines.test:8000").empty());
  found.forget("vllm", "dns://engines.test:8000");
  EXPECT_EQ(found.generation(), 3u) << "forgetting nothing changes nothing";
}

TEST(DiscoveredInstances, ApplyFillsDiscoveredProvidersOnly) {
  DiscoveredInstances found;
  Config before = two_providers();
  EXPECT_EQ(found.apply(before), 0u);
  EXPECT_TRUE(before.providers[1].instances.empty()) << "no lookup yet: no instances";
  ASSERT_EQ(before.providers[0].instances.size(), 1u);

  found.set("vllm", "dns://engines.test:8000", {{"10.0.0.1", 8000}, {"fd00::2", 8000}});
  Config config = two_providers();
  EXPECT_EQ(found.apply(config), 1u);
  EXPECT_EQ(config.providers[0].instances.at(0).base_url, "http://127.0.0.1:9");
  const auto& instances = config.providers[1].instances;
  ASSERT_EQ(instances.size(), 2u);
  EXPECT_EQ(instances[0].base_url, "http://10.0.0.1:8000");
  EXPECT_EQ(instances[0].kv_events->endpoint, "tcp://10.0.0.1:5557");
  EXPECT_EQ(instances[1].base_url, "http://[fd00::2]:8000");

  // A config whose instances were filled before (a snapshot's copy) is filled afresh.
  found.set("vllm", "dns://engines.test:8000", {{"10.0.0.3", 8000}});
  EXPECT_EQ(found.apply(config), 2u);
  ASSERT_EQ(config.providers[1].instances.size(), 1u);
  EXPECT_EQ(config.providers[1].instances[0].base_url, "http://10.0.0.3:8000");
}

}  // namespace
}  // namespace rolter
