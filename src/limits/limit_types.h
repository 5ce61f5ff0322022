// The vocabulary of tenancy limits (SPEC §15), shared by the local and the Redis backends and by
// the request path that asks them.
//
//   A LimitRule is one counted scope: a key, a team, or a route glob inside either, with the
//   limits configured on it (LimitSpec). A request must pass every rule that applies to it.
//   Admission reserves a Demand in every rule at once, or in none; settlement replaces that
//   reservation by what the request really used (Settlement).
//
// Time is unix milliseconds, passed in by the caller, so every rule is exact under a test clock.
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace rolter {

// Budget periods roll over at UTC boundaries: midnight, Monday midnight, the 1st of the month.
enum class BudgetPeriod : uint8_t { kDay, kWeek, kMonth };

struct BudgetSpec {
  double usd = 0;
  BudgetPeriod period = BudgetPeriod::kMonth;
};

// The limits of one scope. Zero means "no such limit".
struct LimitSpec {
  uint64_t rpm = 0;            // requests per minute, a GCRA
  uint64_t burst = 0;          // requests admitted back to back; 0 = max(1, rpm / 10)
  uint64_t tpm = 0;            // tokens per minute, a sliding 60 s window
  uint32_t max_in_flight = 0;  // concurrent requests
  std::optional<BudgetSpec> budget;

  bool empty() const { return rpm == 0 && tpm == 0 && max_in_flight == 0 && !budget; }
  uint64_t effective_burst() const {
    if (burst != 0) return burst;
    return rpm / 10 == 0 ? 1 : rpm / 10;
  }
};

// The local backend's state of one scope (limits/local_limiter.h); other backends leave it null.
struct LimitCell;

// One counted scope. Two rules with the same `id` count in the same state, on every node (the id
// is the Redis key's suffix), so the id names the scope, never the limits' values: changing a
// key's rpm keeps what it has used.
struct LimitRule {
  std::string id;          // "key:<name>", "team:<name>", "key:<name>|route:<glob>", ...
  std::string label;       // for messages and headers: "key 'a'", "team 'b' on 'qwen*'"
  std::string route_glob;  // "" = every route; else the rule applies where the glob matches
  LimitSpec spec;
  // Set by the snapshot builder from LocalLimiter::cells().cell(id), once per rule and reload, so
  // admission reaches the scope's state without hashing `id`. Null: LocalLimiter looks `id` up
  // (slower, still exact); the Redis backend ignores it.
  std::shared_ptr<LimitCell> cell;

  bool applies_to(std::string_view route_address) const;
};

// What a request reserves at admission.
struct Demand {
  uint64_t tokens = 0;  // the estimate: prompt tokens + output cap (limits/estimate.h)
  double usd = 0;       // the estimate priced at the route's dearest target
  // The in-flight lease's member (unique per request) and how long it lives if never settled:
  // a node that dies leaks its leases for no longer than this.
  std::string request_id;
  int64_t lease_ms = 0;
};

// What a request really used, known when its answer ends.
struct Settlement {
  uint64_t tokens = 0;  // input (cached included) + output tokens
  double usd = 0;
  // The answer reported no usage: the reservation stands as the charge (usage_estimated).
  bool estimated = false;
};

enum class Refusal : uint8_t {
  kNone,
  kRateLimit,    // 429 rate_limit_exceeded: rpm, tpm or max_in_flight
  kBudget,       // 429 budget_exceeded
  kUnavailable,  // 503 limits_unavailable: the backend is away and on_backend_error = "closed"
};

// One rule's state as the headers report it, after this request's admission.
struct LimitReading {
  const LimitRule* rule = nullptr;
  // rpm: the burst is the quota; reset = until the GCRA is back at a full burst.
  uint64_t request_quota = 0;  // 0 = the rule has no rpm
  uint64_t requests_remaining = 0;
  int64_t requests_reset_ms = 0;
  // tpm: reset = until the oldest counted tokens leave the window.
  uint64_t token_quota = 0;  // 0 = the rule has no tpm
  uint64_t tokens_remaining = 0;
  int64_t tokens_reset_ms = 0;
};

// The answer to an admission. At most kMaxReadings readings are kept: the most restrictive first.
struct Admission {
  static constexpr size_t kMaxReadings = 4;

  Refusal refusal = Refusal::kNone;
  // The time the reservation counted at (the backend's clock: Redis's TIME with Redis);
  // settlement needs it to find the reservation in the token window.
  int64_t at_ms = 0;
  int64_t retry_after_ms = 0;  // when refused: from the limiter's own next-admit time
  std::string message;         // when refused: which limit, in words
  bool backend_error = false;  // the backend was away; admitted (open) or refused (closed)
  LimitReading readings[kMaxReadings];
  size_t reading_count = 0;

  bool admitted() const { return refusal == Refusal::kNone; }
};

}  // namespace rolter
