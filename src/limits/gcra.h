// Gcra: the generic cell rate algorithm behind a scope's `rpm` limit (SPEC §15), exact for every
// rpm, including those that do not divide a minute.
//
//   Emission interval T = 60000 / rpm ms; tolerance = burst * T. The state is the theoretical
//   arrival time TAT. A request at `now` passes iff max(TAT, now) + T - now <= burst * T, and
//   taking it sets TAT = max(TAT, now) + T. So with rpm = 60, burst = 60: 60 requests pass back to
//   back, the 61st is refused, and one more passes each second after.
//
// Exactness: TAT is kept as whole milliseconds plus a fraction in ticks of 1/rpm ms
// (tat_ms + tat_frac / rpm, 0 <= tat_frac < rpm), so T = 60000 ticks exactly. Every quantity fits
// a double's 53-bit mantissa for real clocks and rpm below a few million, so a Lua script can
// mirror it integer for integer. When rpm changes (a reload), the fraction is converted to the new
// rpm rounding up (the state is at most one tick stricter); burst changes need no conversion.
//
// Thread-safety: a value type; the owner serializes access (limits/local_limiter.h locks its cell).
#pragma once

#include <cstdint>

namespace rolter {

class Gcra {
 public:
  // T in ticks of 1/rpm ms, for every rpm.
  static constexpr uint64_t kTicksPerRequest = 60'000;

  // Whether one request passes at now_ms.
  bool allows(uint64_t rpm, uint64_t burst, int64_t now_ms) const;
  // Time until one request passes: 0 when it passes now, else ceil((TAT - (burst-1)*T) - now).
  int64_t retry_after_ms(uint64_t rpm, uint64_t burst, int64_t now_ms) const;
  // Counts one request: TAT = max(TAT, now) + T. Called only after allows() said yes.
  void take(uint64_t rpm, int64_t now_ms);
  // Requests that would pass right now, back to back: floor((burst*T - (max(TAT,now) - now)) / T).
  uint64_t remaining(uint64_t rpm, uint64_t burst, int64_t now_ms) const;
  // Time until TAT <= now, i.e. back at a full burst: ceil(max(TAT, now) - now).
  int64_t reset_ms(uint64_t rpm, int64_t now_ms) const;

  int64_t tat_ms() const { return tat_ms_; }
  uint64_t tat_frac() const { return tat_frac_; }
  uint64_t frac_rpm() const { return rpm_; }

 private:
  // max(TAT, now) - now in ticks of 1/rpm ms (the fraction converted to rpm).
  unsigned __int128 ahead_ticks(uint64_t rpm, int64_t now_ms) const;
  // tat_frac_ in ticks of the given rpm, rounded up; may equal rpm.
  uint64_t frac_in(uint64_t rpm) const;

  int64_t tat_ms_ = 0;
  uint64_t tat_frac_ = 0;
  uint64_t rpm_ = 0;  // the rpm tat_frac_ counts in; 0 = never taken
};

}  // namespace rolter
