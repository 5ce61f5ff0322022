// LmcachePoller: each instance's LMCache occupancy, read from its lmcache.endpoint (SPEC §6.9),
// for the lmcache_aware strategy's lmcache_headroom scorer.
//
// For every instance with an `lmcache = { endpoint, refresh_secs, stale_secs }` table, a
// background thread sends `GET {endpoint}` (a full URL, which may differ from base_url) every
// refresh_secs and reads `{"occupancy": 0.42, "cache_available": true}`. A good poll stores both
// in the instance's LmcacheSignal (balance/lmcache_signal.h) and marks it fresh. A failed poll
// (connect error, timeout, non-200, a body that is not such an object) clears `fresh` at once, and
// so does a stale one, so the scorer falls back to neutral and least load decides.
//
// Timing per endpoint (lmcache_poll_timing()), from the smallest refresh_secs R and stale_secs S
// of the instances that name it:
//   timeout       min(R, 1 s): one poll ends before the next is due, and a dead endpoint does not
//                 hide behind a long wait
//   stale after   S without a good poll, as configured (S < R leaves the signal unusable for part
//                 of each interval)
// The timeout covers connect, request and response; a host name is resolved by the system
// resolver without it, and a poll stuck there is caught by the stale bound instead. A poll never
// overlaps the next: one still running when the next is due delays it.
//
// The pieces: polled_cache.h reads a body and holds the pure decision logic for one endpoint
// (what an outcome or its absence does to the signals), driven by an injected clock;
// LmcachePoller is a PollLoop policy on a BackgroundLoop, and one_shot() (upstream/) does each
// poll's I/O. Each tick the loop reads the
// current snapshot: only instances it names are polled, and an instance that leaves (or loses its
// lmcache table) stops being polled and loses `fresh`. An endpoint named by several instances is
// polled once, and the result applied to each.
//
// Thread-safety: start() and stop() from one thread.
#pragma once

#include <memory>

#include "collect/lmcache/polled_cache.h"
#include "common/clock.h"

namespace rolter {

class SnapshotStore;

class LmcachePoller {
 public:
  // `store` and `clock` must outlive the poller.
  explicit LmcachePoller(SnapshotStore& store, const Clock& clock = default_clock());
  ~LmcachePoller();
  LmcachePoller(const LmcachePoller&) = delete;
  LmcachePoller& operator=(const LmcachePoller&) = delete;

  // Starts the poller's thread. The first tick reads the current snapshot at once.
  void start();
  // Stops the thread; every polled instance loses `fresh`. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rolter
