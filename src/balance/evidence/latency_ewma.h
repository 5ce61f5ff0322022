// LatencyEwma: an exponentially weighted moving average of one instance's latency (SPEC §6.13,
// `fastest`), α = 0.2, fed by successful requests only.
//
// Lives in the LoadTracker's per-instance state, so it survives reloads (SPEC §5).
// Thread-safety: record() and value() may be called concurrently from any thread; the average is
// one atomic double updated with a compare-and-swap loop.
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

  // Adds one successful request's latency in milliseconds. Non-finite or negative values are
  // ignored.
  void record(double latency_ms);
  // The average, or nullopt before the first sample.
  std::optional<double> value() const;
  uint64_t samples() const { return samples_.load(std::memory_order_relaxed); }

 private:
  // NaN until the first sample, so "no sample" and "0 ms" stay distinct without a second atomic.
  std::atomic<double> average_{std::numeric_limits<double>::quiet_NaN()};
  std::atomic<uint64_t> samples_{0};
};

}  // namespace rolter
