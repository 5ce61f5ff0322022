#include "proxy/forwarder.h"

#include <boost/beast/http/write.hpp>
#include <boost/container/small_vector.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "balance/explain.h"
#include "balance/kv_match.h"
#include "balance/split_decider.h"
#include "http/tokens.h"
#include "proxy/exchange.h"
#include "proxy/fallback.h"
#include "proxy/kv_transfer.h"
#include "proxy/prefill_call.h"
#include "proxy/queue_gate.h"
#include "proxy/request_line.h"
#include "proxy/request_log.h"

namespace rolter {
namespace http = beast::http;
using std::chrono::milliseconds;

namespace {

using Excluded = boost::container::small_vector<bool, 64>;

// The attempt loops' exclusions at the start: the candidates `key` (null: an open gateway) may not
// use.
Excluded not_allowed(const RoutePool& pool, const ApiKey* key) {
  Excluded excluded(pool.candidates.size(), false);
  for (size_t i = 0; i < excluded.size(); ++i) {
    excluded[i] = key != nullptr && !key->allows_provider(pool.candidates[i].provider->name);
  }
  return excluded;
}

// The answer when the client went away: nothing more is written to it.
ForwardResult gone(ForwardResult result) {
  result.client_usable = false;
  return result;
}

struct Choice {
  size_t index;
  bool bypass_admit;  // chosen although out (the soonest back): the breaker's admission is skipped
};

// The candidate for the next attempt, from the balancer's pick. A strategy may ignore
// eligibility (SPEC §5): its ineligible answer is replaced by the first eligible candidate. When
// everything is out, rather than fail, the candidate that comes back soonest by itself (parking or
// an open breaker ends) is tried; unhealthy ones do not come back on a timer (SPEC §8).
template <typename Eligible>
std::optional<Choice> choose(const RoutePool& pool, std::optional<size_t> pick,
                             const Eligible& eligible, const Excluded& excluded,
                             Clock::TimePoint now, const BreakerParams& breaker) {
  const size_t n = pool.candidates.size();
  if (pick && eligible(*pick)) return Choice{*pick, false};
  for (size_t i = 0; i < n; ++i) {
    if (eligible(i)) return Choice{i, false};
  }
  std::optional<Choice> soonest_back;
  int64_t soonest = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < n; ++i) {
    if (excluded[i]) continue;
    const auto& health = pool.candidates[i].state->health;
    if (availability(health, now, breaker) == OutReason::kUnhealthy) continue;
    if (const int64_t at = back_at(health, breaker); at < soonest) {
      soonest = at;
      soonest_back = Choice{i, true};
    }
  }
  return soonest_back;
}

// What an attempt teaches about its instance (SPEC §8): parking, the breaker, nothing at all.
void learn(const AttemptReport& report, const Candidate& candidate, const Snapshot& snapshot,
           Clock::TimePoint after) {
  auto& health = candidate.state->health;
  const BreakerParams& breaker = snapshot.breaker();
  if (report.auth_rejected) {
    // A credentials problem is the operator's to fix; the instance itself is fine.
  } else if (report.refused) {
    park_refused(health, after);
    record_failure(health, after, breaker);
    Metrics::count_park(candidate.endpoint_instruments, Metrics::ParkReason::kRefused);
  } else if (report.status == 429) {
    const auto cap = milliseconds(snapshot.config().retry.park_on_429_max_ms);
    const auto wait = report.retry_after.value_or(std::chrono::seconds(1));
    park_for(health, after, std::min<Clock::Duration>(wait, cap));
    Metrics::count_park(candidate.endpoint_instruments, Metrics::ParkReason::kRateLimited);
    record_success(health);  // it answered: rate limiting is not a fault of the instance
  } else if (report.status >= 500 || report.broken ||
             (report.status == 0 && report.outcome == Outcome::kFailed)) {
    record_failure(health, after, breaker);
  } else if (report.status != 0) {
    record_success(health);
  }
}

// The explanation of one pick starts with what the gateway itself knows of every candidate:
// whether it may take this attempt, and its load. The strategy adds its scores and reasons.
template <typename Eligible>
Explain start_explain(const RoutePool& pool, const Loads& loads, const Eligible& eligible) {
  Explain explain(pool.candidates.size());
  for (size_t i = 0; i < pool.candidates.size(); ++i) {
    explain.eligible(i, eligible(i));
    explain.load(i, loads[i]);
  }
  return explain;
}

std::string finish_explain(Explain& explain, const RoutePool& pool, std::optional<size_t> pick,
                           size_t chosen) {
  if (!pick) {
    explain.reason("the strategy made no pick; the gateway chose " +
                   pool.candidates[chosen].explain_name);
  } else if (*pick != chosen) {
    explain.reason("the strategy picked " + pool.candidates[*pick].explain_name +
                   ", which cannot take this attempt; the gateway chose " +
                   pool.candidates[chosen].explain_name);
  }
  std::vector<std::string> names;
  names.reserve(pool.candidates.size());
  for (const auto& c : pool.candidates) names.push_back(c.explain_name);
  return explain.to_json(pool.strategy, names, chosen);
}

// A successful answer teaches the latency evidence (SPEC §6.11, §6.13): the time until the client
// had its first token (the whole answer, for a non-streaming one), the queue it joined, and the
// prompt's size. Failures and broken streams teach nothing: only successes update the models.
void record_evidence(const AttemptReport& report, const Candidate& candidate,
                     const RouteContext& ctx, InstanceEvidence::Sample sample,
                     std::chrono::steady_clock::time_point attempt_started) {
  if (report.status < 200 || report.status >= 300 || report.broken || report.client_gone) return;
  const auto first = report.first_token.value_or(std::chrono::steady_clock::now());
  const double latency_ms =
      std::chrono::duration<double, std::milli>(first - attempt_started).count();
  sample.prompt_ktokens = ctx.prompt_ktokens();
  sample.latency_ms = latency_ms;
  candidate.state->evidence.record_success(sample);
}

// What a relayed answer used, for the caller's settlement and usage record.
void note_usage(ServedUsage& usage, const RoutePool& pool, const Candidate& candidate,
                const AttemptReport& report) {
  usage.served = true;
  usage.route = pool.name;
  usage.target = candidate.label;
  const auto input = report.usage.input_tokens();
  const auto output = report.usage.output_tokens();
  usage.reported = input.has_value() || output.has_value();
  if (!usage.reported) return;
  usage.input_tokens = input.value_or(0);
  usage.cached_input_tokens = report.usage.cached_input_tokens();
  usage.output_tokens = output.value_or(0);
  usage.usd =
      candidate.prices.usd(usage.input_tokens, usage.cached_input_tokens, usage.output_tokens);
}

// Metrics and the log line of a relayed response, which ended at `ended`. A client that left before
// the end is logged and counted as 499, never as the relayed status: it did not get it (nginx's
// "client closed request").
void log_relayed(const ForwardRequest& request, const Candidate& candidate,
                 const AttemptReport& report, unsigned attempts, const AttemptLog& tries,
                 std::chrono::steady_clock::time_point started,
                 std::chrono::steady_clock::time_point ended) {
  const RoutePool& pool = *request.route.pool;
  auto since_start = [&](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(t - started).count();
  };
  const unsigned logged_status = report.client_gone ? kClientClosedRequest : report.status;
  Metrics::count_response(candidate.instruments, logged_status);
  std::optional<double> ttft;
  if (report.first_token) {
    ttft = since_start(*report.first_token);
    Metrics::observe_seconds(pool.instruments.ttft, *ttft);
    Metrics::observe_seconds(candidate.instruments.ttft, *ttft);
  }
  const double duration = since_start(ended);
  Metrics::observe_seconds(pool.instruments.duration, duration);
  Metrics::observe_seconds(candidate.instruments.duration, duration);
  Metrics::count_tokens(pool.instruments, report.usage.input_tokens(),
                        report.usage.output_tokens());
  if (request.usage != nullptr) note_usage(*request.usage, pool, candidate, report);
  RequestLogLine line = request_log_line(request);
  line.target = candidate.label;
  line.endpoint = candidate.endpoint->base_url;
  line.attempts = attempts;
  line.tries = tries.entries();
  line.queue_ms = tries.queue_ms();
  line.status = logged_status;
  line.upstream_status = report.status;
  line.bytes_out = report.bytes_out;
  line.duration_s = duration;
  line.ttft_s = ttft;
  line.tokens_in = report.usage.input_tokens();
  line.tokens_out = report.usage.output_tokens();
  line.complete = !report.broken && !report.client_gone;
  line.usage_estimated = request.usage != nullptr && !request.usage->reported;
  log_request(line);
}

// Why an attempt did not answer the client, for the access log; kNone when it did.
AttemptReason reason_of(const AttemptReport& report) {
  if (report.outcome == Outcome::kRelayed) return AttemptReason::kNone;
  if (report.auth_rejected) return AttemptReason::kUpstreamAuth;
  if (report.context_length) return AttemptReason::kContextLength;
  if (report.content_filter) return AttemptReason::kContentFilter;
  if (report.reason != AttemptReason::kNone) return report.reason;
  if (report.status != 0) return AttemptReason::kStatus;
  return AttemptReason::kResponseError;
}

// Records an attempt for the access log.
void note_attempt(AttemptLog& tries, const Candidate& candidate, const AttemptReport& report,
                  std::chrono::steady_clock::time_point started,
                  std::chrono::steady_clock::time_point ended, AttemptStep step) {
  tries.add(AttemptEntry{.endpoint = candidate.endpoint->base_url,
                         .ms = std::chrono::duration<float, std::milli>(ended - started).count(),
                         .status = static_cast<uint16_t>(report.status),
                         .reason = reason_of(report),
                         .step = step});
}

}  // namespace

// The failed attempts of a request on one route, for its error answer. Targets are named as
// clients know them; internal URLs stay out of answers.
struct RouteFailures {
  std::string text;
  bool all_timeouts = true;
  bool all_auth_rejected = true;
  bool all_rate_limited = true;    // every attempt answered 429 (SPEC §16, rate_limited)
  bool all_context_length = true;  // every attempt said the prompt is too long
  bool all_content_filter = true;  // every attempt's content filter refused the request

  void add(const Candidate& candidate, const AttemptReport& report) {
    all_timeouts = all_timeouts && report.timed_out;
    all_auth_rejected = all_auth_rejected && report.auth_rejected;
    all_rate_limited = all_rate_limited && report.status == 429;
    all_context_length = all_context_length && report.context_length;
    all_content_filter = all_content_filter && report.content_filter;
    if (!text.empty()) text.append("; ");
    text.append(candidate.label).append(": ").append(report.error);
  }
};

// How a route's attempt loop ended without an answer.
struct RouteEnd {
  unsigned route_attempts;                        // attempts on this route
  unsigned attempts;                              // attempts on every route so far
  Clock::TimePoint now;                           // for the out reasons of the 503
  std::chrono::steady_clock::time_point started;  // the request's start
};

namespace {

// The gateway's own answer when no attempt produced one: 503 naming why each candidate was out
// when none could be tried, else 504 when every attempt timed out, else 502.
ApiError no_answer(const ForwardRequest& request, unsigned attempts, const RouteFailures& failures,
                   Clock::TimePoint now) {
  const auto& pool = *request.route.pool;
  ApiError error;
  if (attempts == 0) {
    error.status = 503;
    error.message = "no eligible target for '" + pool.name + "':";
    for (size_t i = 0; i < pool.candidates.size(); ++i) {
      const auto& c = pool.candidates[i];
      error.message.append(i == 0 ? " " : "; ").append(c.label).append(": ");
      if (request.key != nullptr && !request.key->allows_provider(c.provider->name)) {
        error.message.append("not allowed to this key");
      } else {
        error.message.append(
            out_reason_text(availability(c.state->health, now, request.snapshot->breaker())));
      }
    }
    return error;
  }
  error.status = failures.all_timeouts ? 504 : 502;
  error.message = "all " + std::to_string(attempts) + " attempts failed: " + failures.text;
  if (failures.all_auth_rejected) error.code = "upstream_auth_failed";
  return error;
}

// The next attempt's candidate, the evidence sample read before the attempt adds its own load
// (SPEC §6.11: the queue it joined, the prefill queued there, and the prefill it will do there:
// the prompt less what the instance's KV index holds now, §6.14), and the pick's explanation when
// the client asked for one. A plain function, so its working state (a copy of the route context,
// the explanation) stays off the attempt loop's coroutine frame.
struct Selection {
  Choice choice;
  InstanceEvidence::Sample sample;
  // The candidates' scores (x-rolter-decision's JSON); empty unless the client asked for it or
  // the request is traced.
  std::string decision;
  std::string_view reason;  // why this candidate, for the rolter.route span
};

// Why `choice` was chosen over the strategy's `pick`, as a rolter.route span says it.
std::string_view pick_reason(std::optional<size_t> pick, const Choice& choice) {
  if (choice.bypass_admit) return "all_out_soonest_back";
  if (!pick) return "no_strategy_pick";
  if (*pick != choice.index) return "strategy_pick_ineligible";
  return "strategy_pick";
}

template <typename Eligible>
std::optional<Selection> select(const ForwardRequest& request, const Loads& loads,
                                const Eligible& eligible, const Excluded& excluded,
                                Clock::TimePoint now, const BreakerParams& breaker) {
  const auto& pool = *request.route.pool;
  // Flow control (SPEC §19): while some eligible candidate has room, the pick is among those, so
  // a request the queue let through lands where the room is, not on a saturated instance.
  const FlowCapacity* capacity = pool.flow ? pool.flow->capacity.get() : nullptr;
  bool only_roomy = false;
  for (size_t i = 0; capacity != nullptr && !only_roomy && i < pool.candidates.size(); ++i) {
    only_roomy = eligible(i) && capacity->has_room(i, now);
  }
  auto may_take = [&](size_t i) {
    return eligible(i) && (!only_roomy || capacity->has_room(i, now));
  };
  std::optional<Explain> explain;
  RouteContext ctx = *request.ctx;
  // A recorded request's rolter.route span carries the explanation too.
  const bool recorded = request.trace != nullptr && request.trace->recording();
  if (request.explain || recorded) {
    ctx.explain = &explain.emplace(start_explain(pool, loads, may_take));
  }
  const auto pick = pool.balancer->pick_eligible(ctx, loads, may_take);
  const auto choice = choose(pool, pick, may_take, excluded, now, breaker);
  if (!choice) return std::nullopt;
  const Candidate& candidate = pool.candidates[choice->index];
  Selection selection{.choice = *choice, .reason = pick_reason(pick, *choice)};
  selection.sample = {.queue_depth = static_cast<double>(loads[choice->index]),
                      .queued_prefill_ktokens = loads.prefill_ktokens(choice->index)};
  // The keys live in a thread-local buffer, so they must not outlive this step.
  RequestBlockKeys keys(*request.ctx);
  selection.sample.uncached_ktokens = uncached_ktokens(*request.ctx, &candidate.state->kv, keys);
  if (explain) selection.decision = finish_explain(*explain, pool, pick, choice->index);
  return selection;
}

// gen_ai.operation.name (OpenTelemetry's GenAI conventions) of a request to `kind`.
std::string_view gen_ai_operation(ApiKind kind) {
  switch (kind) {
    case ApiKind::kCompletions:
      return "text_completion";
    case ApiKind::kEmbeddings:
      return "embeddings";
    case ApiKind::kChatCompletions:
    case ApiKind::kResponses:
    case ApiKind::kMessages:
      break;
  }
  return "chat";
}

// gen_ai.provider.name of a target of `kind`: the API it speaks, as the conventions name it.
std::string_view gen_ai_provider(ProviderKind kind) {
  switch (kind) {
    case ProviderKind::kAnthropic:
      return "anthropic";
    case ProviderKind::kGemini:
      return "gcp.gemini";
    case ProviderKind::kOpenAi:
    case ProviderKind::kDecisionService:
      break;
  }
  return "openai";
}

bool traced(const ForwardRequest& request) {
  return request.trace != nullptr && request.trace->recording();
}

// The rolter.route span of one pick (`selection` null: no candidate could be chosen).
void trace_route(const ForwardRequest& request, const Selection* selection, unsigned attempt) {
  if (!traced(request)) return;
  const RoutePool& pool = *request.route.pool;
  RouteSpanFacts facts{.route = pool.name, .strategy = pool.strategy, .attempt = attempt};
  if (selection != nullptr) {
    facts.winner = pool.candidates[selection->choice.index].label;
    facts.reason = selection->reason;
    facts.decision = selection->decision;
  } else {
    facts.reason = "no_eligible_candidate";
  }
  request.trace->end_route(facts);
}

// The rolter.upstream span of one attempt.
void trace_attempt(const ForwardRequest& request, const AttemptParams& params,
                   const AttemptReport& report,
                   std::chrono::steady_clock::time_point attempt_started) {
  if (!traced(request)) return;
  const Candidate& candidate = *params.candidate;
  const bool relayed = report.outcome == Outcome::kRelayed;
  std::optional<double> ttft;
  if (relayed && report.first_token) {
    ttft = std::chrono::duration<double>(*report.first_token - attempt_started).count();
  }
  std::string_view error = report.error;
  if (relayed && report.broken) error = "the answer broke off mid-body";
  request.trace->end_attempt({.endpoint = candidate.state->identity,
                              .target = candidate.label,
                              .provider_name = gen_ai_provider(candidate.provider->kind),
                              .model = params.model,
                              .attempt = params.attempt_number,
                              .status = report.status,
                              .relayed = relayed,
                              .error = error,
                              .ttft_s = ttft,
                              .input_tokens = report.usage.input_tokens(),
                              .output_tokens = report.usage.output_tokens()});
}

// Whether `status` is retried on another candidate (retry.on_status).
// The attempts one route (or one step of a disaggregated route) may make: retry.max_attempts, at
// least one.
unsigned attempt_budget(const Snapshot& snapshot) {
  return std::max<unsigned>(1, snapshot.config().retry.max_attempts);
}

bool retries_status(const Snapshot& snapshot, unsigned status) {
  const auto& on_status = snapshot.config().retry.on_status;
  return std::find(on_status.begin(), on_status.end(), status) != on_status.end();
}

// Whether a prompt too long for request.route's targets may go to a fallback route rather than
// the error to the client.
bool may_fall_back_on_context_length(const ForwardRequest& request, const FallbackTrail* trail) {
  if (trail != nullptr) return trail->more_after_this && trail->origin->fallback_on.context_length;
  const RoutePool& pool = *request.route.pool;
  return pool.fallback_on.context_length &&
         fallback_hops(pool, request.snapshot->config().retry.max_fallbacks) > 0;
}

// The same for a request the route's content filters refuse.
bool may_fall_back_on_content_filter(const ForwardRequest& request, const FallbackTrail* trail) {
  if (trail != nullptr) return trail->more_after_this && trail->origin->fallback_on.content_filter;
  const RoutePool& pool = *request.route.pool;
  return pool.fallback_on.content_filter &&
         fallback_hops(pool, request.snapshot->config().retry.max_fallbacks) > 0;
}

// Whether a 429 on request.route may be given up for a fallback route rather than relayed.
bool may_fall_back_on_429(const ForwardRequest& request, const FallbackTrail* trail) {
  if (trail != nullptr) return trail->more_after_this && trail->origin->fallback_on.rate_limited;
  const RoutePool& pool = *request.route.pool;
  return pool.fallback_on.rate_limited &&
         fallback_hops(pool, request.snapshot->config().retry.max_fallbacks) > 0;
}

// The gateway's own answer to the client, counted on `pool` and logged.
struct OwnAnswer {
  const ApiError* error;
  unsigned attempts;
  const AttemptLog* tries;
  std::string_view fallbacks;  // the routes given up on
  std::chrono::steady_clock::time_point started;
};

}  // namespace

Task<error_code> write_error(TimedStream& client, ErrorStyle style, const ApiError& error,
                             std::string_view request_id, bool keep_alive, unsigned attempts,
                             std::string_view fallbacks, std::string_view extra_fields,
                             uint64_t* body_bytes) {
  http::response<http::string_body> res{static_cast<http::status>(error.status), 11};
  res.set(http::field::content_type, "application/json");
  if (!request_id.empty()) res.set("x-request-id", request_id);
  if (attempts > 0) res.set("x-rolter-attempts", std::to_string(attempts));
  if (!fallbacks.empty()) res.set("x-rolter-fallbacks", fallbacks);
  for_each_field_line(extra_fields,
                      [&](std::string_view name, std::string_view value) { res.set(name, value); });
  res.body() = error_body(style, error, request_id);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  auto [ec, n] = co_await http::async_write(client, res, kNoThrow);
  if (body_bytes != nullptr) *body_bytes = ec ? 0 : res.body().size();
  co_return ec;
}

namespace {

// The log lines are built in plain functions: a coroutine would keep them in its frame.

// The log line of the gateway's own answer.
void log_own_answer(const ForwardRequest& request, const OwnAnswer& answer, unsigned status,
                    uint64_t body_bytes, double duration) {
  RequestLogLine line = request_log_line(request);
  line.fallbacks = answer.fallbacks;
  line.target = "none";
  line.attempts = answer.attempts;
  line.tries = answer.tries->entries();
  line.queue_ms = answer.tries->queue_ms();
  line.status = status;
  line.bytes_out = body_bytes;
  line.duration_s = duration;
  log_request(line);
}

// The log line of a request whose client left before its answer.
void log_client_gone(const ForwardRequest& request, unsigned attempts, const AttemptLog& tries,
                     std::chrono::steady_clock::time_point started) {
  RequestLogLine line = request_log_line(request);
  line.target = "none";
  line.attempts = attempts;
  line.tries = tries.entries();
  line.queue_ms = tries.queue_ms();
  line.status = kClientClosedRequest;
  line.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  log_request(line);
}

// Writes the gateway's own answer, counts it on the request's first route, and logs it.
Task<ForwardResult> answer_self(TimedStream& client, const ForwardRequest& request,
                                const OwnAnswer& answer) {
  const auto& pool = *request.route.pool;
  const ApiError& error = *answer.error;
  Metrics::count_response(pool.no_target, error.status);
  uint64_t body_bytes = 0;
  const auto ec = co_await write_error(client, request.style, error, request_id_of(request),
                                       request.client_keep_alive, answer.attempts,
                                       answer.fallbacks, request.extra_fields, &body_bytes);
  if (request.trace != nullptr) request.trace->set_served_by(pool.name, {}, answer.attempts);
  const double duration =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - answer.started).count();
  Metrics::observe_seconds(pool.instruments.duration, duration);
  log_own_answer(request, answer, error.status, body_bytes, duration);
  ForwardResult result;
  result.attempts = answer.attempts;
  result.status = error.status;
  result.client_usable = !ec && request.client_keep_alive;
  co_return result;
}

}  // namespace

Task<ForwardResult> Forwarder::forward(TimedStream& client, ClientWatch& watch,
                                       const ForwardRequest& request) {
  // The attempts are recorded on this small frame of their own, rather than on forward_logged()'s:
  // a frame past Asio's recycling size (1020 bytes) would cost a malloc per request.
  AttemptLog tries;
  co_return co_await forward_logged(client, watch, request, tries);
}

Task<ForwardResult> Forwarder::forward_logged(TimedStream& client, ClientWatch& watch,
                                              const ForwardRequest& request, AttemptLog& tries) {
  const auto started = std::chrono::steady_clock::now();
  if (request.trace != nullptr) {
    request.trace->set_gen_ai_request(gen_ai_operation(request.kind), request.facts->model);
  }
  // A client that stops reading cannot hold a worker's stream beyond the request's own deadline.
  client.expires_at(started + milliseconds(request.snapshot->config().server.upstream_timeout_ms));
  watch.arm();
  // Flow control (SPEC §19): on a saturated route the request may wait its turn, or be shed.
  // Every other request pays one check (its frame holds nothing of the queue's); on a route with
  // a queue it still reports its end, for the queue's drain rate.
  ForwardResult result;
  if (flow_open(request, clock_.now())) {
    // (An if rather than ?: : GCC 12 miscompiles co_await in a conditional expression.)
    if (request.route.pool->prefill == nullptr) {
      result = co_await run_attempts(client, request, watch, tries);
    } else {
      result = co_await run_disaggregated(client, request, watch, tries);
    }
    release_queue_slot(request);
  } else {
    result = co_await run_queued(client, request, watch, tries);
  }
  watch.disarm();
  if (!watch.gone() || result.status != 0) {
    // A half-closed client sends nothing more: the connection ends with this answer.
    if (watch.half_closed() || watch.gone()) result.client_usable = false;
    co_return result;
  }
  // The client left before its answer: 499, once, as nginx logs it; never a 5xx.
  const auto& pool = *request.route.pool;
  Metrics::count_response(pool.no_target, kClientClosedRequest);
  log_client_gone(request, result.attempts, tries, started);
  ForwardResult gone;
  gone.client_usable = false;
  gone.status = kClientClosedRequest;
  co_return gone;
}

Task<ForwardResult> Forwarder::run_queued(TimedStream& client,
                                          const ForwardRequest& request, ClientWatch& watch,
                                          AttemptLog& tries) {
  QueuePass pass;
  for (;;) {
    co_await pass_queue(client, watch, request, pass);
    if (pass.queue_ms) tries.set_queue_ms(*pass.queue_ms);
    if (pass.answered) co_return *pass.answered;
    const ForwardRequest& forwarded = pass.forwarded(request);
    ForwardResult result;
    if (forwarded.route.pool->prefill == nullptr) {
      result = co_await run_attempts(client, forwarded, watch, tries);
    } else {
      result = co_await run_disaggregated(client, forwarded, watch, tries);
    }
    // Displaced by a higher band before anything was answered: it waits its turn again.
    const bool again = pass.displaced() && result.status == 0 && !watch.gone();
    pass.attempts = result.attempts;
    leave_queue_slot(request, watch, pass, !again);
    if (!again) co_return result;
  }
}

Task<ForwardResult> Forwarder::run_attempts(TimedStream& client,
                                            const ForwardRequest& request, ClientWatch& watch,
                                            AttemptLog& tries, FallbackTrail* trail) {
  const auto& snapshot = *request.snapshot;
  const auto& server = snapshot.config().server;
  const BreakerParams& breaker = snapshot.breaker();
  const auto& pool = *request.route.pool;
  const size_t n = pool.candidates.size();
  const Loads loads = pool.loads();
  // A fallback route shares the request's start and deadline, and continues its attempt count; so
  // does a decode step (request.started).
  const auto started =
      trail != nullptr                                                   ? trail->started
      : request.started != std::chrono::steady_clock::time_point{} ? request.started
                                                                   : std::chrono::steady_clock::now();
  const auto deadline =
      trail != nullptr ? trail->deadline : started + milliseconds(server.upstream_timeout_ms);
  const unsigned max_attempts = attempt_budget(snapshot);
  // On earlier routes, or earlier steps.
  const unsigned earlier = trail != nullptr ? trail->attempts : request.earlier_attempts;
  const bool fall_back_on_429 = may_fall_back_on_429(request, trail);
  const bool fall_back_on_context = may_fall_back_on_context_length(request, trail);
  const bool fall_back_on_filter = may_fall_back_on_content_filter(request, trail);

  // `excluded`: tried in this request, or not allowed to the key. Eligible adds availability.
  Excluded excluded = not_allowed(pool, request.key);
  auto now = clock_.now();
  auto eligible = [&](size_t i) {
    return i < n && !excluded[i] &&
           availability(pool.candidates[i].state->health, now, breaker) == OutReason::kNone;
  };
  RouteFailures failures;
  ForwardResult result;
  result.attempts = earlier;

  for (;;) {
    // An attempt's time runs from here: its pick, its exchange.
    const auto attempt_started = std::chrono::steady_clock::now();
    // No new attempt once the request's own deadline has passed: it could only time out at once,
    // and would count against an instance that never saw the request.
    if (result.attempts - earlier >= max_attempts || attempt_started >= deadline) break;
    if (watch.gone()) co_return gone(result);
    now = clock_.now();
    if (request.trace != nullptr) request.trace->start_route();
    const std::optional<Selection> selection =
        select(request, loads, eligible, excluded, now, breaker);
    trace_route(request, selection ? &*selection : nullptr, result.attempts + 1);
    if (!selection) break;
    const Candidate& candidate = pool.candidates[selection->choice.index];
    excluded[selection->choice.index] = true;
    if (!selection->choice.bypass_admit && !admit(candidate.state->health, now, breaker)) {
      continue;  // lost a half-open probe race
    }
    const unsigned attempt_number = ++result.attempts;
    Metrics::count_pick(candidate.instruments);
    if (attempt_number > earlier + 1) Metrics::count_retry(pool.instruments);
    InFlightGuard guard(*candidate.state);
    PrefillTicket prefill(
        *candidate.state,
        static_cast<uint64_t>(std::llround(selection->sample.uncached_ktokens * 1000)));
    // This attempt's span id, named by the traceparent its request carries upstream.
    if (request.trace != nullptr) request.trace->start_attempt();
    const AttemptParams params{
        .request = &request,
        .candidate = &candidate,
        .model = request.route.upstream_model(selection->choice.index),
        .may_retry = request.more_after ||
                     (attempt_number - earlier < max_attempts &&
                      std::any_of(excluded.begin(), excluded.end(), [](bool e) { return !e; })),
        .may_fall_back_on_429 = fall_back_on_429 && failures.all_rate_limited,
        .may_fall_back_on_context_length = fall_back_on_context && failures.all_context_length,
        .may_fall_back_on_content_filter = fall_back_on_filter && failures.all_content_filter,
        .attempt_number = attempt_number,
        .first_byte_timeout = milliseconds(server.first_byte_timeout_ms),
        .deadline = deadline,
        .decision = request.explain ? std::string_view(selection->decision) : std::string_view(),
        .prefill = &prefill,
        .watch = &watch,
    };
    const AttemptReport report = co_await attempt(client, params, watch);
    const auto attempt_ended = std::chrono::steady_clock::now();
    note_attempt(tries, candidate, report, attempt_started, attempt_ended, request.step);
    trace_attempt(request, params, report, attempt_started);

    // A client that went away cut the attempt short: that says nothing about the instance, and
    // there is no one left to answer (forward_logged() logs the 499).
    if (watch.gone()) co_return gone(result);
    // Displaced by a higher band before it answered: nobody was answered and the instance did
    // nothing wrong; run_queued() puts the request back in its queue.
    if (report.reason == AttemptReason::kDisplaced) co_return result;
    learn(report, candidate, snapshot, clock_.now());
    if (report.outcome == Outcome::kRelayed) {
      record_evidence(report, candidate, *request.ctx, selection->sample, attempt_started);
      log_relayed(request, candidate, report, result.attempts, tries, started, attempt_ended);
      if (request.trace != nullptr) {
        request.trace->set_served_by(pool.name, candidate.label, result.attempts);
      }
      result.client_usable = report.client_usable;
      result.status = report.status;
      co_return result;
    }
    failures.add(candidate, report);
    // A 429 kept from the client only to fall back for it: no other candidate of this route.
    if (report.status == 429 && !retries_status(snapshot, 429)) break;
  }
  const RouteEnd end{.route_attempts = result.attempts - earlier,
                     .attempts = result.attempts,
                     .now = now,
                     .started = started};
  co_return co_await route_failed(client, request, watch, failures, end, trail, tries);
}

Task<ForwardResult> Forwarder::route_failed(TimedStream& client,
                                            const ForwardRequest& request, ClientWatch& watch,
                                            const RouteFailures& failures, const RouteEnd& end,
                                            FallbackTrail* trail, AttemptLog& tries) {
  const auto& pool = *request.route.pool;
  const ApiError error = no_answer(request, end.route_attempts, failures, end.now);
  const RoutePool& origin = trail != nullptr ? *trail->origin : pool;
  const FallbackCause cause =
      fallback_cause(origin.fallback_on, end.route_attempts, failures.all_rate_limited,
                     failures.all_context_length, failures.all_content_filter);
  if (trail != nullptr) {
    trail->attempts = end.attempts;
    trail->cause = cause;
    trail->give_up(pool.name, error, failures.all_timeouts, failures.all_auth_rejected);
    ForwardResult result;
    result.attempts = end.attempts;
    co_return result;  // status 0: fall_back() decides what comes next
  }
  if (cause != FallbackCause::kNone &&
      fallback_hops(pool, request.snapshot->config().retry.max_fallbacks) > 0) {
    co_return co_await fall_back(client, request, watch, error, failures, end, tries);
  }
  co_return co_await answer_self(
      client, request,
      OwnAnswer{
          .error = &error, .attempts = end.attempts, .tries = &tries, .started = end.started});
}

Task<ForwardResult> Forwarder::fall_back(TimedStream& client, const ForwardRequest& request,
                                         ClientWatch& watch, const ApiError& error,
                                         const RouteFailures& failures, const RouteEnd& end,
                                         AttemptLog& tries) {
  const RoutePool& origin = *request.route.pool;
  const Snapshot& snapshot = *request.snapshot;
  const size_t hops = fallback_hops(origin, snapshot.config().retry.max_fallbacks);
  FallbackTrail trail{
      .origin = &origin,
      .started = end.started,
      .deadline = end.started + milliseconds(snapshot.config().server.upstream_timeout_ms),
      .attempts = end.attempts};
  trail.give_up(origin.name, error, failures.all_timeouts, failures.all_auth_rejected);
  // The origin's decision-service verdict named the origin's models: a fallback route's policy
  // decides without one.
  RouteContext ctx = *request.ctx;
  ctx.decision = nullptr;
  ForwardRequest hop = request;
  hop.ctx = &ctx;
  // A fallback route serves the client's body whole, whatever step brought the request here.
  if (request.client_request != nullptr) hop.body = request.client_request->body;
  hop.step = AttemptStep::kWhole;
  hop.more_after = false;
  ForwardResult result;
  result.attempts = end.attempts;
  for (size_t i = 0; i < hops && std::chrono::steady_clock::now() < trail.deadline; ++i) {
    const RoutePool& next = *origin.fallbacks[i];
    if (i < origin.fallback_counters.size()) Metrics::count(origin.fallback_counters[i]);
    hop.route = ResolvedRoute{.pool = &next, .requested_model = request.route.requested_model};
    hop.fallbacks = trail.given_up;
    trail.more_after_this = i + 1 < hops;
    result = co_await run_attempts(client, hop, watch, tries, &trail);
    if (result.status != 0 || !result.client_usable) co_return result;  // answered, or gone
    if (trail.cause == FallbackCause::kNone) break;
  }
  const ApiError final_error = trail.final_error();
  co_return co_await answer_self(client, request,
                                 OwnAnswer{.error = &final_error,
                                           .attempts = trail.attempts,
                                           .tries = &tries,
                                           .fallbacks = trail.given_up,
                                           .started = trail.started});
}

// What step 1 of a disaggregated request came to.
struct PrefillOutcome {
  std::string params;     // the transfer parameters; empty when no prefill worker gave them
  unsigned attempts = 0;  // the request's attempts, step 1's included
};

namespace {

// SPEC §18's split decision, from the KV indexes of the decode candidates that may serve the
// request now.
SplitDecision split_decision(const ForwardRequest& request, Clock::TimePoint now) {
  const RoutePool& pool = *request.route.pool;
  const BreakerParams& breaker = request.snapshot->breaker();
  boost::container::small_vector<const KvResidency*, 16> kv;
  for (const Candidate& c : pool.candidates) {
    if (request.key != nullptr && !request.key->allows_provider(c.provider->name)) continue;
    if (availability(c.state->health, now, breaker) != OutReason::kNone) continue;
    kv.push_back(&c.state->kv);
  }
  return decide_split(*request.ctx, kv, pool.min_uncached_tokens);
}

// A prefill call as the attempt bookkeeping (learn, the access log, the trace) reads an attempt.
AttemptReport prefill_report(const PrefillCall& call) {
  AttemptReport report;
  report.status = call.status;
  report.timed_out = call.timed_out;
  report.refused = call.refused;
  report.error = call.error;
  if (call.ok()) {
    report.outcome = Outcome::kRelayed;  // it answered as asked (nothing reached the client)
  } else if (call.refused) {
    report.reason = AttemptReason::kConnectRefused;
  } else if (call.timed_out) {
    report.reason = AttemptReason::kFirstByteTimeout;
  } else if (call.status == 200) {
    report.reason = AttemptReason::kKvTransfer;
  } else if (call.status == 0) {
    report.reason = AttemptReason::kResponseError;
  }
  return report;
}

// Whether a failed prefill says the request itself is at fault (a 4xx other than 408 and 429):
// every prefill worker would say the same, and the decode worker, serving it whole, answers the
// client with its own error.
bool request_refused(const PrefillCall& call) {
  return call.status >= 400 && call.status < 500 && call.status != 408 && call.status != 429;
}

}  // namespace

Task<ForwardResult> Forwarder::run_disaggregated(TimedStream& client,
                                                 const ForwardRequest& request, ClientWatch& watch,
                                                 AttemptLog& tries) {
  const RoutePool& pool = *request.route.pool;
  const auto started = std::chrono::steady_clock::now();
  const SplitDecision decision = split_decision(request, clock_.now());
  const auto count = static_cast<size_t>(decision.source);
  // A client that drives the connector itself keeps its own parameters.
  if (!decision.disaggregate || carries_kv_transfer_params(request.body)) {
    Metrics::count_split(pool.disaggregation, Metrics::SplitPath::kAggregated, count);
    co_return co_await run_attempts(client, request, watch, tries);
  }
  ForwardRequest decode = request;
  decode.started = started;
  decode.step = AttemptStep::kDecode;
  decode.client_request = &request;
  std::string decode_body;
  unsigned attempts = 0;
  for (int round = 0; round < 2; ++round) {
    PrefillOutcome prefill = co_await run_prefill(request, watch, tries, attempts, started);
    attempts = prefill.attempts;
    if (watch.gone()) co_return gone(ForwardResult{.attempts = attempts});
    if (prefill.params.empty()) {
      // No prefill worker answered: the decode worker computes the prompt itself.
      Metrics::count_split(pool.disaggregation, Metrics::SplitPath::kPrefillFailed, count);
      decode.body = request.body;
      decode.step = AttemptStep::kWhole;
      decode.earlier_attempts = attempts;
      co_return co_await run_attempts(client, decode, watch, tries);
    }
    if (round == 0) {
      Metrics::count_split(pool.disaggregation, Metrics::SplitPath::kDisaggregated, count);
    }
    decode_body = with_kv_transfer_params(request.body, prefill.params);
    decode.body = decode_body;
    decode.earlier_attempts = attempts;
    if (round == 1) break;
    // Every decode worker that may take it, with these parameters; their failure is kept from the
    // client (status 0) so that step 1 may run once more.
    decode.more_after = true;
    FallbackTrail trail{.origin = &pool,
                        .started = started,
                        .deadline = started + milliseconds(
                                                  request.snapshot->config().server.upstream_timeout_ms),
                        .attempts = attempts};
    ForwardResult result = co_await run_attempts(client, decode, watch, tries, &trail);
    if (result.status != 0 || !result.client_usable || watch.gone()) co_return result;
    const bool decoded = trail.attempts > attempts;
    attempts = trail.attempts;
    decode.earlier_attempts = attempts;
    decode.more_after = false;
    // Without a decode attempt there is no worker to hand a new prefill to: the last run answers.
    if (!decoded || std::chrono::steady_clock::now() >= trail.deadline) break;
  }
  co_return co_await run_attempts(client, decode, watch, tries);
}

Task<PrefillOutcome> Forwarder::run_prefill(const ForwardRequest& request, ClientWatch& watch,
                                            AttemptLog& tries, unsigned earlier,
                                            std::chrono::steady_clock::time_point started) {
  const Snapshot& snapshot = *request.snapshot;
  const auto& server = snapshot.config().server;
  const BreakerParams& breaker = snapshot.breaker();
  const RoutePool& stage = *request.route.pool->prefill;
  ForwardRequest step = request;
  step.route = ResolvedRoute{.pool = &stage, .requested_model = request.route.requested_model};
  step.explain = false;
  const size_t n = stage.candidates.size();
  const Loads loads = stage.loads();
  const auto deadline = started + milliseconds(server.upstream_timeout_ms);
  const unsigned max_attempts = attempt_budget(snapshot);
  Excluded excluded = not_allowed(stage, request.key);
  auto now = clock_.now();
  auto eligible = [&](size_t i) {
    return i < n && !excluded[i] &&
           availability(stage.candidates[i].state->health, now, breaker) == OutReason::kNone;
  };
  PrefillOutcome out{.attempts = earlier};
  for (unsigned tried = 0; tried < max_attempts && std::chrono::steady_clock::now() < deadline;) {
    if (watch.gone()) break;
    now = clock_.now();
    if (request.trace != nullptr) request.trace->start_route();
    const std::optional<Selection> selection = select(step, loads, eligible, excluded, now, breaker);
    trace_route(step, selection ? &*selection : nullptr, out.attempts + 1);
    if (!selection) break;
    const size_t index = selection->choice.index;
    const Candidate& candidate = stage.candidates[index];
    excluded[index] = true;
    if (!selection->choice.bypass_admit && !admit(candidate.state->health, now, breaker)) continue;
    auto body = prefill_request_body(request.body, step.route.upstream_model(index));
    if (!body) break;  // not a JSON object: the decode worker answers it whole
    ++tried;
    const unsigned attempt_number = ++out.attempts;
    Metrics::count_pick(candidate.instruments);
    if (tried > 1) Metrics::count_retry(stage.instruments);
    // Counted against the worker from the pick on, so picks made meanwhile see it busy.
    InFlightGuard guard(*candidate.state);
    PrefillTicket ticket(
        *candidate.state,
        static_cast<uint64_t>(std::llround(selection->sample.uncached_ktokens * 1000)));
    const auto attempt_started = std::chrono::steady_clock::now();
    const std::string_view traceparent =
        request.trace != nullptr ? request.trace->start_attempt() : std::string_view();
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - attempt_started);
    // A named argument: GCC 12 destroys a temporary built inside a co_await expression twice.
    PrefillCallParams call_params{
        .candidate = &candidate,
        .target = request.request->target(),
        .body = std::move(*body),
        .request_id = request_id_of(request),
        .traceparent = traceparent,
        .timeout = std::clamp(left, milliseconds(1), milliseconds(server.first_byte_timeout_ms))};
    PrefillCall call = co_await call_prefill(std::move(call_params), tls_);
    const AttemptReport report = prefill_report(call);
    Metrics::count_response(candidate.instruments, call.status);
    note_attempt(tries, candidate, report, attempt_started, std::chrono::steady_clock::now(),
                 AttemptStep::kPrefill);
    const AttemptParams params{.request = &step,
                               .candidate = &candidate,
                               .model = step.route.upstream_model(index),
                               .may_retry = false,
                               .attempt_number = attempt_number};
    trace_attempt(step, params, report, attempt_started);
    learn(report, candidate, snapshot, clock_.now());
    if (call.ok()) {
      out.params = std::move(call.params);
      co_return out;
    }
    spdlog::debug("prefill on {} for route '{}' failed: {}", candidate.explain_name,
                  request.route.pool->name, call.error);
    if (request_refused(call)) break;
  }
  co_return out;
}

Task<AttemptReport> Forwarder::attempt(TimedStream& client, const AttemptParams& params,
                                       ClientWatch& watch) {
  const Candidate& candidate = *params.candidate;
  const auto& server = params.request->snapshot->config().server;
  AttemptReport report;
  auto connection = pool_.take(candidate.state->id);
  // A stale pooled connection is replaced once by a fresh one, without counting an attempt.
  for (int fresh_tries = 0; fresh_tries < 2; ++fresh_tries) {
    if (!connection) {
      const auto left = std::chrono::duration_cast<milliseconds>(params.deadline -
                                                                 std::chrono::steady_clock::now());
      auto [ec, fresh] = co_await connect_upstream(
          *candidate.endpoint, candidate.state->id, tls_,
          std::clamp(left, milliseconds(1), milliseconds(server.connect_timeout_ms)));
      if (ec) {
        report = AttemptReport{};
        report.error = "connect: " + ec.message();
        report.refused = ec == asio::error::connection_refused;
        // A connect that timed out is an upstream timeout too (SPEC §2: 504).
        report.timed_out = ec == beast::error::timeout;
        report.reason = report.refused     ? AttemptReason::kConnectRefused
                        : report.timed_out ? AttemptReason::kConnectTimeout
                                           : AttemptReason::kConnectError;
        co_return report;
      }
      connection = std::move(fresh);
    }
    if (watch.displaced()) {
      // Displaced while it connected: the request is not sent (the connection stays unused).
      pool_.give_back(std::move(connection));
      report = AttemptReport{};
      report.reason = AttemptReason::kDisplaced;
      co_return report;
    }
    watch.set_in_flight(connection.get());
    report = co_await std::visit(
        [&](auto& stream) { return run_exchange(stream, *connection, client, params); },
        connection->stream);
    watch.set_in_flight(nullptr);
    // Displaced mid-exchange: its upstream read was cut short on purpose (ClientWatch::Stopper).
    if (report.outcome != Outcome::kRelayed && watch.displaced()) {
      report.reason = AttemptReason::kDisplaced;
      break;
    }
    if (report.outcome != Outcome::kStale) break;
    connection.reset();
  }
  if (report.outcome == Outcome::kRelayed && report.reusable) {
    pool_.give_back(std::move(connection));
  }
  co_return report;
}

}  // namespace rolter
