// KvEventService: keeps one KV-event subscriber running for every instance the current snapshot
// configures with kv_events (SPEC §6.8), and their metrics up to date.
//
// Every tick (kTick) its loop (a BackgroundLoop) reads the current snapshot. For each provider instance
// with a kv_events table it wants a KvSubscriber (kv_subscriber.h) writing that instance's
// KvResidency (in the LoadTracker's InstanceState, so the index survives reloads). A new instance
// gets one; an instance that left, or whose kv_events table changed, has its subscriber stopped
// (and a new one started when the table only changed). A stopped subscriber leaves its instance
// disconnected and not subscribed: the index keeps its blocks but no pick trusts them, and a new
// subscriber starts from nothing. An engine named by several providers gets one subscriber per
// instance: each InstanceState has its own index. The same tick copies each subscribed instance's
// stream state and counters into rolter_kv_events_* (observe/metrics.h).
//
// Thread-safety: start() and stop() from one thread (the owner's). Subscribers run on threads of
// their own; workers only read the KvResidency atomics and index.
//
//   KvEventService kv_events(store);
//   kv_events.start();
//   ...
//   kv_events.stop();
#pragma once

#include <memory>

#include "common/clock.h"

namespace rolter {

class SnapshotStore;

class KvEventService {
 public:
  // `store` and `clock` must outlive the service. The clock times staleness.
  explicit KvEventService(SnapshotStore& store, const Clock& clock = default_clock());
  ~KvEventService();
  KvEventService(const KvEventService&) = delete;
  KvEventService& operator=(const KvEventService&) = delete;

  // Starts the control thread; its first tick reads the current snapshot at once.
  void start();
  // Stops every subscriber and the thread. Idempotent.
  void stop();

  // Instances subscribed to now (for tests and the log).
  size_t subscribed() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rolter
