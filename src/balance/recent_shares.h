// RecentShares: how many requests a balancer gave each candidate in the last minute.
//
// A strategy that keeps conversations where their cache is balances what is in flight, but not
// how many requests each engine is given: a conversation that keeps returning to its engine, with
// turns that finish in a second, adds a request per turn there and almost nothing to its in-flight
// count. These counts let it see that, and steer work it is free to place (a request no engine
// holds more of than another) to the engines below their share (balance/strategies/kv_cost.h).
//
// A sliding window of kWindow in one-second buckets per candidate. Counts are this balancer's own,
// so one gateway node's: several nodes that each keep their own placements even keep the sum even.
// A reload builds new balancers, and the counts start over.
//
// Thread-safety: every method may be called concurrently; one mutex, held for a pass over the
// candidates. No allocation after construction.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/clock.h"
#include "common/function_ref.h"
#include "common/mutex.h"

namespace rolter {

class RecentShares {
 public:
  static constexpr std::chrono::seconds kWindow{60};

  // `clock` must outlive this object.
  RecentShares(size_t candidate_count, const Clock& clock);

  // One request given to candidate i now; out of range is ignored.
  void add(size_t i) EXCLUDES(mutex_);
  // Each candidate's requests over the last kWindow, into out[0, min(out.size(), count)).
  void read(std::span<uint32_t> out) EXCLUDES(mutex_);

 private:
  static constexpr size_t kBuckets = kWindow.count();
  // Empties the buckets that fell out of the window since the last call.
  void advance(Clock::TimePoint now) REQUIRES(mutex_);

  const size_t count_;
  const Clock& clock_;
  const Clock::TimePoint origin_;
  Mutex mutex_;
  std::vector<uint32_t> buckets_ GUARDED_BY(mutex_);  // candidate-major: [i * kBuckets + second]
  std::vector<uint32_t> totals_ GUARDED_BY(mutex_);   // per candidate, over the window
  int64_t second_ GUARDED_BY(mutex_) = 0;             // the newest bucket's second since origin_
};

// The even-shares rule kv_cost and the prefix-aware stacks follow. With R the sum of `recent` over
// the candidates mask marks (1 = eligible), W the sum of their weights and w_i candidate i's, i's
// ceiling is (1 + kEvenShareSlack) x (R + 1) x w_i / W: its share of the requests, as its weight
// is of the weights (equal when `weights` is empty, or when the eligible weights sum to 0). When an
// eligible candidate below its ceiling loses nothing (loses_nothing(i): it holds as much of the
// request as the best), every eligible candidate at or above its ceiling is cleared from mask.
// Returns how many were cleared. The candidate with the fewest requests per weight is always below
// its ceiling, so a non-empty set stays non-empty.
// REQUIRES: recent.size() >= mask.size(); weights empty or weights.size() >= mask.size(), each
// finite and >= 0.
size_t clear_above_share(std::span<char> mask, std::span<const uint32_t> recent,
                         std::span<const double> weights, FunctionRef<bool(size_t)> loses_nothing);

// How far above the mean share a candidate may be and still be given a request that loses
// nothing elsewhere: 5%, measured on the public traces (docs/benchmarks.md, "kv_cost at the
// bound").
inline constexpr double kEvenShareSlack = 0.05;

}  // namespace rolter
