// Flow control's keys (SPEC §19): [queue], a provider's saturation bounds, the priorities of
// routes, keys and teams; what they read into, their defaults, and errors named by key.
#include <gtest/gtest.h>

#include <string>

#include "config/testing/load_fixture.h"

namespace rolter {
namespace {

TEST(FlowConfig, DefaultsLeaveFlowControlOff) {
  auto loaded = load(minimal_plus(""));
  ASSERT_TRUE(loaded) << dump(loaded.error());
  const Config& c = loaded->config;
  EXPECT_EQ(c.queue.max_requests, 1024u);
  EXPECT_EQ(c.queue.max_wait_ms, 30000u);
  EXPECT_FALSE(c.queue.fair_preempt);
  EXPECT_EQ(c.queue.fair_reserve, 0u);
  EXPECT_TRUE(c.queue.bands.empty());
  EXPECT_FALSE(c.providers[0].max_in_flight_per_instance);
  EXPECT_FALSE(c.providers[0].max_waiting_per_instance);
  EXPECT_FALSE(c.routes[0].priority);
  EXPECT_FALSE(c.keys[0].priority);
  EXPECT_FALSE(c.keys[0].max_priority);
}

TEST(FlowConfig, ReadsEveryKey) {
  auto loaded = load(R"(
[[providers]]
name = "a"
base_url = "http://127.0.0.1:8001"
load_source = "engine_metrics"
max_in_flight_per_instance = 8
max_waiting_per_instance = 0

[[routes]]
name = "m"
priority = 2
[[routes.targets]]
provider = "a"
model = "m1"

[[keys]]
name = "k"
key_env = "K"
team = "t"
priority = 6
max_priority = 7

[[teams]]
name = "t"
priority = 1

[queue]
max_requests = 0
max_wait_ms = 500
fair_preempt = true
fair_reserve = 3

[[queue.bands]]
band = 6
preempt = true
max_ttft_ms = 1500

[[queue.bands]]
band = 1
)");
  ASSERT_TRUE(loaded) << dump(loaded.error());
  const Config& c = loaded->config;
  EXPECT_EQ(c.providers[0].max_in_flight_per_instance, 8u);
  EXPECT_EQ(c.providers[0].max_waiting_per_instance, 0u);
  EXPECT_EQ(c.routes[0].priority, 2u);
  EXPECT_EQ(c.keys[0].priority, 6u);
  EXPECT_EQ(c.keys[0].max_priority, 7u);
  EXPECT_EQ(c.teams[0].priority, 1u);
  EXPECT_EQ(c.queue.max_requests, 0u);
  EXPECT_EQ(c.queue.max_wait_ms, 500u);
  EXPECT_TRUE(c.queue.fair_preempt);
  EXPECT_EQ(c.queue.fair_reserve, 3u);
  ASSERT_EQ(c.queue.bands.size(), 2u);
  EXPECT_EQ(c.queue.bands[0].band, 6u);
  EXPECT_EQ(c.queue.bands[0].max_ttft_ms, 1500u);
  EXPECT_TRUE(c.queue.bands[0].preempt);
  EXPECT_EQ(c.queue.bands[1].band, 1u);
  EXPECT_FALSE(c.queue.bands[1].preempt);
  EXPECT_FALSE(c.queue.bands[1].max_ttft_ms);
}

std::string provider_with(std::string_view extra) {
  std::string text(kMinimal);
  const std::string anchor = "base_url = \"http://127.0.0.1:8001\"\n";
  text.insert(text.find(anchor) + anchor.size(), std::string(extra));
  return text;
}

std::string route_with(std::string_view extra) {
  std::string text(kMinimal);
  const std::string anchor = "name = \"m\"\n";
  text.insert(text.find(anchor) + anchor.size(), std::string(extra));
  return text;
}

TEST(FlowConfig, ErrorsNameTheKey) {
  const ErrorCase cases[] = {
      {minimal_plus("priority = 8  # <-\n"), "keys[0].priority", ""},
      {minimal_plus("max_priority = -1  # <-\n"), "keys[0].max_priority", ""},
      {minimal_plus("priority = \"high\"  # <-\n"), "keys[0].priority", "expected integer"},
      {minimal_plus("[[teams]]\nname = \"t\"\npriority = 9  # <-\n"), "teams[0].priority", ""},
      {route_with("priority = 10  # <-\n"), "routes[0].priority", ""},
      {provider_with("max_in_flight_per_instance = 0  # <-\n"),
       "providers[0].max_in_flight_per_instance", ""},
      {provider_with("max_waiting_per_instance = 2  # <-\n"),
       "providers[0].max_waiting_per_instance", "needs load_source = \"engine_metrics\""},
      {minimal_plus("[queue]\nmax_wait_ms = 0  # <-\n"), "queue.max_wait_ms", ""},
      {minimal_plus("[queue]\nmax_requests = -3  # <-\n"), "queue.max_requests", ""},
      {minimal_plus("[queue]\nbands = 3  # <-\n"), "queue.bands", ""},
      {minimal_plus("[queue]\nfair_reserve = -1  # <-\n"), "queue.fair_reserve", ""},
      {minimal_plus("[queue]\nfair_reserve = 100000  # <-\n"), "queue.fair_reserve", ""},
      {minimal_plus("[[queue.bands]]\nband = 8  # <-\n"), "queue.bands[0].band", ""},
      {minimal_plus("[[queue.bands]]\nband = 6\nmax_ttft_ms = 0  # <-\n"),
       "queue.bands[0].max_ttft_ms", ""},
      {minimal_plus("[[queue.bands]]\nband = 6\npreempt = 1  # <-\n"), "queue.bands[0].preempt",
       "expected boolean"},
      {minimal_plus("[[queue.bands]]\nband = 6\nreserve = 2  # <-\n"), "queue.bands[0].reserve",
       "unknown"},
      {minimal_plus("[[queue.bands]]\nband = 6\n[[queue.bands]]\nband = 6  # <-\n"),
       "queue.bands[1].band", "configured twice"},
  };
  for (const auto& c : cases) expect_one_error(c);
}

}  // namespace
}  // namespace rolter
