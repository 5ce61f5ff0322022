// Backoff: how long to wait before the next attempt after consecutive failures, with "full
// jitter": each wait is uniform in [0, ceiling], where the ceiling starts at `min` and doubles per
// failure up to `max`. Nodes that lost the control plane together thus come back spread out
// instead of in one wave.
//
//   Backoff backoff(250ms, 10s, random);
//   on failure: wait(backoff.next());   on success: backoff.reset();
//
// Pure but for the injected random source. Thread-safety: a value used by one thread; `random`
// must outlive it and is drawn from on the caller's thread.
#pragma once

#include <chrono>
#include <cstdint>

#include "common/random.h"

namespace rolter {

class Backoff {
 public:
  // REQUIRES: 0 < min <= max.
  Backoff(std::chrono::milliseconds min, std::chrono::milliseconds max, Random& random)
      : min_(min), max_(max), ceiling_(min), random_(random) {}

  // The wait after one more failure; the ceiling doubles for the one after.
  std::chrono::microseconds next();
  // After a success: the next failure waits at most `min` again.
  void reset() {
    ceiling_ = min_;
    failures_ = 0;
  }
  // Failures since the last reset().
  uint64_t failures() const { return failures_; }
  // The bound of the next wait.
  std::chrono::milliseconds ceiling() const { return ceiling_; }

 private:
  const std::chrono::milliseconds min_;
  const std::chrono::milliseconds max_;
  std::chrono::milliseconds ceiling_;
  uint64_t failures_ = 0;
  Random& random_;
};

}  // namespace rolter
