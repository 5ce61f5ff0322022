// AdaptiveTelemetry: every period (15 s in the product), a sample of every adaptive route of the
// current snapshot (SPEC §6.10): per target the blended score, its components, the raw signals,
// picks and seconds since the last pick, plus the route's decision split and the sanitised policy.
//
// Each tick it sets rolter_adaptive_routing_target_score{model,target} and, when a control plane
// is configured, POSTs the samples as one JSON document to
// `{control_plane}/internal/adaptive-telemetry` with the node token (`Authorization: Bearer`) and
// `x-rolter-node-id`. A failed post is logged (once per run of failures) and counted; the next
// tick tries again. Without a control plane nothing is sent; the gauges still follow.
//
// The pieces: collect_adaptive_samples() reads a snapshot (pure but for the clock's reading) and
// adaptive_telemetry_json() encodes (adaptive_telemetry_json.h); AdaptiveTelemetry is the thin I/O
// loop on its own thread (a BackgroundLoop), posting with one_shot().
// Sampling reads only atomics and the route states' locks: the pick path pays nothing for it
// beyond what AdaptiveRouteState documents.
//
// Thread-safety: start() and stop() from one thread; the loop runs on the object's own thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collect/adaptive_telemetry/adaptive_telemetry_json.h"
#include "common/clock.h"

namespace rolter {

class SnapshotStore;

class AdaptiveTelemetry {
 public:
  struct Options {
    std::string control_plane;  // base URL; empty = do not send
    std::string node_id;
    std::string node_token;  // empty = no Authorization header
    // When set, each document goes here instead of being posted (the all-in-one `rolter serve`
    // gives its own control plane its samples); returns whether it was taken.
    std::function<bool(const std::string& node_id, const std::string& body)> deliver;
    // SPEC §6.10: every 15 s. A parameter so tests can run fast.
    std::chrono::milliseconds interval{15000};
  };

  // `store` and `clock` must outlive the object.
  AdaptiveTelemetry(SnapshotStore& store, Options options, const Clock& clock = default_clock());
  ~AdaptiveTelemetry();
  AdaptiveTelemetry(const AdaptiveTelemetry&) = delete;
  AdaptiveTelemetry& operator=(const AdaptiveTelemetry&) = delete;

  // Starts the thread; the first sample is taken one interval after the start.
  void start();
  // Stops the thread. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rolter
