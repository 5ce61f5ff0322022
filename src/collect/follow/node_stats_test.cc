#include "collect/follow/node_stats.h"

#include <gtest/gtest.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <nlohmann/json.hpp>

#include <condition_variable>
#include <limits>
#include <mutex>

#include "collect/follow/testing/scripted_control_plane.h"
#include "fleet/load_tracker.h"
#include "observe/metrics.h"
#include "observe/queue_metrics.h"

namespace rolter {
namespace {

using Json = nlohmann::json;
using std::chrono::milliseconds;

TEST(HistogramQuantileTest, InterpolatesWithinTheBucket) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> bounds = {1, 2, 4, inf};
  const struct {
    std::vector<uint64_t> cumulative;
    double q;
    double want;
  } kCases[] = {
      {{10, 10, 10, 10}, 0.5, 0.5},  // all in the first bucket, which starts at 0
      {{0, 10, 10, 10}, 0.5, 1.5},   // all in (1, 2]
      {{0, 0, 4, 4}, 0.25, 2.5},     // a quarter into (2, 4]
      {{5, 5, 10, 10}, 0.9, 3.6},    // 4 of 5 into (2, 4]
      {{5, 5, 10, 10}, 0.5, 1.0},    // exactly the first bucket's bound
      {{0, 0, 0, 3}, 0.5, 4.0},      // in +Inf: the highest finite bound
      {{1, 1, 1, 100}, 0.99, 4.0},   // likewise
      {{0, 0, 4, 4}, 0.0, 2.0},      // q = 0: the bottom of the first bucket with samples
  };
  for (const auto& c : kCases) {
    EXPECT_DOUBLE_EQ(histogram_quantile(c.q, bounds, c.cumulative), c.want)
        << "q=" << c.q << " case starting " << c.cumulative[0];
  }
}

// Requests counted through Metrics' public methods come out per route and target, cumulative,
// with percentiles in milliseconds.
TEST(NodeStatsJsonTest, ReportsWhatMetricsCounted) {
  Metrics metrics;
  SeriesLease lease;
  const auto route = metrics.route("qwen3", lease);
  const auto a = metrics.candidate("qwen3", "round_robin", "qwen-a/Qwen/Qwen3-8B", lease);
  const auto b = metrics.candidate("qwen3", "round_robin", "qwen-b/Qwen/Qwen3-8B", lease);
  const auto none = metrics.candidate("qwen3", "round_robin", "none", lease);
  metrics.route("idle", lease);
  for (int i = 0; i < 7; ++i) Metrics::count_pick(a);
  for (int i = 0; i < 6; ++i) Metrics::count_response(a, 200);
  Metrics::count_response(a, 404);
  for (int i = 0; i < 4; ++i) Metrics::count_pick(b);
  for (int i = 0; i < 3; ++i) Metrics::count_response(b, 200);
  Metrics::count_response(b, 502);
  Metrics::count_response(none, 503);  // no target could be picked
  Metrics::count_response(a, 304);
  Metrics::count_retry(route);
  Metrics::count_tokens(route, 100, 40);
  Metrics::count_tokens(route, 20, std::nullopt);
  // Five in (2.5, 5] ms and five in (10, 25] ms.
  for (int i = 0; i < 5; ++i) Metrics::observe_seconds(route.duration, 0.003);
  for (int i = 0; i < 5; ++i) Metrics::observe_seconds(route.duration, 0.020);
  Metrics::observe_seconds(route.ttft, 500);  // above the top bucket (300 s)

  const NodeStatsHeader header{
      .node_id = "node-1",
      .version = "1.2.3",
      .snapshot_version = 42,
      .at_ms = 1700000000123,
      .started_at_ms = 1700000000000};
  const Json doc = Json::parse(node_stats_json(header, metrics.collect()));
  EXPECT_EQ(doc["node_id"], "node-1");
  EXPECT_EQ(doc["version"], "1.2.3");
  EXPECT_EQ(doc["snapshot_version"], 42);
  EXPECT_EQ(doc["at_ms"], 1700000000123);
  EXPECT_EQ(doc["started_at_ms"], 1700000000000);
  ASSERT_EQ(doc["routes"].size(), 2u);  // by name
  const Json& idle = doc["routes"][0];
  EXPECT_EQ(idle["route"], "idle");
  EXPECT_EQ(idle["duration_ms"]["count"], 0);
  EXPECT_EQ(idle["duration_ms"]["sum"], 0.0);
  for (const char* q : {"p50", "p90", "p99"}) EXPECT_TRUE(idle["duration_ms"][q].is_null()) << q;
  for (const auto& bucket : idle["duration_ms"]["buckets"]) EXPECT_EQ(bucket["count"], 0);
  EXPECT_EQ(idle["targets"], Json::array());

  const Json& r = doc["routes"][1];
  EXPECT_EQ(r["route"], "qwen3");
  EXPECT_EQ(r["requests"], (Json{{"2xx", 9}, {"4xx", 1}, {"5xx", 2}, {"other", 1}}));
  EXPECT_EQ(r["retries"], 1);
  EXPECT_EQ(r["tokens_in"], 120);
  EXPECT_EQ(r["tokens_out"], 40);
  const Json& d = r["duration_ms"];
  EXPECT_EQ(d["count"], 10);
  EXPECT_DOUBLE_EQ(d["sum"].get<double>(), 115.0);
  EXPECT_DOUBLE_EQ(d["p50"].get<double>(), 5.0);   // the top of (2.5, 5]
  EXPECT_DOUBLE_EQ(d["p90"].get<double>(), 22.0);  // 4/5 into (10, 25]
  EXPECT_DOUBLE_EQ(d["p99"].get<double>(), 24.7);
  // The buckets themselves, in ms and cumulative, ending with +Inf (null).
  const Json& buckets = d["buckets"];
  ASSERT_GE(buckets.size(), 3u);
  EXPECT_TRUE(buckets.back()["le"].is_null());
  EXPECT_EQ(buckets.back()["count"], 10);
  bool saw_five = false;
  for (const auto& bucket : buckets) {
    if (bucket["le"] == 5.0) {
      saw_five = true;
      EXPECT_EQ(bucket["count"], 5);
    }
  }
  EXPECT_TRUE(saw_five);
  const Json& t = r["ttft_ms"];
  EXPECT_EQ(t["count"], 1);
  EXPECT_DOUBLE_EQ(t["p50"].get<double>(), 300000.0);  // +Inf: the highest finite bound

  ASSERT_EQ(r["targets"].size(), 2u);  // "none" is in the route's totals only
  const Json& ta = r["targets"][0];
  EXPECT_EQ(ta["target"], "qwen-a/Qwen/Qwen3-8B");
  EXPECT_EQ(ta["picks"], 7);
  EXPECT_EQ(ta["responses"], (Json{{"2xx", 6}, {"4xx", 1}, {"5xx", 0}, {"other", 1}}));
  const Json& tb = r["targets"][1];
  EXPECT_EQ(tb["target"], "qwen-b/Qwen/Qwen3-8B");
  EXPECT_EQ(tb["picks"], 4);
  EXPECT_EQ(tb["responses"], (Json{{"2xx", 3}, {"4xx", 0}, {"5xx", 1}, {"other", 0}}));
  EXPECT_EQ(ta["duration_ms"]["count"], 0);
  EXPECT_TRUE(ta["ttft_ms"]["p50"].is_null());
}

// A route's gateway queue: what waits per band, what was shed per reason over bands; a route
// that never queued has no "queue" at all.
TEST(NodeStatsJsonTest, QueueDepthPerBandAndShedPerReason) {
  Metrics metrics;
  SeriesLease lease;
  metrics.route("chat", lease);
  metrics.route("calm", lease);
  const auto queue = QueueMetrics(metrics.registry(), metrics.series_table()).series("chat");
  queue->set_depth(4, 3);
  queue->set_depth(6, 1);
  queue->count_shed(1, "full");
  queue->count_shed(4, "full");
  queue->count_shed(1, "expired");
  const Json doc = Json::parse(node_stats_json({.node_id = "n"}, metrics.collect()));
  ASSERT_EQ(doc["routes"].size(), 2u);
  EXPECT_FALSE(doc["routes"][0].contains("queue")) << doc["routes"][0].dump();
  const Json& q = doc["routes"][1]["queue"];
  EXPECT_EQ(q["depth"], (Json{0, 0, 0, 0, 3, 0, 1, 0}));
  EXPECT_EQ(q["shed"], (Json{{"expired", 1}, {"full", 2}, {"max_ttft", 0}, {"predicted_wait", 0}}));
}

// Each target's own latency: what answered it, not the route's mix.
TEST(NodeStatsJsonTest, PercentilesPerTarget) {
  Metrics metrics;
  SeriesLease lease;
  const auto a = metrics.candidate("m", "random", "a/m", lease);
  const auto b = metrics.candidate("m", "random", "b/m", lease);
  const auto a_again = metrics.candidate("m", "random", "a/m", lease);  // a second instance of a
  for (int i = 0; i < 4; ++i) Metrics::observe_seconds(a.duration, 0.003);
  for (int i = 0; i < 4; ++i) Metrics::observe_seconds(a_again.duration, 0.003);
  for (int i = 0; i < 2; ++i) Metrics::observe_seconds(b.duration, 0.020);
  Metrics::observe_seconds(b.ttft, 0.004);
  const Json doc = Json::parse(node_stats_json({.node_id = "n"}, metrics.collect()));
  const Json& targets = doc["routes"][0]["targets"];
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0]["duration_ms"]["count"], 8);
  EXPECT_DOUBLE_EQ(targets[0]["duration_ms"]["p50"].get<double>(), 3.75);  // within (2.5, 5]
  EXPECT_EQ(targets[1]["duration_ms"]["count"], 2);
  EXPECT_GT(targets[1]["duration_ms"]["p50"].get<double>(), 10.0);
  EXPECT_EQ(targets[1]["ttft_ms"]["count"], 1);
  EXPECT_EQ(targets[0]["ttft_ms"]["count"], 0);
}

// Endpoints: their live state, named, from the gauges the tracker sets, for those some lease
// holds.
TEST(NodeStatsJsonTest, InstanceStates) {
  Metrics metrics;
  LoadTracker tracker;
  InstanceState& a = tracker.instance("qwen-a", "http://10.0.0.1:8000");
  InstanceState& b = tracker.instance("qwen-b", "http://10.0.0.2:8000");
  a.load.in_flight.store(3);
  b.health.breaker.store(1);
  b.health.healthy.store(false);
  b.health.parked_until.store(std::numeric_limits<int64_t>::max());
  tracker.instance("gone", "http://10.0.0.3:8000");  // no snapshot names it: not reported
  SeriesLease lease;
  metrics.endpoint(a.identity, lease);
  metrics.endpoint(b.identity, lease);
  Metrics::sync_kv_events(metrics.kv_events(a.identity, lease), {.state = 1});
  metrics.refresh(tracker);
  const Json doc = Json::parse(node_stats_json({.node_id = "n"}, metrics.collect()));
  ASSERT_EQ(doc["instances"].size(), 2u);
  EXPECT_EQ(doc["instances"][0], (Json{{"endpoint", "qwen-a@http://10.0.0.1:8000"},
                                       {"provider", "qwen-a"},
                                       {"base_url", "http://10.0.0.1:8000"},
                                       {"in_flight", 3},
                                       {"breaker", "closed"},
                                       {"healthy", true},
                                       {"parked", false},
                                       {"kv_events", "live"},
                                       {"lmcache_occupancy", nullptr},
                                       {"engine_load", nullptr}}));
  const Json& second = doc["instances"][1];
  EXPECT_EQ(second["provider"], "qwen-b");
  EXPECT_EQ(second["in_flight"], 0);
  EXPECT_EQ(second["breaker"], "open");
  EXPECT_EQ(second["healthy"], false);
  EXPECT_EQ(second["parked"], true);
  EXPECT_TRUE(second["kv_events"].is_null());  // no stream configured
}

// `deliver` takes the reports instead of a control plane: what `rolter serve` does for itself.
TEST(NodeStatsReporterTest, DeliversInsteadOfPosting) {
  Metrics metrics;
  LoadTracker tracker;
  SeriesLease lease;
  metrics.endpoint(tracker.instance("p", "http://10.0.0.9:1").identity, lease);
  tracker.instance("p", "http://10.0.0.9:1").load.in_flight.store(2);
  std::mutex mu;
  std::vector<std::pair<std::string, std::string>> got;
  std::condition_variable cv;
  NodeStatsReporter reporter(metrics,
                             {.node_id = "local",
                              .interval = milliseconds(20),
                              .tracker = &tracker,
                              .deliver =
                                  [&](const std::string& node, const std::string& body) {
                                    std::lock_guard lock(mu);
                                    got.emplace_back(node, body);
                                    cv.notify_all();
                                    return got.size() != 1;  // the first is refused
                                  }},
                             [] { return uint64_t{5}; });
  reporter.start();
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return got.size() >= 2; }));
  }
  reporter.stop();
  std::lock_guard lock(mu);
  EXPECT_EQ(got[0].first, "local");
  const Json doc = Json::parse(got[1].second);
  EXPECT_EQ(doc["snapshot_version"], 5);
  EXPECT_EQ(doc["instances"][0]["in_flight"], 2);  // refreshed from the tracker before reading
  EXPECT_EQ(reporter.posts_failed(), 1u);
  EXPECT_GE(reporter.posts_ok(), 1u);
}

// The reporter posts the document with the node's headers every interval; a failed post does not
// stop it.
TEST(NodeStatsReporterTest, PostsEveryIntervalAndSurvivesFailures) {
  ScriptedControlPlane cp;
  cp.set_fallback({.status = 202});
  cp.script({{.status = 500}});
  Metrics metrics;
  SeriesLease lease;
  Metrics::count_response(metrics.candidate("m", "random", "p/m", lease), 200);
  NodeStatsReporter reporter(metrics,
                             {.control_plane = cp.url(),
                              .node_id = "node-9",
                              .node_token = "tok",
                              .node_version = "2.0.0",
                              .interval = milliseconds(20)},
                             [] { return uint64_t{17}; });
  reporter.start();
  ASSERT_TRUE(cp.wait_requests(3));
  reporter.stop();

  const auto requests = cp.requests();
  for (const auto& request : requests) {
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.target, "/internal/node-stats");
    EXPECT_EQ(request.header("authorization"), "Bearer tok");
    EXPECT_EQ(request.header("x-rolter-node-id"), "node-9");
    EXPECT_EQ(request.header("x-rolter-node-version"), "2.0.0");
    EXPECT_EQ(request.header("content-type"), "application/json");
  }
  const Json doc = Json::parse(requests[1].body);
  EXPECT_EQ(doc["node_id"], "node-9");
  EXPECT_EQ(doc["snapshot_version"], 17);
  EXPECT_GT(doc["at_ms"].get<int64_t>(), 0);
  EXPECT_GT(doc["started_at_ms"].get<int64_t>(), 0);
  EXPECT_LE(doc["started_at_ms"].get<int64_t>(), doc["at_ms"].get<int64_t>());
  EXPECT_EQ(doc["routes"][0]["requests"]["2xx"], 1);
  EXPECT_EQ(reporter.posts_failed(), 1u);
  EXPECT_GE(reporter.posts_ok(), 1u);
}

}  // namespace
}  // namespace rolter
