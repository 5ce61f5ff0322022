// TokenWindow: a scope's `tpm` limit (SPEC §15), tokens counted over a sliding 60 s window of
// 1-second buckets.
//
//   Bucket second s = floor(t_ms / 1000). At time now (second n) the window counts the buckets of
//   seconds n-59 .. n; a bucket leaves the window at (s + 60) * 1000 ms.
//   Admission: passes iff used + estimate <= tpm. An estimate above tpm alone never passes; its
//   retry-after is a full window (kEstimateTooLargeRetryMs).
//   Reservation: the estimate is added to the bucket of `now`.
//   Settlement: (actual - reserved) is added to the bucket of the reservation's second, if that
//   bucket is still in the window at settlement (else the difference is dropped); a bucket never
//   goes below zero.
//   retry_after: until enough of the oldest buckets leave that used + estimate <= tpm.
//   reset: until the oldest bucket holding tokens leaves the window (0 when none does).
//
// The ring holds 60 buckets, each tagged with its second; a tag outside the window (older, or
// ahead of a clock that stepped back) counts for nothing and is overwritten when its slot is
// reused. A backend that keeps buckets elsewhere (a Redis hash per second) counts exactly the same.
//
// Thread-safety: a value type; the owner serializes access (limits/local_limiter.h locks its cell).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace rolter {

class TokenWindow {
 public:
  static constexpr int64_t kBucketMs = 1000;
  static constexpr int64_t kBuckets = 60;
  static constexpr int64_t kWindowMs = kBucketMs * kBuckets;
  static constexpr int64_t kEstimateTooLargeRetryMs = kWindowMs;

  // What the window holds at one instant, from one walk over it.
  struct Summary {
    uint64_t used = 0;
    // The second of the oldest bucket holding tokens; meaningful when used > 0.
    int64_t oldest_second = 0;
  };

  Summary summary(int64_t now_ms) const;

  static bool allows(const Summary& s, uint64_t tpm, uint64_t estimate) {
    return estimate <= tpm && s.used <= tpm - estimate;
  }
  // REQUIRES: !allows(summary(now_ms), tpm, estimate).
  int64_t retry_after_ms(uint64_t tpm, uint64_t estimate, int64_t now_ms) const;

  void reserve(uint64_t tokens, int64_t now_ms);
  // `at_ms` is when the reservation counted (Admission::at_ms).
  void settle(int64_t at_ms, uint64_t reserved, uint64_t actual, int64_t now_ms);

  static uint64_t remaining(const Summary& s, uint64_t tpm) {
    return s.used >= tpm ? 0 : tpm - s.used;
  }
  static int64_t reset_ms(const Summary& s, int64_t now_ms) {
    return s.used == 0 ? 0 : (s.oldest_second + kBuckets) * kBucketMs - now_ms;
  }
  // The summary after reserve(tokens, now_ms), derived without a second walk.
  static Summary after_reserve(Summary s, uint64_t tokens, int64_t now_ms);

  static int64_t second_of(int64_t ms) {
    return ms >= 0 ? ms / kBucketMs : -((-ms + kBucketMs - 1) / kBucketMs);
  }

 private:
  struct Bucket {
    int64_t second = std::numeric_limits<int64_t>::min();
    uint64_t tokens = 0;
  };
  static size_t slot_of(int64_t second) {
    return static_cast<size_t>(((second % kBuckets) + kBuckets) % kBuckets);
  }
  static size_t next(size_t slot) { return slot + 1 == kBuckets ? 0 : slot + 1; }

  std::array<Bucket, kBuckets> buckets_{};
};

}  // namespace rolter
