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
// The pieces: read_lmcache_reading() reads a body; PolledCache is the pure decision logic for one
// endpoint (what an outcome or its absence does to the signals) on a PollSchedule (collect/loop/),
// driven by an injected clock; LmcachePoller is a PollLoop policy on a BackgroundLoop, and
// one_shot() (upstream/) does each poll's I/O. Each tick the loop reads the
// current snapshot: only instances it names are polled, and an instance that leaves (or loses its
// lmcache table) stops being polled and loses `fresh`. An endpoint named by several instances is
// polled once, and the result applied to each.
//
// Thread-safety: PolledCache is used by one thread (the poller's); it writes the LmcacheSignal
// atomics that workers read. LmcachePoller: start() and stop() from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "balance/lmcache_signal.h"
#include "collect/loop/poll_schedule.h"
#include "common/clock.h"

namespace rolter {

class SnapshotStore;

// What one poll read from an LMCache endpoint.
struct LmcacheReading {
  double occupancy = 0;  // finite; the scorer decides what an out-of-range value means
  bool cache_available = false;
  bool operator==(const LmcacheReading&) const = default;
};

// Reads an endpoint's body: a JSON object with a finite number "occupancy" and a boolean
// "cache_available" (other members are ignored). nullopt for anything else. Never throws.
std::optional<LmcacheReading> read_lmcache_reading(std::string_view body);

// A poll's interval, timeout and staleness bound from an lmcache table (the table above).
// REQUIRES: refresh_secs >= 1, stale_secs >= 1 (the config reader enforces both).
PollTiming lmcache_poll_timing(uint32_t refresh_secs, uint32_t stale_secs);

// One polled endpoint: when its next poll is due, and what each outcome does to the signals of
// the instances that name it.
//
//   PolledCache cache(clock, lmcache_poll_timing(2, 10));
//   cache.set_instances(signals);                // each tick, from the current snapshot
//   cache.check_stale();
//   if (cache.due()) {
//     cache.begin();
//     ...GET the endpoint...
//     if (reading) cache.succeed(*reading); else cache.fail();
//   }
class PolledCache {
 public:
  PolledCache(const Clock& clock, PollTiming timing) : schedule_(clock, timing) {}
  ~PolledCache() { retire(); }
  PolledCache(const PolledCache&) = delete;
  PolledCache& operator=(const PolledCache&) = delete;

  const PollTiming& timing() const { return schedule_.timing(); }
  void set_timing(PollTiming timing) { schedule_.set_timing(timing); }

  // The instances that name this endpoint, as the current snapshot has them. One no longer named
  // loses `fresh` at once. One newly named becomes fresh at the next good poll.
  // REQUIRES: every signal outlives this object or its next set_instances() (the LoadTracker
  // keeps them for the process's life).
  void set_instances(std::vector<LmcacheSignal*> instances);
  size_t instance_count() const { return instances_.size(); }

  // True when no poll is in flight and `interval` has passed since the last one began.
  bool due() const { return schedule_.due(); }
  // A poll begins (before its connect).
  void begin() { schedule_.begin(); }
  // The outcome of the poll begun last; ignored after retire(). Each returns true when it starts
  // a new run (the first good poll after none or after a failure; the first failure after a good
  // poll or at start), so the caller logs each change once.
  bool succeed(const LmcacheReading& reading);
  bool fail();
  // Clears `fresh` when no poll succeeded within stale_after. Returns true when it did.
  bool check_stale();
  // Clears `fresh` on every instance and forgets them; later outcomes change nothing.
  void retire();

  bool fresh() const { return schedule_.fresh(); }
  const std::optional<LmcacheReading>& last_reading() const { return last_reading_; }

 private:
  void clear_all();

  PollSchedule schedule_;
  std::vector<LmcacheSignal*> instances_;
  std::optional<LmcacheReading> last_reading_;
};

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
