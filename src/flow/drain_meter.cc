#include "flow/drain_meter.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rolter {

void DrainMeter::record(Clock::TimePoint now) {
  times_[next_] = now;
  next_ = (next_ + 1) % kSamples;
  count_ = std::min(count_ + 1, kSamples);
}

std::optional<DrainMeter::Rate> DrainMeter::rate(Clock::TimePoint now) const {
  // Walk back from the newest sample while it lies within the window.
  size_t in_window = 0;
  Clock::TimePoint newest{};
  Clock::TimePoint oldest{};
  for (size_t k = 0; k < count_; ++k) {
    const Clock::TimePoint t = times_[(next_ + kSamples - 1 - k) % kSamples];
    if (now - t > kWindow) break;
    if (k == 0) newest = t;
    oldest = t;
    ++in_window;
  }
  if (in_window < 2) return std::nullopt;
  // The span runs to now, not to the newest completion: a fleet that stopped finishing anything
  // shows a falling rate instead of its last burst's.
  const double span_s = std::chrono::duration<double>(std::max(now, newest) - oldest).count();
  if (span_s <= 0) return std::nullopt;
  return Rate{.per_second = static_cast<double>(in_window - 1) / span_s,
              .reliable = in_window >= kReliableSamples};
}

uint32_t retry_after_seconds(size_t ahead, std::optional<DrainMeter::Rate> rate,
                             uint32_t unmeasured_s) {
  if (!rate || rate->per_second <= 0) return std::max<uint32_t>(1, unmeasured_s);
  const double seconds = std::ceil(static_cast<double>(std::max<size_t>(ahead, 1)) / rate->per_second);
  if (!(seconds < static_cast<double>(std::numeric_limits<uint32_t>::max()))) {
    return std::numeric_limits<uint32_t>::max();
  }
  return std::max<uint32_t>(1, static_cast<uint32_t>(seconds));
}

double expected_wait_ms(size_t ahead, const DrainMeter::Rate& rate) {
  return static_cast<double>(ahead) / rate.per_second * 1000.0;
}

}  // namespace rolter
