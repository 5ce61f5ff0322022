// A disaggregated route in the snapshot (SPEC §18): its prefill step is a pool of its own with
// its default strategy, the route's candidates are its decode step's, and a prefill pick counted
// at once spreads simultaneous picks over idle workers (the case of one prefill worker taking
// every request because load was counted too late).
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "balance/strategy_names.h"
#include "config/loader.h"
#include "fleet/load_tracker.h"
#include "snapshot/snapshot.h"

namespace rolter {
namespace {

// Four prefill instances (each with a KV-event stream, or none) and one decode instance.
std::string fleet(bool kv_events) {
  std::string toml = R"(
[[providers]]
name = "p"
role = "prefill"
)";
  for (int i = 0; i < 4; ++i) {
    toml += "[[providers.instances]]\nbase_url = \"http://127.0.0.1:" + std::to_string(9100 + i) +
            "\"\n";
    if (kv_events) {
      toml += "kv_events = { endpoint = \"tcp://127.0.0.1:" + std::to_string(5500 + i) + "\" }\n";
    }
  }
  toml += R"(
[[providers]]
name = "d"
role = "decode"
base_url = "http://127.0.0.1:9200"

[[routes]]
name = "chat"
mode = "disaggregated"
min_uncached_tokens = 64
[routes.prefill]
targets = [{ provider = "p", model = "m" }]
[routes.decode]
targets = [{ provider = "d", model = "m" }]
)";
  return toml;
}

std::shared_ptr<const Snapshot> build(LoadTracker& tracker, const std::string& toml) {
  auto loaded = load_config_text(toml, "test.toml");
  EXPECT_TRUE(loaded.has_value());
  if (!loaded) return nullptr;
  auto built = build_snapshot(std::move(loaded->config), tracker, BalancerDeps{}, 1);
  EXPECT_TRUE(built.has_value()) << (built ? "" : built.error().front());
  return built ? *built : nullptr;
}

TEST(DisaggregatedSnapshot, ThePrefillStepIsAPoolOfItsOwn) {
  LoadTracker tracker;
  auto snapshot = build(tracker, fleet(false));
  ASSERT_NE(snapshot, nullptr);
  const auto route = snapshot->resolve("chat");
  ASSERT_TRUE(route.has_value());
  const RoutePool& pool = *route->pool;
  EXPECT_EQ(pool.strategy, strategy::kLeastKvUsage);
  ASSERT_EQ(pool.candidates.size(), 1u);
  EXPECT_EQ(pool.candidates[0].provider->name, "d");
  EXPECT_EQ(pool.min_uncached_tokens, 64u);
  ASSERT_NE(pool.prefill, nullptr);
  EXPECT_EQ(pool.prefill->name, "chat/prefill");
  // No KV events on the prefill engines: cache_aware.
  EXPECT_EQ(pool.prefill->strategy, strategy::kCacheAware);
  EXPECT_EQ(pool.prefill->candidates.size(), 4u);
  // The prefill step is not a route of its own.
  EXPECT_FALSE(snapshot->resolve("chat/prefill").has_value());
  for (const auto& p : snapshot->pools()) EXPECT_NE(p->name, "chat/prefill");
}

TEST(DisaggregatedSnapshot, KvEventsMakeThePrefillDefaultPreciseCacheAware) {
  LoadTracker tracker;
  auto snapshot = build(tracker, fleet(true));
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(snapshot->resolve("chat")->pool->prefill->strategy, strategy::kPreciseCacheAware);
}

// 100 picks at once from 4 threads over 4 idle prefill workers, each counted against its worker
// as soon as it is made (as the forwarder does, before step 1 is sent) and held until all are
// made: every worker gets 25 ± 3.
TEST(DisaggregatedSnapshot, PicksCountedAtThePickSpreadOverIdleWorkers) {
  LoadTracker tracker;
  auto snapshot = build(tracker, fleet(false));
  ASSERT_NE(snapshot, nullptr);
  const RoutePool& prefill = *snapshot->resolve("chat")->pool->prefill;
  const Loads loads = prefill.loads();
  std::array<std::atomic<int>, 4> picked{};
  std::atomic<int> ready{0};
  std::vector<std::unique_ptr<InFlightGuard>> held(100);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < 4) {
      }
      for (int k = 0; k < 25; ++k) {
        // A distinct long prompt per request: no cache hit anywhere.
        const std::string prompt = "request " + std::to_string(t * 25 + k) + " " +
                                   std::string(512, static_cast<char>('a' + (t * 25 + k) % 26));
        RouteContext ctx;
        ctx.prompt = prompt;
        ctx.prompt_len = prompt.size();
        const auto pick = prefill.balancer->pick(ctx, loads);
        ASSERT_TRUE(pick.has_value());
        held[t * 25 + k] = std::make_unique<InFlightGuard>(*prefill.candidates[*pick].state);
        picked[*pick].fetch_add(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_GE(picked[i].load(), 22) << "worker " << i;
    EXPECT_LE(picked[i].load(), 28) << "worker " << i;
    EXPECT_EQ(loads[i], static_cast<uint32_t>(picked[i].load()));
  }
}

}  // namespace
}  // namespace rolter
