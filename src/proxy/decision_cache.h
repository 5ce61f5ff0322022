// DecisionCache: decision-service verdicts remembered per (route, session key) for kTtl (SPEC §7:
// "results may be cached per (session key, route) for 60 s"), so a conversation asks once a
// minute rather than once a turn, and its turns agree on the model.
//
// Bounded: at most `capacity` entries; inserting into a full cache first drops expired entries
// and then, if still full, the oldest-inserted one. A request without a session key is never
// cached. A reload that changes a route's criteria applies to a cached session within kTtl.
//
//   if (auto hit = cache.find(route, key)) verdict = std::move(*hit);
//   else if (verdict = co_await ask(...)) cache.put(route, key, *verdict);
//
// Thread-safety: not thread-safe; each worker thread owns one (server/worker.h), so no lock is
// taken on the request path. The clock must outlive the cache.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "balance/decision_verdict.h"
#include "common/clock.h"

namespace rolter {

class DecisionCache {
 public:
  // SPEC §7.
  static constexpr std::chrono::seconds kTtl{60};
  // A verdict is ~100 bytes plus its key (at most kMaxStoredKeyBytes, and it names only the
  // route's models: see keep_route_models() in decision_protocol.h): 4096 sessions per worker
  // stay around 2 MB.
  static constexpr size_t kDefaultCapacity = 4096;
  // Session keys up to this length are stored as they are; longer ones as a 128-bit digest.
  static constexpr size_t kMaxStoredKeyBytes = 256;

  explicit DecisionCache(const Clock& clock, size_t capacity = kDefaultCapacity)
      : clock_(clock), capacity_(capacity) {}

  // A copy of the fresh verdict for (route, key); nullopt when none, or when `key` is empty.
  std::optional<DecisionVerdict> find(std::string_view route, std::string_view key);
  // Remembers `verdict` for (route, key) from now on for kTtl. Does nothing when `key` is empty.
  void put(std::string_view route, std::string_view key, const DecisionVerdict& verdict);

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    DecisionVerdict verdict;
    Clock::TimePoint expires;
  };
  static std::string key_of(std::string_view route, std::string_view key);
  void make_room();

  const Clock& clock_;
  const size_t capacity_;
  std::unordered_map<std::string, Entry> entries_;
  std::deque<std::string> order_;  // each key of entries_ once, oldest insertion first
};

}  // namespace rolter
