// AdaptiveRouteState: what one `adaptive` route has learned and done (SPEC §6.10), kept outside
// the snapshot so it survives reloads: the requests the route served (which gates engagement),
// and per candidate its picks by decision kind (whose warm-up share caps the probes at 8) and
// when it was last picked.
//
// Owned by the LoadTracker (fleet/load_tracker.h), one per route name; a candidate's counters are
// keyed by its stable identity, so a reload that keeps a candidate keeps its counters, and one
// that drops it keeps them too (the route's decision split still counts what it did).
//
// The cost a pick pays for telemetry (SPEC §6.10: at most two relaxed atomics per pick): the one
// read-modify-write on the chosen candidate's picks-by-decision counter (for a warm-up probe, the
// compare-and-swap that claims the probe is that same counter) and one relaxed store of the
// pick's time. Everything else the telemetry reports is derived when a sample is taken: the
// route's decision split is the sum of its candidates' counters, a candidate's picks are the sum
// of its kinds, and "seconds since the last pick" is now minus the stored time. The served count
// is bumped by observe(), once per answered request, because engagement reads it on every pick.
//
// Thread-safety: candidate() takes a mutex and is called only while building a snapshot (and by
// samplers, through for_each_candidate()); the counters are relaxed atomics, written by worker
// threads without locks. Counter objects never move or die while the state lives.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <string_view>

#include "common/mutex.h"

namespace rolter {

// Why a pick went where it went. The values index the counters.
enum class AdaptiveDecision : uint8_t {
  kBlend = 0,        // the engaged blend's argmax
  kExploration = 1,  // engaged, the exploration_ratio share: uniform at random
  kProbe = 2,        // warm-up: a candidate with no latency sample yet
  kFallback = 3,     // the default pipeline stack (disengaged, or disabled)
};
inline constexpr size_t kAdaptiveDecisionCount = 4;
// "blend", "exploration", "probe", "fallback".
std::string_view adaptive_decision_name(AdaptiveDecision decision);

using AdaptiveSplit = std::array<uint64_t, kAdaptiveDecisionCount>;

// One candidate's counters on one route.
class AdaptiveCandidateCounters {
 public:
  // last_pick_ns before any pick.
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::min();

  AdaptiveCandidateCounters(std::string identity, std::string label)
      : identity_(std::move(identity)), label_(std::move(label)) {}

  const std::string& identity() const { return identity_; }
  // The target label (x-rolter-target), for metrics.
  const std::string& label() const { return label_; }

  // Counts one pick of this kind at `now_ns` (the clock's time since its epoch).
  void count(AdaptiveDecision decision, int64_t now_ns) {
    picks_[static_cast<size_t>(decision)].fetch_add(1, std::memory_order_relaxed);
    last_pick_ns_.store(now_ns, std::memory_order_relaxed);
  }
  // Claims one warm-up probe if fewer than `cap` were ever claimed, and counts it as a pick. A
  // compare-and-swap, so concurrent picks never exceed the cap between them.
  bool claim_probe(uint64_t cap, int64_t now_ns) {
    auto& probes = picks_[static_cast<size_t>(AdaptiveDecision::kProbe)];
    uint64_t seen = probes.load(std::memory_order_relaxed);
    while (seen < cap) {
      if (probes.compare_exchange_weak(seen, seen + 1, std::memory_order_relaxed)) {
        last_pick_ns_.store(now_ns, std::memory_order_relaxed);
        return true;
      }
    }
    return false;
  }

  uint64_t picks(AdaptiveDecision decision) const {
    return picks_[static_cast<size_t>(decision)].load(std::memory_order_relaxed);
  }
  uint64_t probes() const { return picks(AdaptiveDecision::kProbe); }
  AdaptiveSplit split() const {
    AdaptiveSplit out{};
    for (size_t k = 0; k < kAdaptiveDecisionCount; ++k) {
      out[k] = picks_[k].load(std::memory_order_relaxed);
    }
    return out;
  }
  int64_t last_pick_ns() const { return last_pick_ns_.load(std::memory_order_relaxed); }

 private:
  const std::string identity_;
  const std::string label_;
  std::array<std::atomic<uint64_t>, kAdaptiveDecisionCount> picks_{};
  std::atomic<int64_t> last_pick_ns_{kNever};
};

class AdaptiveRouteState {
 public:
  explicit AdaptiveRouteState(std::string route) : route_(std::move(route)) {}
  AdaptiveRouteState(const AdaptiveRouteState&) = delete;
  AdaptiveRouteState& operator=(const AdaptiveRouteState&) = delete;

  const std::string& route() const { return route_; }

  // The counters of the candidate with this identity, created on first use.
  AdaptiveCandidateCounters& candidate(std::string_view identity, std::string_view label)
      EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (auto& c : candidates_) {
      if (c.identity() == identity) return c;
    }
    return candidates_.emplace_back(std::string(identity), std::string(label));
  }

  // One request the route answered (LoadBalancer::observe).
  void count_served() { served_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t served() const { return served_.load(std::memory_order_relaxed); }

  // The route's decision split: every candidate's counters summed, including candidates a reload
  // removed.
  AdaptiveSplit split() const EXCLUDES(mu_) {
    AdaptiveSplit total{};
    for_each_candidate([&](const AdaptiveCandidateCounters& c) {
      const AdaptiveSplit s = c.split();
      for (size_t k = 0; k < kAdaptiveDecisionCount; ++k) total[k] += s[k];
    });
    return total;
  }

  // Calls fn(const AdaptiveCandidateCounters&) for every candidate ever seen, under the lock.
  template <typename Fn>
  void for_each_candidate(Fn&& fn) const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (const auto& c : candidates_) fn(c);
  }

 private:
  const std::string route_;
  std::atomic<uint64_t> served_{0};
  mutable Mutex mu_;
  std::deque<AdaptiveCandidateCounters> candidates_ GUARDED_BY(mu_);  // deque: stable addresses
};

inline std::string_view adaptive_decision_name(AdaptiveDecision decision) {
  switch (decision) {
    case AdaptiveDecision::kBlend:
      return "blend";
    case AdaptiveDecision::kExploration:
      return "exploration";
    case AdaptiveDecision::kProbe:
      return "probe";
    case AdaptiveDecision::kFallback:
      return "fallback";
  }
  return "unknown";
}

}  // namespace rolter
