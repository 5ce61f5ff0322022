// HealthChecker: active health checks of every instance whose provider sets `health_path`
// (SPEC §8, [health]).
//
// Runs on its own thread and event loop, so checks never compete with requests for a worker.
// Every `interval_ms` it sends `GET <base_url><health_path>` (timeout `timeout_ms`) on a fresh
// connection; a 2xx is a success. Results update the instance's InstanceHealth in the
// LoadTracker: unhealthy after `unhealthy_threshold` failures in a row, healthy again after
// `healthy_threshold` successes. Each published snapshot restarts the checks with its instances
// and settings.
//
// Thread-safety: start() and stop() from one thread; the snapshot subscription is thread-safe.
#pragma once

#include <memory>
#include <thread>

#include "snapshot/snapshot_store.h"

namespace rolter {

class HealthChecker {
 public:
  explicit HealthChecker(SnapshotStore& store);
  ~HealthChecker();

  void start();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
};

}  // namespace rolter
