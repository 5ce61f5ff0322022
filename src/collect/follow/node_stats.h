// Node stats: what a data-plane node tells the control plane about its traffic, every few
// seconds, for the fleet dashboard.
//
// node_stats_json() turns the node's Prometheus families (Metrics::registry().Collect()) into
//   {"node_id": "n1", "version": "0.9.0", "snapshot_version": 42, "at_ms": 1738324800000,
//    "routes": [{"route": "qwen3",
//                "requests": {"2xx": 10, "4xx": 0, "5xx": 1, "other": 0},
//                "retries": 0, "tokens_in": 0, "tokens_out": 0,
//                "duration_ms": H, "ttft_ms": H,
//                "targets": [{"target": "qwen-a/Qwen/Qwen3-8B", "picks": 6,
//                             "responses": {"2xx": 6, "4xx": 0, "5xx": 0, "other": 0},
//                             "duration_ms": H, "ttft_ms": H}]}],
//    "instances": [{"instance": "qwen-a@http://10.0.0.1:8000", "provider": "qwen-a",
//                   "base_url": "http://10.0.0.1:8000", "in_flight": 0, "breaker": "closed",
//                   "healthy": true, "parked": false, "kv_events": "live" | null,
//                   "lmcache_occupancy": 0.4 | null, "engine_load": 3 | null}]}
// where H = {"count": 11, "sum": 123.4, "p50": 9.8, "p90": 15, "p99": 20,
//            "buckets": [{"le": 5, "count": 3}, ..., {"le": null, "count": 11}]} (ms, cumulative).
// Every count is cumulative since the node started; the dashboard takes differences for rates
// and for percentiles over a window. "other" holds 1xx, 3xx and responses never sent. A route's
// requests include those answered before any target was picked (the "none" series), which are
// not listed as a target. Percentiles interpolate linearly within the histogram bucket that holds
// them (null without samples). Instance states name the gauges' values (breaker: closed, open,
// half_open; kv_events: disconnected, live, stale, gap; null where the gauge is absent).
//
// NodeStatsReporter posts that document to `{control_plane}/internal/node-stats` every interval
// on a thread of its own, with the node's headers (collect/follow/control_plane_client.h). A failed post
// is logged once per run of failures and never stops the reporter.
//
// Thread-safety: node_stats_json() is pure. NodeStatsReporter: start() and stop() from one
// thread; `snapshot_version` is called on the reporter's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace prometheus {
struct MetricFamily;
}

namespace rolter {

class LoadTracker;
class Metrics;

// Who reports, and when.
struct NodeStatsHeader {
  std::string node_id;
  std::string version;  // rolter's software version
  uint64_t snapshot_version = 0;
  int64_t at_ms = 0;  // Unix time of the reading
};

std::string node_stats_json(const NodeStatsHeader& header,
                            const std::vector<prometheus::MetricFamily>& families);

// The value below which a fraction `q` (0..1) of a histogram's samples fall, interpolated within
// its bucket; the highest finite bound when it falls in the +Inf bucket. `bounds` and `cumulative`
// are the histogram's buckets (the last bound +Inf). REQUIRES: cumulative.back() > 0.
double histogram_quantile(double q, const std::vector<double>& bounds,
                          const std::vector<uint64_t>& cumulative);

class NodeStatsReporter {
 public:
  struct Options {
    std::string control_plane;  // base URL, http:// or https://
    std::string node_id;
    std::string node_token;    // empty = no Authorization header
    std::string node_version;  // rolter's software version
    // The dashboard's rates are differences between reports; 5 s keeps them live without
    // loading the control plane with a fleet's posts.
    std::chrono::milliseconds interval{5000};
    std::chrono::milliseconds connect_timeout{2000};
    // Read before each report so the instance gauges are current; null = as they are.
    const LoadTracker* tracker = nullptr;
    // When set, each report is handed here instead of posted (the all-in-one `rolter serve`
    // gives its own control plane its node's reports); returns whether it was taken.
    std::function<bool(const std::string& node_id, const std::string& body)> deliver;
  };

  // `metrics` must outlive the object. `snapshot_version` returns the version being served (e.g.
  // SnapshotFollower::serving_version).
  NodeStatsReporter(Metrics& metrics, Options options, std::function<uint64_t()> snapshot_version);
  ~NodeStatsReporter();
  NodeStatsReporter(const NodeStatsReporter&) = delete;
  NodeStatsReporter& operator=(const NodeStatsReporter&) = delete;

  // Starts the thread; the first report goes one interval after the start. Once.
  void start();
  // Stops the thread, interrupting a post in progress. Idempotent.
  void stop();

  // Posts answered with a 2xx, and the others (failed connections included).
  uint64_t posts_ok() const;
  uint64_t posts_failed() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rolter
