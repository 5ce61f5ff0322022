#include "proxy/tenancy.h"

#include <algorithm>
#include <chrono>

#include "limits/estimate.h"
#include "limits/rate_limit_headers.h"
#include "observe/metrics.h"
#include "proxy/request_line.h"
#include "proxy/request_log.h"
#include "usage/usage_ledger.h"

namespace rolter {
namespace {

std::string_view refusal_reason(Refusal refusal) {
  switch (refusal) {
    case Refusal::kBudget:
      return "budget";
    case Refusal::kUnavailable:
      return "unavailable";
    case Refusal::kRateLimit:
    case Refusal::kNone:
      break;
  }
  return "rate_limit";
}

ApiError refusal_error(const Admission& admission) {
  switch (admission.refusal) {
    case Refusal::kBudget:
      return {.status = 429,
              .type = "budget_exceeded",
              .message = "budget exceeded: " + admission.message,
              .code = "budget_exceeded"};
    case Refusal::kUnavailable:
      return {.status = 503,
              .type = "limits_unavailable",
              .message =
                  "the limits backend is unavailable, and this gateway refuses requests "
                  "it cannot count (limits.on_backend_error = \"closed\")",
              .code = "limits_unavailable"};
    case Refusal::kRateLimit:
    case Refusal::kNone:
      break;
  }
  return {.status = 429,
          .type = "rate_limit_exceeded",
          .message = "rate limit reached: " + admission.message,
          .code = "rate_limit_exceeded"};
}

// The refused request's log line (built here, not in refuse()'s coroutine frame).
void log_refusal(const ForwardRequest& request, unsigned status, uint64_t body_bytes,
                 std::chrono::steady_clock::time_point started, std::string_view reason) {
  RequestLogLine line = request_log_line(request);
  line.target = "none";
  line.status = status;
  line.bytes_out = body_bytes;
  line.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  line.limited = reason;
  log_request(line);
}

// The refused request's answer: no upstream is asked.
Task<ForwardResult> refuse(TimedStream& client, const ForwardRequest& request,
                           const Admission& admission, std::string_view fields,
                           const TenancyScope& scope) {
  const auto started = std::chrono::steady_clock::now();
  const ApiError error = refusal_error(admission);
  const std::string_view reason = refusal_reason(admission.refusal);
  if (scope.metrics != nullptr) scope.metrics->limit_refusal(reason);
  uint64_t body_bytes = 0;
  const auto ec = co_await write_error(client, request.style, error, request_id_of(request),
                                       request.client_keep_alive, 0, {}, fields, &body_bytes);
  log_refusal(request, error.status, body_bytes, started, reason);
  ForwardResult result;
  result.status = error.status;
  result.client_usable = !ec && request.client_keep_alive;
  co_return result;
}

// One answered request in the usage ledger (and the per-key series when asked for).
void record_usage(const TenancyScope& scope, const ServedUsage& usage, const Demand& demand,
                  uint64_t prompt_estimate) {
  if (!usage.served) return;
  UsageCounts counts{.requests = 1};
  if (usage.reported) {
    counts.input_tokens = usage.input_tokens;
    counts.cached_input_tokens = usage.cached_input_tokens;
    counts.output_tokens = usage.output_tokens;
    counts.usd = usage.usd;
  } else {
    counts.input_tokens = prompt_estimate;
    counts.output_tokens = demand.tokens - std::min(demand.tokens, prompt_estimate);
    counts.usd = demand.usd;
    counts.estimated = 1;
  }
  const std::string_view key = scope.key == nullptr ? "" : std::string_view(scope.key->name);
  const std::string_view team = scope.key == nullptr ? "" : std::string_view(scope.key->team);
  if (scope.ledger != nullptr) {
    scope.ledger->add(UsageKeyView{.hour_ms = usage_hour(scope.now_ms),
                                   .key = key,
                                   .team = team,
                                   .route = usage.route,
                                   .model = usage.target},
                      counts, scope.ledger_shard);
  }
  if (scope.per_key_metrics && scope.metrics != nullptr && scope.key != nullptr) {
    scope.metrics->key_usage(key, team, counts.input_tokens, counts.output_tokens, counts.usd);
  }
}

}  // namespace

uint64_t prompt_tokens_of(const ForwardRequest& request) {
  const std::optional<uint64_t> ids = request.ctx != nullptr && request.ctx->token_ids
                                          ? std::optional<uint64_t>(request.ctx->token_ids->size())
                                          : std::nullopt;
  return estimate_prompt_tokens(ids, request.body.size());
}

size_t applicable_rules(const ApiKey& key, std::string_view address,
                        std::array<const LimitRule*, Limiter::kMaxRules>& out) {
  size_t n = 0;
  for (const LimitRule& rule : key.rules) {
    if (n == out.size()) break;
    if (rule.applies_to(address)) out[n++] = &rule;
  }
  return n;
}

Demand request_demand(const ForwardRequest& request, uint64_t default_output_tokens,
                      uint64_t prompt) {
  // Embeddings produce no output tokens.
  const uint64_t output = request.kind == ApiKind::kEmbeddings
                              ? 0
                              : request.facts->output_cap.value_or(default_output_tokens);
  double usd = 0;
  for (const Candidate& c : request.route.pool->candidates) {
    usd = std::max(usd, c.prices.usd(prompt, 0, output));
  }
  return Demand{.tokens = prompt + output, .usd = usd};
}

Settlement settlement_of(const ServedUsage& usage, const Demand& demand) {
  if (!usage.served) return Settlement{};  // no upstream answered: nothing was used
  if (!usage.reported)
    return Settlement{.tokens = demand.tokens, .usd = demand.usd, .estimated = true};
  return Settlement{.tokens = usage.input_tokens + usage.output_tokens, .usd = usage.usd};
}

namespace {

// A key with rules: admitted (or refused), forwarded, settled and recorded. Its own frame holds
// the rules, the admission and the rate-limit fields, so that the frame of the common case (usage
// recorded, no limit) stays within Asio's recycled size.
Task<ForwardResult> forward_limited(Forwarder& forwarder, TimedStream& client, ClientWatch& watch,
                                    ForwardRequest request, const TenancyScope& scope) {
  std::array<const LimitRule*, Limiter::kMaxRules> rules{};
  const size_t count = scope.limiter != nullptr && scope.key != nullptr
                           ? applicable_rules(*scope.key, request.facts->model, rules)
                           : 0;
  const std::span<const LimitRule* const> active(rules.data(), count);
  const uint64_t prompt = prompt_tokens_of(request);
  Demand demand = request_demand(request, scope.default_output_tokens, prompt);
  Admission admission;
  std::string fields;
  if (count > 0) {
    demand.request_id = scope.request_id;
    demand.lease_ms = static_cast<int64_t>(scope.lease_ms);
    admission = co_await scope.limiter->admit(active, demand);
    if (admission.backend_error && scope.metrics != nullptr) {
      scope.metrics->limit_backend_error();
      if (admission.admitted()) scope.metrics->limit_refusal("backend_open");
    }
    append_rate_limit_headers(admission, fields);
    if (!admission.admitted()) {
      co_return co_await refuse(client, request, admission, fields, scope);
    }
    request.extra_fields = fields;
  }
  ServedUsage usage;
  request.usage = &usage;
  ForwardResult result = co_await forwarder.forward(client, watch, request);
  // An admission the backend could not count reserved nothing, so there is nothing to settle.
  if (count > 0 && !admission.backend_error) {
    scope.limiter->settle(active, demand, admission, settlement_of(usage, demand));
  }
  record_usage(scope, usage, demand, prompt);
  co_return result;
}

// No limit applies: forwarded, and what it used recorded.
Task<ForwardResult> forward_recorded(Forwarder& forwarder, TimedStream& client, ClientWatch& watch,
                                     ForwardRequest request, const TenancyScope& scope) {
  ServedUsage usage;
  request.usage = &usage;
  const ForwardResult result = co_await forwarder.forward(client, watch, request);
  const uint64_t prompt = prompt_tokens_of(request);
  record_usage(scope, usage, request_demand(request, scope.default_output_tokens, prompt), prompt);
  co_return result;
}

}  // namespace

Task<ForwardResult> forward_accounted(Forwarder& forwarder, TimedStream& client, ClientWatch& watch,
                                      const ForwardRequest& request, const TenancyScope& scope) {
  // Not a coroutine itself: the one it picks is the request's only frame here.
  if (scope.limiter != nullptr && scope.key != nullptr) {
    return forward_limited(forwarder, client, watch, request, scope);
  }
  return forward_recorded(forwarder, client, watch, request, scope);
}

}  // namespace rolter
