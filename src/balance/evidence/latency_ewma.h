// LatencyEwma: one instance's smoothed latency (SPEC §6.13, `fastest`), α = 0.2, fed by successful
// requests only, kept two ways:
//   - value(): the plain average of the latencies, for telemetry and the dashboard;
//   - at_queue(depth): what a request would meet now, at the instance's current queue. Each
//     sample is divided by the queue it joined plus itself (depth + 1) before it is averaged, and
//     the average per place in the queue is multiplied back by the current depth + 1 (SPEC §6.16).
//     A plain average only learns that a queue formed once the requests in it come back, so a
//     strategy ranking on it keeps feeding the instance that answered fastest last; the per-place
//     average sees the queue the moment a request joins it.
//
// Lives in the LoadTracker's per-instance state, so it survives reloads (SPEC §5).
// Thread-safety: record(), value() and at_queue() may be called concurrently from any thread; each
// average is one atomic double updated with a compare-and-swap loop.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>

namespace rolter {

class LatencyEwma {
 public:
  // α 0.2: a new sample moves the average a fifth of the way, so one outlier fades within ~10
  // requests while a lasting change shows within a few.
  static constexpr double kAlpha = 0.2;

  // Adds one successful request's latency in milliseconds and the queue depth it joined (the load
  // before its own increment). A non-finite or negative latency or depth is ignored.
  void record(double latency_ms, double queue_depth = 0);
  // The average latency, or nullopt before the first sample.
  std::optional<double> value() const;
  // The latency a request joining a queue of `queue_depth` would meet: the average per place in
  // the queue x (queue_depth + 1). nullopt before the first sample.
  std::optional<double> at_queue(double queue_depth) const;
  uint64_t samples() const { return samples_.load(std::memory_order_relaxed); }

 private:
  // NaN until the first sample, so "no sample" and "0 ms" stay distinct without a second atomic.
  std::atomic<double> average_{std::numeric_limits<double>::quiet_NaN()};
  std::atomic<double> per_place_{std::numeric_limits<double>::quiet_NaN()};
  std::atomic<uint64_t> samples_{0};
};

}  // namespace rolter
