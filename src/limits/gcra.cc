#include "limits/gcra.h"

#include <limits>

namespace rolter {
namespace {

using u128 = unsigned __int128;

int64_t clamp_ms(u128 ms) {
  constexpr auto kMax = static_cast<u128>(std::numeric_limits<int64_t>::max());
  return ms > kMax ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(ms);
}

u128 ceil_div(u128 a, u128 b) { return (a + b - 1) / b; }

}  // namespace

uint64_t Gcra::frac_in(uint64_t rpm) const {
  if (rpm_ == 0 || rpm_ == rpm) return tat_frac_;
  return static_cast<uint64_t>(ceil_div(static_cast<u128>(tat_frac_) * rpm, rpm_));
}

u128 Gcra::ahead_ticks(uint64_t rpm, int64_t now_ms) const {
  if (rpm_ == 0 || tat_ms_ < now_ms - 1) return 0;
  const __int128 ticks = static_cast<__int128>(tat_ms_ - now_ms) * rpm + frac_in(rpm);
  return ticks <= 0 ? 0 : static_cast<u128>(ticks);
}

bool Gcra::allows(uint64_t rpm, uint64_t burst, int64_t now_ms) const {
  return ahead_ticks(rpm, now_ms) + kTicksPerRequest <= static_cast<u128>(burst) * kTicksPerRequest;
}

int64_t Gcra::retry_after_ms(uint64_t rpm, uint64_t burst, int64_t now_ms) const {
  const u128 need = ahead_ticks(rpm, now_ms) + kTicksPerRequest;
  const u128 tolerance = static_cast<u128>(burst) * kTicksPerRequest;
  if (need <= tolerance) return 0;
  return clamp_ms(ceil_div(need - tolerance, rpm));
}

void Gcra::take(uint64_t rpm, int64_t now_ms) {
  uint64_t frac = frac_in(rpm);
  if (ahead_ticks(rpm, now_ms) == 0) {
    tat_ms_ = now_ms;
    frac = 0;
  }
  // T = 60000 / rpm ms = q ms + r ticks.
  frac += kTicksPerRequest % rpm;
  tat_ms_ += static_cast<int64_t>(kTicksPerRequest / rpm);
  while (frac >= rpm) {  // at most twice: frac_in() <= rpm and r < rpm
    frac -= rpm;
    ++tat_ms_;
  }
  tat_frac_ = frac;
  rpm_ = rpm;
}

uint64_t Gcra::remaining(uint64_t rpm, uint64_t burst, int64_t now_ms) const {
  const u128 tolerance = static_cast<u128>(burst) * kTicksPerRequest;
  const u128 ahead = ahead_ticks(rpm, now_ms);
  if (ahead >= tolerance) return 0;
  return static_cast<uint64_t>((tolerance - ahead) / kTicksPerRequest);
}

int64_t Gcra::reset_ms(uint64_t rpm, int64_t now_ms) const {
  return clamp_ms(ceil_div(ahead_ticks(rpm, now_ms), rpm));
}

}  // namespace rolter
