// Forwarder: the attempt loop and the response relay (SPEC §2, §8).
//
// For one request whose route is resolved and whose RouteContext is built, the forwarder picks an
// eligible candidate, forwards the body with only `model` rewritten, and relays the response to
// the client as it arrives. A connect error, a reset before the first response byte, a first-byte
// timeout, a `retry.on_status` status, or an upstream refusing the gateway's credentials (401,
// 403), while nothing has reached the client, moves the request to another candidate, up to
// `retry.max_attempts` attempts. A client that goes away cancels the upstream request at once, so
// the engine frees its batch slot and KV cache; a client that only half-closes still gets its
// answer.
//
// When the route cannot answer, the request may move to the routes of its `fallbacks` list
// (proxy/fallback.h has the rule); nothing of that runs unless the first route failed.
//
// An upstream connection goes back to the pool only when it is provably clean: the response was
// final (not 1xx), completely framed, keep-alive, and nothing is left unread (upstream/).
//
// Thread-safety: one Forwarder per worker thread; it uses that worker's connection pool.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <optional>
#include <string_view>

#include "balance/route_context.h"
#include "http/fields.h"
#include "inspect/request_facts.h"
#include "net/asio_fwd.h"
#include "proxy/attempt_log.h"
#include "proxy/client_watch.h"
#include "proxy/error_response.h"
#include "snapshot/snapshot.h"
#include "trace/request_trace.h"
#include "upstream/client_tls.h"
#include "upstream/connection_pool.h"

namespace rolter {

using ClientRequest = beast::http::request<beast::http::string_body, HttpFields>;

// The status logged for a client that left before its answer (nginx's "client closed request").
// It is never sent; it is counted as a 4xx, not as a failure of the gateway.
inline constexpr unsigned kClientClosedRequest = 499;

struct ForwardRequest {
  const Snapshot* snapshot = nullptr;
  ResolvedRoute route;
  const RouteContext* ctx = nullptr;
  const ClientRequest* request = nullptr;  // method, target and headers to forward
  // The body and what inspection read from it; the forwarded body is the body with only its
  // `model` token replaced (inspect/model_rewrite.h).
  std::string_view body;
  const RequestFacts* facts = nullptr;
  ErrorStyle style = ErrorStyle::kOpenAi;
  bool client_keep_alive = true;
  // The authenticated key (its provider allow-list narrows the candidates); null when open.
  const ApiKey* key = nullptr;
  ApiKind kind = ApiKind::kChatCompletions;  // shapes an error event that ends a broken stream
  std::string_view client_ip;                // for X-Forwarded-For
  bool trusted_peer = false;                 // the client is one of server.trusted_proxies
  bool client_tls = false;                   // the client came over TLS: X-Forwarded-Proto: https
  unsigned client_version = 11;              // 10: never answer chunked; close-delimit instead
  // The client sent `x-rolter-explain: 1`: the relayed response carries `x-rolter-decision`.
  bool explain = false;
  // The routes given up on before this one, "a,b" (x-rolter-fallbacks); empty on the first route.
  std::string_view fallbacks;
  // Fields every answer carries, as whole "Name: value\r\n" lines: a limited key's rate-limit
  // fields (SPEC §15). Empty for most requests.
  std::string_view extra_fields;
  // When set, filled with what the answer used (SPEC §15's settlement and usage records).
  struct ServedUsage* usage = nullptr;
  // The request's id and trace (SPEC §17): every attempt sends them upstream, every answer carries
  // the id, and a recorded request's spans are made here. Null only in tests that need none.
  RequestTrace* trace = nullptr;
  // When the attempt loop continues a request that began earlier (a disaggregated request's decode
  // step, SPEC §18): the request's start (its durations, TTFT and deadline count from it; the
  // clock's epoch = unset, the loop starts the clock), the attempts made before, and the step its
  // attempts serve. (Plain fields, packed: the request is copied into coroutine frames that must
  // stay within Asio's recycled size.)
  std::chrono::steady_clock::time_point started{};
  // The request as the client sent it, when this one carries a step's additions (a decode
  // step's kv_transfer_params): a fallback route forwards its body. Null otherwise.
  const ForwardRequest* client_request = nullptr;
  unsigned earlier_attempts = 0;
  AttemptStep step = AttemptStep::kWhole;
  // Something may still serve the request after this attempt loop (a disaggregated request's
  // second round): a retry.on_status answer fails even the loop's last attempt instead of being
  // relayed.
  bool more_after = false;
};

// The request's id and its trace id (32 hex digits), as the access log carries them; empty
// without a trace.
inline std::string_view request_id_of(const ForwardRequest& request) {
  return request.trace != nullptr ? request.trace->request_id() : std::string_view();
}
inline std::string_view trace_id_of(const ForwardRequest& request) {
  return request.trace != nullptr ? request.trace->trace_id() : std::string_view();
}

// SPEC §15: a chat or completions stream whose client did not ask for usage. rolter asks an
// OpenAI-compatible upstream for it anyway, and takes the usage chunk out of what the client gets
// (from a translated stream too).
inline bool usage_chunk_unasked(const ForwardRequest& request) {
  return (request.kind == ApiKind::kChatCompletions || request.kind == ApiKind::kCompletions) &&
         request.facts->stream && !request.facts->stream_usage;
}

// What a request's answer used, for its settlement and its usage record.
struct ServedUsage {
  bool served = false;        // an upstream's answer reached the client (whole or in part)
  bool reported = false;      // the answer carried token usage; else the counts below are 0
  uint64_t input_tokens = 0;  // every prompt token, cached ones included
  uint64_t cached_input_tokens = 0;
  uint64_t output_tokens = 0;
  double usd = 0;           // at the serving target's catalog prices
  std::string_view route;   // the route that answered (it may be a fallback)
  std::string_view target;  // "<provider>/<model>": the candidate that answered
};

struct ForwardResult {
  // False when the client connection must be closed (it went away, or a relay broke mid-body).
  bool client_usable = true;
  unsigned status = 0;  // status sent to the client; 0 if nothing was sent
  unsigned attempts = 0;
};

struct AttemptParams;
struct AttemptReport;
struct PrefillOutcome;
struct FallbackTrail;
struct RouteFailures;
struct RouteEnd;

class Forwarder {
 public:
  // `clock` times parking and breakers; it must outlive the forwarder.
  Forwarder(ConnectionPool& pool, ClientTls tls, const Clock& clock)
      : pool_(pool), tls_(tls), clock_(clock) {}

  // Serves `request` on `client`: either relays an upstream response or writes an error
  // (502 listing the attempts, 503 when no candidate is eligible, 504 on timeouts).
  // `watch` (the client connection's) notices a client that leaves meanwhile.
  Task<ForwardResult> forward(TimedStream& client, ClientWatch& watch,
                              const ForwardRequest& request);

 private:
  // forward(), recording each attempt in `tries` (the request's, for its access-log line).
  Task<ForwardResult> forward_logged(TimedStream& client, ClientWatch& watch,
                                     const ForwardRequest& request, AttemptLog& tries);
  // A request that found its route saturated or others waiting (SPEC §19, proxy/queue_gate.h):
  // its turn in the route's queue (or its refusal), then the attempt loop.
  Task<ForwardResult> run_queued(TimedStream& client, const ForwardRequest& request,
                                 ClientWatch& watch, AttemptLog& tries);
  // SPEC §18, a request on a disaggregated route: the split decision (balance/split_decider.h);
  // then either the whole request through the attempt loop on the decode workers, or step 1 on a
  // prefill worker and step 2 through that loop with the transfer parameters. When every decode
  // attempt failed, step 1 runs once more on another prefill worker; when no prefill worker
  // answered, the request is served whole on a decode worker.
  Task<ForwardResult> run_disaggregated(TimedStream& client, const ForwardRequest& request,
                                        ClientWatch& watch, AttemptLog& tries);
  // Step 1: prefill workers in turn, up to retry.max_attempts, each counted against its worker
  // from its pick to its answer. `earlier`: the request's attempts so far.
  Task<PrefillOutcome> run_prefill(const ForwardRequest& request, ClientWatch& watch,
                                   AttemptLog& tries, unsigned earlier,
                                   std::chrono::steady_clock::time_point started);
  // The attempt loop on request.route. `trail` is null on the request's first route; on a
  // fallback route it is the request's FallbackTrail, and a route that cannot answer is recorded
  // there (status 0 returned) instead of answered.
  Task<ForwardResult> run_attempts(TimedStream& client, const ForwardRequest& request,
                                   ClientWatch& watch, AttemptLog& tries,
                                   FallbackTrail* trail = nullptr);
  // After a route's last attempt failed: the gateway's own answer, the request handed on to the
  // fallback routes, or (on a fallback route) the failure recorded in `trail`.
  Task<ForwardResult> route_failed(TimedStream& client, const ForwardRequest& request,
                                   ClientWatch& watch, const RouteFailures& failures,
                                   const RouteEnd& end, FallbackTrail* trail, AttemptLog& tries);
  // The request's first route could not answer (`error` is what it would have answered): tries
  // the fallback routes in order, then answers with every route's failures.
  Task<ForwardResult> fall_back(TimedStream& client, const ForwardRequest& request,
                                ClientWatch& watch, const ApiError& error,
                                const RouteFailures& failures, const RouteEnd& end,
                                AttemptLog& tries);
  // One attempt on params.candidate: a pooled connection (a stale one replaced once by a fresh
  // one) or a new one, the exchange (proxy/exchange.h), and the connection back to the pool if
  // clean. The watch knows the connection while the exchange runs.
  Task<AttemptReport> attempt(TimedStream& client, const AttemptParams& params,
                              ClientWatch& watch);

  ConnectionPool& pool_;
  ClientTls tls_;
  const Clock& clock_;
};

// Writes a complete JSON error response to the client. `request_id`: x-request-id and the body's
// error.request_id (SPEC §17), when not empty; `fallbacks`: x-rolter-fallbacks, the routes given
// up on, when not empty; `extra_fields`: whole field lines to add (a limited key's rate-limit
// fields, as ForwardRequest::extra_fields). `body_bytes`, when given, gets the size of the body
// that went out (0 when the write failed), for the access log.
Task<error_code> write_error(TimedStream& client, ErrorStyle style, const ApiError& error,
                             std::string_view request_id, bool keep_alive, unsigned attempts = 0,
                             std::string_view fallbacks = {}, std::string_view extra_fields = {},
                             uint64_t* body_bytes = nullptr);

}  // namespace rolter
