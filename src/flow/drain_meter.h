// DrainMeter: how fast a route's requests finish, measured, for the queue's promises (SPEC §19):
// the Retry-After of a shed request, and whether a new arrival could be served within the
// queue's max wait at all.
//
// It keeps the times of the last kSamples completions. The rate is (samples - 1) over the time
// they span, and only completions from the last kWindow count, so a fleet that slowed down (or
// stopped) is not judged by how it drained a minute ago. An estimate is `reliable` once
// kReliableSamples completions fall in the window: a queue refuses an arrival at once on an
// estimate only then, and otherwise lets the wait itself decide.
//
//   DrainMeter meter;
//   meter.record(now);                       // each request of the route that ended
//   std::optional<double> rate = meter.rate(now);
//   uint32_t s = retry_after_seconds(ahead, rate, fallback_s);
//
// Thread-safety: record() and rate() may be called from any thread without a lock (every request
// of a route records its end, the unsaturated ones too). Samples are relaxed atomics: a rate read
// while completions are recorded may miss the newest one, which moves it by one sample at most.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/clock.h"

namespace rolter {

class DrainMeter {
 public:
  // 64 completions: a few rounds of a fleet of tens of slots, small enough to follow a change in
  // about as many completions.
  static constexpr size_t kSamples = 64;
  // Only the last 10 s count: longer than any sane queue promise is stale.
  static constexpr std::chrono::seconds kWindow{10};
  // 8 completions before an estimate refuses anyone: fewer say little about a rate.
  static constexpr size_t kReliableSamples = 8;

  void record(Clock::TimePoint now);

  struct Rate {
    double per_second = 0;  // > 0
    bool reliable = false;
  };
  // The measured completion rate, or nullopt when fewer than two completions fall in the window.
  std::optional<Rate> rate(Clock::TimePoint now) const;

 private:
  std::array<std::atomic<int64_t>, kSamples> ticks_{};  // Clock ticks; 0 = empty
  std::atomic<uint64_t> recorded_{0};                   // samples ever recorded
};

// SPEC §19: Retry-After = ceil(queue ahead / measured rate) seconds, at least 1. `ahead` counts the
// requests that must drain first. Without a measured rate the queue's own bound is the honest
// answer: `unmeasured_s` (ceil(max_wait_ms / 1000)).
uint32_t retry_after_seconds(size_t ahead, std::optional<DrainMeter::Rate> rate,
                             uint32_t unmeasured_s);

// The wait, in ms, for `ahead` requests to drain at `rate`.
double expected_wait_ms(size_t ahead, const DrainMeter::Rate& rate);

}  // namespace rolter
