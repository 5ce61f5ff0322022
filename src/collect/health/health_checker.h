// HealthChecker: active health checks of every instance whose provider sets `health_path`
// (SPEC §8, [health]).
//
// Runs on its own BackgroundLoop, so checks never compete with requests for a worker. Every
// `interval_ms` it sends `GET <base_url><health_path>` (timeout `timeout_ms`) on a fresh
// connection; a 2xx is a success. Each instance's HealthProbe (health_probe.h) turns the answers
// into its InstanceHealth in the LoadTracker: unhealthy after `unhealthy_threshold` failures in a
// row, healthy again after `healthy_threshold` successes. A published snapshot updates the
// checked instances and their settings; an instance that keeps its check keeps its counts, and
// one that loses it is healthy again at once.
//
// Thread-safety: start() and stop() from one thread.
#pragma once

#include <memory>

#include "common/clock.h"

namespace rolter {

class SnapshotStore;

class HealthChecker {
 public:
  // `store` and `clock` must outlive the checker.
  explicit HealthChecker(SnapshotStore& store, const Clock& clock = default_clock());
  ~HealthChecker();
  HealthChecker(const HealthChecker&) = delete;
  HealthChecker& operator=(const HealthChecker&) = delete;

  // Starts the checker's thread. The first tick reads the current snapshot at once.
  void start();
  // Stops the thread. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rolter
