#include "flow/drain_meter.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rolter {

void DrainMeter::record(Clock::TimePoint now) {
  const uint64_t i = recorded_.fetch_add(1, std::memory_order_relaxed);
  // Tick 0 marks an empty slot: a clock at its epoch records 1 tick later, which changes nothing.
  const int64_t ticks = now.time_since_epoch().count();
  ticks_[i % kSamples].store(ticks == 0 ? 1 : ticks, std::memory_order_relaxed);
}

std::optional<DrainMeter::Rate> DrainMeter::rate(Clock::TimePoint now) const {
  const int64_t now_ticks = now.time_since_epoch().count();
  const int64_t window = std::chrono::duration_cast<Clock::Duration>(kWindow).count();
  size_t in_window = 0;
  int64_t oldest = std::numeric_limits<int64_t>::max();
  int64_t newest = std::numeric_limits<int64_t>::min();
  for (const auto& slot : ticks_) {
    const int64_t t = slot.load(std::memory_order_relaxed);
    if (t == 0 || now_ticks - t > window) continue;
    oldest = std::min(oldest, t);
    newest = std::max(newest, t);
    ++in_window;
  }
  if (in_window < 2) return std::nullopt;
  // The span runs to now, not to the newest completion: a fleet that stopped finishing anything
  // shows a falling rate instead of its last burst's.
  const double span_s =
      std::chrono::duration<double>(Clock::Duration(std::max(now_ticks, newest) - oldest)).count();
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
