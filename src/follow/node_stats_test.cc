#include "follow/node_stats.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <nlohmann/json.hpp>

#include <limits>

#include "follow/testing/scripted_control_plane.h"
#include "observe/metrics.h"

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
  const auto route = metrics.route("qwen3");
  const auto a = metrics.candidate("qwen3", "round_robin", "qwen-a/Qwen/Qwen3-8B");
  const auto b = metrics.candidate("qwen3", "round_robin", "qwen-b/Qwen/Qwen3-8B");
  const auto none = metrics.candidate("qwen3", "round_robin", "none");
  metrics.route("idle");
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
      .node_id = "node-1", .version = "1.2.3", .snapshot_version = 42, .at_ms = 1700000000123};
  const Json doc = Json::parse(node_stats_json(header, metrics.registry().Collect()));
  EXPECT_EQ(doc["node_id"], "node-1");
  EXPECT_EQ(doc["version"], "1.2.3");
  EXPECT_EQ(doc["snapshot_version"], 42);
  EXPECT_EQ(doc["at_ms"], 1700000000123);
  ASSERT_EQ(doc["routes"].size(), 2u);  // by name
  const Json& idle = doc["routes"][0];
  EXPECT_EQ(idle["route"], "idle");
  EXPECT_EQ(
      idle["duration_ms"],
      (Json{{"count", 0}, {"sum", 0.0}, {"p50", nullptr}, {"p90", nullptr}, {"p99", nullptr}}));
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
  const Json& t = r["ttft_ms"];
  EXPECT_EQ(t["count"], 1);
  EXPECT_DOUBLE_EQ(t["p50"].get<double>(), 300000.0);  // +Inf: the highest finite bound

  ASSERT_EQ(r["targets"].size(), 2u);  // "none" is in the route's totals only
  EXPECT_EQ(r["targets"][0],
            (Json{{"target", "qwen-a/Qwen/Qwen3-8B"},
                  {"picks", 7},
                  {"responses", {{"2xx", 6}, {"4xx", 1}, {"5xx", 0}, {"other", 1}}}}));
  EXPECT_EQ(r["targets"][1],
            (Json{{"target", "qwen-b/Qwen/Qwen3-8B"},
                  {"picks", 4},
                  {"responses", {{"2xx", 3}, {"4xx", 0}, {"5xx", 1}, {"other", 0}}}}));
}

// The reporter posts the document with the node's headers every interval; a failed post does not
// stop it.
TEST(NodeStatsReporterTest, PostsEveryIntervalAndSurvivesFailures) {
  ScriptedControlPlane cp;
  cp.set_fallback({.status = 202});
  cp.script({{.status = 500}});
  Metrics metrics;
  Metrics::count_response(metrics.candidate("m", "random", "p/m"), 200);
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
  EXPECT_EQ(doc["routes"][0]["requests"]["2xx"], 1);
  EXPECT_EQ(reporter.posts_failed(), 1u);
  EXPECT_GE(reporter.posts_ok(), 1u);
}

}  // namespace
}  // namespace rolter
