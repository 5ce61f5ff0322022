// Tenancy on the request path (SPEC §15): a limited key's admission and rate-limit fields, the
// settlement of what its answer used, and every answered request's usage record.
//
//   TenancyScope scope{.limiter = ..., .ledger = ..., .key = key, ...};
//   ForwardResult r = co_await forward_accounted(forwarder, client, watch, request, scope);
//
// A request whose key has no rules and that no ledger records never comes here: the caller
// forwards it directly, so an unlimited gateway pays one pointer test.
//
// Thread-safety: runs on the worker thread serving the request; the limiter and the ledger are
// safe from any thread (limits/limiter.h, usage/usage_ledger.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "limits/limiter.h"
#include "proxy/forwarder.h"

namespace rolter {

class Metrics;
class UsageLedger;

struct TenancyScope {
  Limiter* limiter = nullptr;     // null: no limits apply (the key has no rules)
  UsageLedger* ledger = nullptr;  // null: usage is not recorded
  size_t ledger_shard = 0;        // the serving worker's shard of the ledger
  Metrics* metrics = nullptr;     // may be null
  const ApiKey* key = nullptr;    // null: an open gateway
  int64_t now_ms = 0;             // wall clock at the request's start: its usage hour
  std::string request_id;         // unique per request: the in-flight lease's member
  uint64_t default_output_tokens = 1024;
  uint64_t lease_ms = 0;  // how long an unsettled in-flight lease lives
  bool per_key_metrics = false;
};

// The rules of `key` that apply to a request for `address` (its route name or group address),
// in the key's order; returns how many. At most Limiter::kMaxRules are kept.
size_t applicable_rules(const ApiKey& key, std::string_view address,
                        std::array<const LimitRule*, Limiter::kMaxRules>& out);

// The prompt tokens a request reserves (SPEC §15): the token ids it carries (from the client or
// the engine tokenizer), else ceil(body bytes / 4).
uint64_t prompt_tokens_of(const ForwardRequest& request);

// What a request reserves: `prompt` (prompt_tokens_of()) plus its output cap, priced at the
// route's dearest target.
Demand request_demand(const ForwardRequest& request, uint64_t default_output_tokens,
                      uint64_t prompt);

// What settles a reservation: the usage the answer reported, or the reservation itself when it
// reported none (usage_estimated); nothing when no upstream answered.
Settlement settlement_of(const ServedUsage& usage, const Demand& demand);

// Admits, forwards and settles `request`, and records what it used.
Task<ForwardResult> forward_accounted(Forwarder& forwarder, TimedStream& client, ClientWatch& watch,
                                      const ForwardRequest& request, const TenancyScope& scope);

}  // namespace rolter
