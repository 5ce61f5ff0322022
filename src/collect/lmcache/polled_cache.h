// PolledCache: one LMCache endpoint's occupancy (SPEC §6.9), the I/O-free part of the LMCache
// poller (lmcache_poller.h): reading an endpoint's body, the timing that follows from an lmcache
// table, and what each poll's outcome, or its absence, does to the LmcacheSignal of the instances
// that name the endpoint. Driven by an injected clock on a PollSchedule (collect/loop/).
//
// Thread-safety: PolledCache is used by one thread (the poller's); it writes the LmcacheSignal
// atomics that workers read.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "balance/lmcache_signal.h"
#include "collect/loop/poll_schedule.h"
#include "common/clock.h"

namespace rolter {

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

}  // namespace rolter
