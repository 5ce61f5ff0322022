// SessionAffinityScorer: SPEC §6.7 "session affinity". 1.0 for the candidate that last served this
// request's session (x-session-id), 0 for every other; all 0 (neutral) when the request has no
// session, the session is unknown or expired, or its candidate is not eligible for this attempt.
//
// The table maps a session to the index of the candidate that last served it. An index is safe
// to keep: the balancer, and this table with it, lives exactly one snapshot (SPEC §5). An entry
// expires 300 s after the session was last served, and the table holds at most 100,000 sessions,
// evicting the least recently served. Sessions are keyed by a 64-bit hash of x-session-id rather
// than the string itself, so memory stays flat however long the header is; two sessions that
// collide (odds of any collision in a full table ~3e-10) share an affinity hint, which costs a
// cache miss at worst.
//
// Thread-safety: score() and observe() run concurrently on every worker and both touch the table
// (a lookup drops an expired entry; observe reorders the LRU), so it is locked. One lock would
// serialise every pick of the route; instead the table is split into 16 shards by the key's hash,
// each with its own mutex, LRU list and a ceil(capacity / 16) share of the capacity. A lock is
// held for one hash-map probe, so 16 shards keep contention negligible at any worker count. LRU
// order is therefore per shard: a full shard evicts its own least recently served session.
//
// Allocation: score() makes none. observe() of a new session allocates its list and map nodes until
// its shard is full; after that an eviction recycles the evicted nodes.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "balance/scorer.h"
#include "common/clock.h"
#include "common/mutex.h"

namespace rolter {

class SessionAffinityScorer final : public Scorer {
 public:
  // SPEC §6.7: long enough to cover a user's think time between turns of one conversation.
  static constexpr std::chrono::seconds kTtl{300};
  // SPEC §6.7: the sessions one route remembers.
  static constexpr size_t kCapacity = 100'000;
  // Enough shards that workers rarely meet on one lock, few enough that each keeps a real LRU.
  static constexpr size_t kShards = 16;

  // `clock` must outlive the scorer. REQUIRES: capacity > 0.
  explicit SessionAffinityScorer(const Clock& clock, size_t capacity = kCapacity);

  std::string_view name() const override { return "session_affinity"; }
  void score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
             std::span<double> out) override;
  // Records (or refreshes) that candidate `index` served ctx.session_key, now.
  void observe(size_t index, const RouteContext& ctx) override;

  // The candidate that last served this session, if it is remembered and not expired.
  std::optional<size_t> lookup(std::string_view session_key);
  // Which shard a session lives in, and the sessions held now (both for tests).
  static size_t shard_of(std::string_view session_key);
  size_t size() const;

 private:
  struct Entry {
    uint64_t key;
    size_t index;
    Clock::TimePoint last_served;
  };
  struct Shard {
    mutable Mutex mu;
    std::list<Entry> lru GUARDED_BY(mu);  // most recently served first
    std::unordered_map<uint64_t, std::list<Entry>::iterator> by_key GUARDED_BY(mu);
  };

  std::optional<size_t> lookup_key(uint64_t key);

  const Clock& clock_;
  const size_t shard_capacity_;
  std::array<Shard, kShards> shards_;
};

}  // namespace rolter
