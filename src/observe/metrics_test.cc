#include "observe/metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rolter {
namespace {

// A fleet of fixed readings.
class FakeFleet : public FleetView {
 public:
  std::vector<InstanceReading> instances;
  std::vector<AdaptivePicksReading> picks;

  void for_each_instance(FunctionRef<void(const InstanceReading&)> fn) const override {
    for (const auto& r : instances) fn(r);
  }
  void for_each_adaptive_picks(FunctionRef<void(const AdaptivePicksReading&)> fn) const override {
    for (const auto& r : picks) fn(r);
  }
};

bool has_line(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(MetricsTest, ResponsesByClassAndByExactStatus) {
  Metrics metrics;
  FakeFleet fleet;
  SeriesLease lease;
  const auto c = metrics.candidate("m", "random", "p/m", lease);
  Metrics::count_response(c, 200);
  Metrics::count_response(c, 429);
  Metrics::count_response(c, 201);  // no series of its own: "other"
  Metrics::count_response(c, 0);    // never sent
  const std::string text = metrics.render(fleet);
  for (const char* line : {
           R"(rolter_requests_total{code_class="2xx",route="m",target="p/m"} 2)",
           R"(rolter_requests_total{code_class="4xx",route="m",target="p/m"} 1)",
           R"(rolter_requests_total{code_class="other",route="m",target="p/m"} 1)",
           R"(rolter_requests_by_code_total{code="200",route="m"} 1)",
           R"(rolter_requests_by_code_total{code="429",route="m"} 1)",
           R"(rolter_requests_by_code_total{code="503",route="m"} 0)",
           R"(rolter_requests_by_code_total{code="other",route="m"} 2)",
       }) {
    EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
  }
}

// Endpoint gauges come from the fleet at scrape time, for the endpoints a lease holds; the
// breaker is a state set.
TEST(MetricsTest, EndpointStateForLeasedEndpointsOnly) {
  Metrics metrics;
  FakeFleet fleet;
  fleet.instances = {{.instance = "a@http://h:1", .in_flight = 2, .breaker = 2, .parked = true},
                     {.instance = "gone@http://h:2", .in_flight = 5}};
  SeriesLease lease;
  Metrics::count_park(metrics.endpoint("a@http://h:1", lease), Metrics::ParkReason::kRateLimited);
  const std::string text = metrics.render(fleet);
  for (const char* line : {
           R"(rolter_in_flight{endpoint="a@http://h:1"} 2)",
           R"(rolter_endpoint_parked{endpoint="a@http://h:1"} 1)",
           R"(rolter_endpoint_healthy{endpoint="a@http://h:1"} 1)",
           R"(rolter_breaker_state{endpoint="a@http://h:1",state="closed"} 0)",
           R"(rolter_breaker_state{endpoint="a@http://h:1",state="open"} 0)",
           R"(rolter_breaker_state{endpoint="a@http://h:1",state="half_open"} 1)",
           R"(rolter_parks_total{endpoint="a@http://h:1",reason="429"} 1)",
           R"(rolter_parks_total{endpoint="a@http://h:1",reason="refused"} 0)",
       }) {
    EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
  }
  EXPECT_EQ(text.find("gone@"), std::string::npos) << "no lease names it";
  EXPECT_EQ(text.find("instance="), std::string::npos) << "Prometheus owns that label";
  lease.release();
  EXPECT_EQ(metrics.render(fleet).find("a@http://h:1"), std::string::npos);
}

TEST(MetricsTest, KvEventStateIsAStateSet) {
  Metrics metrics;
  FakeFleet fleet;
  SeriesLease lease;
  const auto kv = metrics.kv_events("a@http://h:1", lease);
  Metrics::sync_kv_events(kv, {.state = 2, .events = 7});
  const std::string text = metrics.render(fleet);
  for (const char* line : {
           R"(rolter_kv_events_state{endpoint="a@http://h:1",state="disconnected"} 0)",
           R"(rolter_kv_events_state{endpoint="a@http://h:1",state="live"} 0)",
           R"(rolter_kv_events_state{endpoint="a@http://h:1",state="stale"} 1)",
           R"(rolter_kv_events_state{endpoint="a@http://h:1",state="gap"} 0)",
           R"(rolter_kv_events_total{endpoint="a@http://h:1"} 7)",
       }) {
    EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
  }
}

// An adaptive route's series exist while a lease holds them; the sampler's score and the fleet's
// pick counts land only there.
TEST(MetricsTest, AdaptiveSeriesFollowTheirLease) {
  Metrics metrics;
  FakeFleet fleet;
  fleet.picks = {{.route = "m", .decision = "blend", .total = 4},
                 {.route = "m", .target = "p/m", .decision = "blend", .total = 4},
                 {.route = "old", .decision = "blend", .total = 9}};
  SeriesLease lease;
  metrics.adaptive_route("m", lease);
  metrics.adaptive_target("m", "p/m", "p/m#1", lease);
  metrics.set_adaptive_score("m", "p/m#1", 0.5);
  metrics.set_adaptive_score("old", "q/m", 0.7);
  const std::string text = metrics.render(fleet);
  for (
      const char* line : {
          R"(rolter_adaptive_routing_decisions_total{decision="blend",route="m"} 4)",
          R"(rolter_adaptive_routing_target_picks_total{decision="blend",route="m",target="p/m"} 4)",
          R"(rolter_adaptive_routing_target_score{route="m",target="p/m#1"} 0.5)",
      }) {
    EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
  }
  EXPECT_EQ(text.find(R"(route="old")"), std::string::npos) << text;
}

TEST(MetricsTest, RatiosAndProcessMetrics) {
  Metrics metrics;
  FakeFleet fleet;
  fleet.instances = {{.instance = "a@http://h:1", .lmcache_occupancy = 0.25}};
  SeriesLease lease;
  Metrics::count_engine_scrape(metrics.engine("a@http://h:1", lease),
                               {.ok = true, .gpu_cache_usage = 0.5, .prefix_cache_hits = 3});
  metrics.lmcache("a@http://h:1", lease);
  const std::string text = metrics.render(fleet);
  for (const char* line : {
           R"(rolter_engine_gpu_cache_usage_ratio{endpoint="a@http://h:1"} 0.5)",
           R"(rolter_engine_prefix_cache_hits_total{endpoint="a@http://h:1"} 3)",
           R"(rolter_lmcache_occupancy_ratio{endpoint="a@http://h:1"} 0.25)",
           R"(# TYPE process_cpu_seconds_total counter)",
           R"(# TYPE process_resident_memory_bytes gauge)",
           R"(# TYPE process_open_fds gauge)",
           R"(# TYPE process_start_time_seconds gauge)",
       }) {
    EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
  }
}

}  // namespace
}  // namespace rolter
