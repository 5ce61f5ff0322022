// InstanceHealth and its rules: may an instance take traffic now (SPEC §8)?
//
// Three independent reasons keep an instance out:
//   - parked: a 429 with Retry-After parks it for that long (capped); a refused connection parks
//     it for an exponential backoff (1 s, 2 s, 4 s ... 30 s) until a request or health check
//     succeeds;
//   - breaker open: `failure_threshold` consecutive failures open it for `open_ms`; then it is
//     half-open and lets `half_open_probes` requests through; a success closes it, a failure
//     opens it again;
//   - unhealthy: the active health check failed `unhealthy_threshold` times in a row (until it
//     succeeds `healthy_threshold` times).
//
// The state lives in the LoadTracker (it outlives reloads) as atomics. Time is a Clock's
// TimePoint, injected by the caller, so tests control it.
//
// Thread-safety: every function may be called concurrently from any thread. Transitions use
// compare-and-swap; a lost race only means one more or one fewer probe, never a stuck state.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace rolter {

struct BreakerParams {
  uint32_t failure_threshold = 5;
  Clock::Duration open_for = std::chrono::seconds(30);
  uint32_t half_open_probes = 1;
};

enum class BreakerState : uint8_t { kClosed = 0, kOpen = 1, kHalfOpen = 2 };

struct InstanceHealth {
  std::atomic<int64_t> parked_until{0};        // Clock ticks; <= now means not parked
  std::atomic<uint8_t> park_reason{0};         // OutReason of the last park, for messages
  std::atomic<int64_t> refused_backoff{0};     // next refused-connection park, in Clock ticks
  std::atomic<uint8_t> breaker{0};             // BreakerState
  std::atomic<uint32_t> consecutive_failures{0};
  std::atomic<int64_t> opened_at{0};           // Clock ticks
  std::atomic<uint32_t> probes_in_flight{0};   // half-open requests let through
  std::atomic<bool> healthy{true};             // written by the health checker only
};

// Why an instance is out, most specific first. kNone: it may take traffic.
enum class OutReason : uint8_t { kNone = 0, kParked429, kParkedRefused, kBreakerOpen, kUnhealthy };

std::string_view out_reason_text(OutReason reason);

// Whether the instance may take traffic at `now`, without changing anything.
OutReason availability(const InstanceHealth& health, Clock::TimePoint now,
                       const BreakerParams& breaker);

// When the instance comes back by itself (parking ends, breaker half-opens); Clock ticks. Only
// meaningful when availability() is kParked* or kBreakerOpen.
int64_t back_at(const InstanceHealth& health, const BreakerParams& breaker);

// Claims the right to send one request. Returns false when the breaker is half-open and its probes
// are taken (another request won the race). Call after a pick, before sending; pair with
// record_success() or record_failure().
bool admit(InstanceHealth& health, Clock::TimePoint now, const BreakerParams& breaker);

// A request got a response that counts as success (any status that is not a retryable 5xx).
void record_success(InstanceHealth& health);

// A request failed (connect error, reset, timeout, 5xx). May open the breaker.
void record_failure(InstanceHealth& health, Clock::TimePoint now, const BreakerParams& breaker);

// A 429 with Retry-After: park for `retry_after` (already capped by the caller).
void park_for(InstanceHealth& health, Clock::TimePoint now, Clock::Duration retry_after);

// A refused connection: park for the current backoff and double it (1 s .. 30 s).
void park_refused(InstanceHealth& health, Clock::TimePoint now);

// A health check result; thresholds from [health].
void record_health_check(InstanceHealth& health, bool ok, uint32_t& consecutive_ok,
                         uint32_t& consecutive_failed, uint32_t healthy_threshold,
                         uint32_t unhealthy_threshold);

}  // namespace rolter
