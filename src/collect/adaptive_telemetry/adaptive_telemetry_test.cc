#include "collect/adaptive_telemetry/adaptive_telemetry.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "config/loader.h"
#include "snapshot/snapshot.h"
#include "snapshot/snapshot_store.h"

namespace rolter {
namespace {

using Json = nlohmann::json;

std::string fleet_toml(bool enabled) {
  return std::string(R"(
[[providers]]
name = "fast"
base_url = "http://127.0.0.1:9001"
[providers.cost]
input = 0.1
output = 0.2

[[providers]]
name = "slow"
base_url = "http://127.0.0.1:9002"

[[routes]]
name = "m"
strategy = "adaptive"
[[routes.targets]]
provider = "fast"
model = "up"
[[routes.targets]]
provider = "slow"
model = "up"

[[routes]]
name = "plain"
strategy = "round_robin"
[[routes.targets]]
provider = "fast"
model = "up"

[adaptive_routing]
enabled = )") +
         (enabled ? "true" : "false") + R"(
min_samples = 2
exploration_ratio = 0.9
)";
}

class AdaptiveTelemetryTest : public ::testing::Test {
 protected:
  std::shared_ptr<const Snapshot> build(bool enabled) {
    auto loaded = load_config_text(fleet_toml(enabled), "test.toml");
    EXPECT_TRUE(loaded);
    auto snapshot =
        build_snapshot(std::move(loaded->config), tracker_, BalancerDeps{}, ++version_, &metrics_);
    EXPECT_TRUE(snapshot);
    return *snapshot;
  }
  const RoutePool& route(const Snapshot& snapshot) { return *snapshot.resolve("m")->pool; }

  LoadTracker tracker_;
  Metrics metrics_;
  uint64_t version_ = 0;
};

// The snapshot wires the sanitised policy (exploration clamped to 0.5) and the tracker's state
// into the adaptive route only; the state, and what the route learned, survive a reload, and the
// reloaded policy applies at the next pick.
TEST_F(AdaptiveTelemetryTest, SnapshotWiresPolicyAndStateThatSurvivesReloads) {
  auto first = build(true);
  EXPECT_EQ(first->adaptive_policy().exploration_ratio, 0.5);
  const RoutePool& pool = route(*first);
  ASSERT_NE(pool.adaptive_state, nullptr);
  EXPECT_EQ(first->resolve("plain")->pool->adaptive_state, nullptr);
  // Both unsampled: the first two picks are warm-up probes.
  for (int i = 0; i < 2; ++i) {
    const auto pick = pool.balancer->pick({}, pool.loads());
    ASSERT_TRUE(pick);
    pool.balancer->observe(*pick, {});
  }
  EXPECT_EQ(pool.adaptive_state->split()[size_t(AdaptiveDecision::kProbe)], 2u);

  auto second = build(false);
  const RoutePool& reloaded = route(*second);
  EXPECT_EQ(reloaded.adaptive_state, pool.adaptive_state);
  EXPECT_EQ(reloaded.adaptive_state->served(), 2u);
  ASSERT_TRUE(reloaded.balancer->pick({}, reloaded.loads()));
  EXPECT_EQ(reloaded.adaptive_state->split()[size_t(AdaptiveDecision::kFallback)], 1u);

  // The split is on /metrics, read from the tracker at scrape time.
  const std::string text = metrics_.render(tracker_);
  EXPECT_NE(text.find(R"(rolter_adaptive_routing_decisions_total{decision="probe",route="m"} 2)"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          R"(rolter_adaptive_routing_target_picks_total{decision="fallback",route="m",target=)"),
      std::string::npos)
      << text;
}

TEST_F(AdaptiveTelemetryTest, SamplesAndTheirJson) {
  auto snapshot = build(true);
  const RoutePool& pool = route(*snapshot);
  pool.candidates[0].state->evidence.latency.record(20);
  pool.balancer->pick({}, pool.loads());  // a probe of "slow", the one without a sample

  const auto samples = collect_adaptive_samples(*snapshot, default_clock().now());
  ASSERT_EQ(samples.size(), 1u);  // the round_robin route is not adaptive
  const AdaptiveRouteSample& s = samples[0];
  EXPECT_EQ(s.route, "m");
  EXPECT_FALSE(s.engaged);
  ASSERT_EQ(s.candidates.size(), 2u);
  EXPECT_EQ(s.candidates[0].target, "fast/up");
  EXPECT_EQ(s.candidates[1].target, "slow/up");

  const Json doc = Json::parse(adaptive_telemetry_json("node-7", samples));
  EXPECT_EQ(doc["node_id"], "node-7");
  const Json& r = doc["routes"][0];
  EXPECT_EQ(r["route"], "m");
  EXPECT_EQ(r["decisions"]["probe"], 1);
  EXPECT_EQ(r["decisions"]["blend"], 0);
  EXPECT_EQ(r["policy"]["exploration_ratio"], 0.5);
  EXPECT_EQ(r["policy"]["min_samples"], 2);
  const Json& fast = r["targets"][0];
  EXPECT_EQ(fast["signals"]["latency_ms"], 20.0);
  EXPECT_NEAR(fast["signals"]["price"].get<double>(), 0.3, 1e-9);
  EXPECT_EQ(fast["signals"]["in_flight"], 0);
  EXPECT_TRUE(fast["seconds_since_last_pick"].is_null());
  EXPECT_EQ(fast["picks"], 0);
  // Unknown latency and price score 0.5; the known ones 1.0 (all-equal over one value).
  EXPECT_EQ(fast["components"]["latency"], 1.0);
  const Json& slow = r["targets"][1];
  EXPECT_TRUE(slow["signals"]["latency_ms"].is_null());
  EXPECT_TRUE(slow["signals"]["price"].is_null());
  EXPECT_EQ(slow["components"]["latency"], 0.5);
  EXPECT_EQ(slow["components"]["cost"], 0.5);
  EXPECT_EQ(slow["picks"], 1);
  EXPECT_EQ(slow["picks_by_decision"]["probe"], 1);
  EXPECT_FALSE(slow["seconds_since_last_pick"].is_null());
  EXPECT_DOUBLE_EQ(fast["score"].get<double>(), 1.0 * 1 + 0.5 * 1 + 0.25 * 1);
}

// A control plane that refuses connections: each failed post is counted, the gauges still follow,
// and the sender keeps running. The period is short here; the product's is 15 s.
TEST_F(AdaptiveTelemetryTest, FailedPostsAreCountedAndNeverFatal) {
  SnapshotStore store;
  store.publish(build(true));
  // Port 1 on loopback: nothing listens there, so every connect is refused at once.
  AdaptiveTelemetry telemetry(store, {.control_plane = "http://127.0.0.1:1",
                                      .node_id = "n",
                                      .interval = std::chrono::milliseconds(10)});
  telemetry.start();
  // The error count in an exposition, 0 when absent.
  const auto failures = [](const std::string& text) {
    const std::string series = R"(rolter_adaptive_telemetry_posts_total{result="error"} )";
    const size_t at = text.find(series);
    return at == std::string::npos ? 0.0 : std::stod(text.substr(at + series.size()));
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::string text;
  while (std::chrono::steady_clock::now() < deadline) {
    text = metrics_.render(tracker_);
    if (failures(text) >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling, with a deadline
  }
  telemetry.stop();
  EXPECT_GE(failures(text), 2) << text;
  EXPECT_NE(text.find(R"(rolter_adaptive_routing_target_score{route="m",target="fast/up"})"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace rolter
