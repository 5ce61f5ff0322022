#include "fleet/availability.h"

#include <algorithm>

namespace rolter {
namespace {

using std::chrono::seconds;

// SPEC §8: refused connections park for 1 s, doubling up to 30 s.
constexpr Clock::Duration kRefusedFirstPark = seconds(1);
constexpr Clock::Duration kRefusedMaxPark = seconds(30);

int64_t ticks(Clock::TimePoint t) { return t.time_since_epoch().count(); }

}  // namespace

std::string_view out_reason_text(OutReason reason) {
  switch (reason) {
    case OutReason::kNone: return "available";
    case OutReason::kParked429: return "parked after 429 (Retry-After)";
    case OutReason::kParkedRefused: return "parked after a refused connection";
    case OutReason::kBreakerOpen: return "circuit breaker open";
    case OutReason::kUnhealthy: return "failing health checks";
  }
  return "unknown";
}

OutReason availability(const InstanceHealth& health, Clock::TimePoint now,
                       const BreakerParams& breaker) {
  if (!health.healthy.load(std::memory_order_relaxed)) return OutReason::kUnhealthy;
  if (health.parked_until.load(std::memory_order_relaxed) > ticks(now)) {
    return static_cast<OutReason>(health.park_reason.load(std::memory_order_relaxed));
  }
  const auto state = static_cast<BreakerState>(health.breaker.load(std::memory_order_acquire));
  if (state == BreakerState::kOpen &&
      health.opened_at.load(std::memory_order_relaxed) + breaker.open_for.count() > ticks(now)) {
    return OutReason::kBreakerOpen;
  }
  if (state == BreakerState::kHalfOpen &&
      health.probes_in_flight.load(std::memory_order_relaxed) >= breaker.half_open_probes) {
    return OutReason::kBreakerOpen;
  }
  return OutReason::kNone;
}

int64_t back_at(const InstanceHealth& health, const BreakerParams& breaker) {
  int64_t at = health.parked_until.load(std::memory_order_relaxed);
  if (static_cast<BreakerState>(health.breaker.load()) == BreakerState::kOpen) {
    at = std::max(at, health.opened_at.load(std::memory_order_relaxed) + breaker.open_for.count());
  }
  return at;
}

bool admit(InstanceHealth& health, Clock::TimePoint now, const BreakerParams& breaker) {
  auto state = health.breaker.load(std::memory_order_acquire);
  if (state == static_cast<uint8_t>(BreakerState::kClosed)) return true;
  if (state == static_cast<uint8_t>(BreakerState::kOpen)) {
    if (health.opened_at.load() + breaker.open_for.count() > ticks(now)) return false;
    // open_ms has passed: the first request to get here turns the breaker half-open.
    uint8_t expected = state;
    if (health.breaker.compare_exchange_strong(expected,
                                               static_cast<uint8_t>(BreakerState::kHalfOpen))) {
      health.probes_in_flight.store(0);
    }
  }
  uint32_t probes = health.probes_in_flight.load();
  while (probes < breaker.half_open_probes) {
    if (health.probes_in_flight.compare_exchange_weak(probes, probes + 1)) return true;
  }
  return false;
}

void record_success(InstanceHealth& health) {
  health.consecutive_failures.store(0, std::memory_order_relaxed);
  health.refused_backoff.store(0, std::memory_order_relaxed);
  if (health.breaker.load(std::memory_order_acquire) != static_cast<uint8_t>(BreakerState::kClosed)) {
    health.breaker.store(static_cast<uint8_t>(BreakerState::kClosed), std::memory_order_release);
    health.probes_in_flight.store(0);
  }
}

void record_failure(InstanceHealth& health, Clock::TimePoint now, const BreakerParams& breaker) {
  const uint32_t failures = health.consecutive_failures.fetch_add(1) + 1;
  const auto state = static_cast<BreakerState>(health.breaker.load(std::memory_order_acquire));
  // A failed half-open probe reopens at once; a closed breaker opens at the threshold.
  if (state == BreakerState::kHalfOpen ||
      (state == BreakerState::kClosed && failures >= breaker.failure_threshold)) {
    health.opened_at.store(ticks(now), std::memory_order_relaxed);
    health.probes_in_flight.store(0);
    health.breaker.store(static_cast<uint8_t>(BreakerState::kOpen), std::memory_order_release);
  }
}

void park_for(InstanceHealth& health, Clock::TimePoint now, Clock::Duration retry_after) {
  health.park_reason.store(static_cast<uint8_t>(OutReason::kParked429), std::memory_order_relaxed);
  health.parked_until.store(ticks(now + retry_after), std::memory_order_relaxed);
}

void park_refused(InstanceHealth& health, Clock::TimePoint now) {
  int64_t backoff = health.refused_backoff.load(std::memory_order_relaxed);
  if (backoff <= 0) backoff = kRefusedFirstPark.count();
  health.park_reason.store(static_cast<uint8_t>(OutReason::kParkedRefused),
                           std::memory_order_relaxed);
  health.parked_until.store(ticks(now) + backoff, std::memory_order_relaxed);
  health.refused_backoff.store(std::min<int64_t>(backoff * 2, kRefusedMaxPark.count()),
                               std::memory_order_relaxed);
}

void record_health_check(InstanceHealth& health, bool ok, uint32_t& consecutive_ok,
                         uint32_t& consecutive_failed, uint32_t healthy_threshold,
                         uint32_t unhealthy_threshold) {
  if (ok) {
    consecutive_failed = 0;
    ++consecutive_ok;
    // A successful check also ends a refused-connection parking (SPEC §8).
    if (health.park_reason.load() == static_cast<uint8_t>(OutReason::kParkedRefused)) {
      health.parked_until.store(0);
      health.refused_backoff.store(0);
    }
    if (!health.healthy.load() && consecutive_ok >= healthy_threshold) health.healthy.store(true);
  } else {
    consecutive_ok = 0;
    ++consecutive_failed;
    if (health.healthy.load() && consecutive_failed >= unhealthy_threshold) {
      health.healthy.store(false);
    }
  }
}

}  // namespace rolter
