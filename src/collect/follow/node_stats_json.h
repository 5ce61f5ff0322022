// Node stats: what a data-plane node tells the control plane about its traffic, every few
// seconds, for the fleet dashboard. The document, built from the node's metrics; the reporter
// that posts it is node_stats.h.
//
// node_stats_json() turns the node's Prometheus families (Metrics::collect()) into
//   {"node_id": "n1", "version": "0.9.0", "snapshot_version": 42, "at_ms": 1738324800000,
//    "started_at_ms": 1738320000000,
//    "routes": [{"route": "qwen3",
//                "requests": {"2xx": 10, "4xx": 0, "5xx": 1, "other": 0},
//                "retries": 0, "tokens_in": 0, "tokens_out": 0,
//                "duration_ms": H, "ttft_ms": H,
//                "targets": [{"target": "qwen-a/Qwen/Qwen3-8B", "picks": 6,
//                             "responses": {"2xx": 6, "4xx": 0, "5xx": 0, "other": 0},
//                             "duration_ms": H, "ttft_ms": H}],
//                "queue": {"depth": [0, 0, 0, 0, 2, 0, 0, 0],
//                          "shed": {"full": 0, "predicted_wait": 3, "expired": 1,
//                                   "max_ttft": 0}}}],
//    "instances": [{"endpoint": "qwen-a@http://10.0.0.1:8000", "provider": "qwen-a",
//                   "base_url": "http://10.0.0.1:8000", "in_flight": 0, "breaker": "closed",
//                   "healthy": true, "parked": false, "kv_events": "live" | null,
//                   "lmcache_occupancy": 0.4 | null, "engine_load": 3 | null}]}
// where H = {"count": 11, "sum": 123.4, "p50": 9.8, "p90": 15, "p99": 20,
//            "buckets": [{"le": 5, "count": 3}, ..., {"le": null, "count": 11}]} (ms, cumulative).
// Every count is cumulative since the node started; the dashboard takes differences for rates
// and for percentiles over a window. A reload that removes a route, target or endpoint removes its
// series (observe/series_lease.h), so a route's totals may then be lower than in the last report.
// "other" holds 1xx, 3xx and responses never sent. A route's requests include those answered before
// any target was picked (the "none" series), which are not listed as a target. Percentiles
// interpolate linearly within the histogram bucket that holds them (null without samples). Instance
// states are the state their state set marks (breaker: closed, open, half_open; kv_events:
// disconnected, live, stale, gap; null where the series are absent). "endpoint" is the value of the
// metrics' endpoint label. "queue" is there only for a route whose gateway queue (flow control) has
// queued or shed since the node started: the requests waiting now per band 0..7, and those shed per
// reason (cumulative, over bands).
//
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace prometheus {
struct MetricFamily;
}

namespace rolter {

// Who reports, and when.
struct NodeStatsHeader {
  std::string node_id;
  std::string version;  // rolter's software version
  uint64_t snapshot_version = 0;
  int64_t at_ms = 0;  // Unix time of the reading
  // Unix time the node's counters started from zero (its start): a report whose counters are
  // lower than the last one's with the same start lost series to a reload, not to a restart.
  int64_t started_at_ms = 0;
};

std::string node_stats_json(const NodeStatsHeader& header,
                            const std::vector<prometheus::MetricFamily>& families);

// The value below which a fraction `q` (0..1) of a histogram's samples fall, interpolated within
// its bucket; the highest finite bound when it falls in the +Inf bucket. `bounds` and `cumulative`
// are the histogram's buckets (the last bound +Inf). REQUIRES: cumulative.back() > 0.
double histogram_quantile(double q, const std::vector<double>& bounds,
                          const std::vector<uint64_t>& cumulative);

}  // namespace rolter
