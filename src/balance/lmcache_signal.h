// LmcacheSignal: one instance's LMCache occupancy, as the background poller last read it from the
// instance's lmcache.endpoint (SPEC §6.9). The lmcache_headroom scorer reads it on the pick path.
//
// The poller (collect/lmcache/lmcache_poller.h) stores `occupancy` and `available` from each good
// poll, then sets `fresh`; a failed poll, a stale one (no good poll within stale_secs) or an
// instance that stops being polled clears `fresh` at once. An instance without an lmcache table
// is never polled and never fresh.
//
// Thread-safety: plain relaxed atomics, written by the poller's thread, read by any worker without
// a lock. The three fields may be read torn across one poll; the worst case is one pick on an
// occupancy one poll old.
#pragma once

#include <atomic>
#include <optional>

namespace rolter {

struct LmcacheSignal {
  static_assert(std::atomic<double>::is_always_lock_free, "read on the pick path");

  std::atomic<bool> fresh{false};      // the last poll succeeded and is not stale
  std::atomic<bool> available{false};  // "cache_available" at the last good poll
  std::atomic<double> occupancy{0};    // "occupancy" at the last good poll, finite

  // The occupancy a balancer may use: the last good poll's, while it is fresh and reported the
  // cache available; nullopt otherwise.
  std::optional<double> usable_occupancy() const {
    if (!fresh.load(std::memory_order_relaxed) || !available.load(std::memory_order_relaxed)) {
      return std::nullopt;
    }
    return occupancy.load(std::memory_order_relaxed);
  }
};

}  // namespace rolter
