// Limiter: the backend that admits and settles requests against their LimitRules (SPEC §15).
//
//   Admission a = co_await limiter.admit(rules, demand);
//   if (!a.admitted()) ... answer 429 (or 503) with a.retry_after_ms and the headers ...
//   ... serve the request ...
//   limiter.settle(rules, demand, a, settlement);   // exactly once per admitted request
//
// admit() checks every rule and reserves the demand in all of them, or in none: a refused request
// leaves no trace. settle() replaces the reservation by the settlement (a refund, or an extra
// charge) and ends the request's in-flight lease. Neither ever fails the request: a backend that
// cannot answer yields an Admission with backend_error set (admitted when on_backend_error is
// "open", refused kUnavailable when "closed"), and a settlement it cannot deliver is counted and
// dropped.
//
// Implementations: LocalLimiter (limits/local_limiter.h), exact within one process, which admits
// without suspending; RedisLimiter (limits/redis/redis_limiter.h), exact across every node sharing
// one Redis, one server-side script per admission and per settlement.
//
// Thread-safety: LocalLimiter may be called from any thread. A RedisLimiter belongs to one
// worker's io_context and is called on that thread only.
#pragma once

#include <span>

#include "limits/limit_types.h"
#include "net/asio_fwd.h"

namespace rolter {

class Limiter {
 public:
  // At most this many rules apply to one request (key, team, and a route glob of each, with room).
  static constexpr size_t kMaxRules = 8;

  virtual ~Limiter() = default;

  // REQUIRES: 1 <= rules.size() <= kMaxRules; every rule has a non-empty spec and outlives the
  // call (they live in the snapshot the request pinned).
  virtual Task<Admission> admit(std::span<const LimitRule* const> rules, const Demand& demand) = 0;

  // REQUIRES: `admission` is what admit() returned for the same rules and demand, admitted.
  virtual void settle(std::span<const LimitRule* const> rules, const Demand& demand,
                      const Admission& admission, const Settlement& settlement) = 0;
};

}  // namespace rolter
