// NodeStatsReporter: a data-plane node's traffic, posted to the control plane every few seconds
// for the fleet dashboard (the document: node_stats_json.h).
//
// NodeStatsReporter posts that document to `{control_plane}/internal/node-stats` every interval
// on a thread of its own, with the node's headers (collect/follow/control_plane_client.h). A
// failed post is logged once per run of failures and never stops the reporter.
//
// Thread-safety: start() and stop() from one thread; `snapshot_version` is called on the reporter's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "collect/follow/node_stats_json.h"

namespace rolter {

class LoadTracker;
class Metrics;

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
