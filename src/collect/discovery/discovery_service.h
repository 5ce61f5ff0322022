// DiscoveryService: the instances of every provider with `discover` (SPEC §17), looked up in DNS
// every discover_interval_ms on a background thread of its own, never a worker.
//
//   DiscoveryService discovery(store, found, {.changed = [&] { publisher.refresh_discovered(); }});
//   discovery.start();
//
// Each good lookup replaces the provider's set in `found` (fleet/discovered_instances.h); after
// every lookup `changed` is called, and publishes a snapshot when the set differs from the one
// the running snapshot was built with. An instance that appears takes traffic from that
// snapshot on. One that vanishes gets no new picks, while the requests it serves finish on the
// snapshot they started with. A lookup that fails, or finds no address, keeps the last good set;
// it is logged once per run of failures and counted (rolter_discovery_lookups_total).
//
// A lookup is given min(interval, 2 s). The loop follows the snapshot: a reload that adds, drops
// or changes a provider's `discover` is looked up (or forgotten) at once.
//
// Thread-safety: start() and stop() from one thread; `changed` runs on the service's thread.
#pragma once

#include <functional>
#include <memory>

#include "common/clock.h"
#include "fleet/discovered_instances.h"

namespace rolter {

class SnapshotStore;

class DiscoveryService {
 public:
  struct Options {
    std::function<void()> changed;  // after each lookup; may be empty
  };
  // `store`, `found` and `clock` must outlive the service.
  DiscoveryService(SnapshotStore& store, DiscoveredInstances& found, Options options,
                   const Clock& clock = default_clock());
  ~DiscoveryService();
  DiscoveryService(const DiscoveryService&) = delete;
  DiscoveryService& operator=(const DiscoveryService&) = delete;

  // Starts the thread; the first lookups begin at once.
  void start();
  // Stops the thread (after the lookup in progress, if any). Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rolter
