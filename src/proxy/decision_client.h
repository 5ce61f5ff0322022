// The decision service client (SPEC §7, policy mode's decision_service): asks a decision engine
// which target *model* fits a request, before the pick.
//
// The request: POST {provider base_url}/v1/systemone with
//   {"state": <client body>, "model": <decision model>,
//    "questions": {"model_selection": {"type": "choice", "instructions": <text>,
//                                      "criteria": {<target model>: <description or null>, ...}}}}
// The reply:
//   {"answers": {"model_selection": {"choice": "...", "probabilities": {<model>: p, ...},
//                                    "confidence": c}}}
// becomes a DecisionVerdict (balance/decision_verdict.h) that the policy balancer reads through
// RouteContext::decision.
//
// The call is best effort, like engine tokenisation (proxy/engine_tokenizer.h): one fresh
// connection to the provider's first instance (`Connection: close`), kDecisionTimeout for
// connect, write and read together, the provider's API key as a bearer token when it has one, a
// reply of at most kMaxDecisionReplyBytes. Any failure (refused, timeout, non-2xx, a reply that
// may not vote) leaves the request without a verdict, never with an error; it is logged at debug
// and counted in rolter_decision_service_requests_total{route,outcome} and
// rolter_decision_service_seconds{route}. A host name in base_url is resolved inside the timeout
// (connect_upstream's contract).
//
//   std::optional<DecisionVerdict> verdict;  // must outlive every use of ctx.decision
//   if (wants_decision(kind, policy)) {
//     verdict = co_await ask_decision_service(*policy.decision, body, tls);
//     if (verdict) ctx.decision = &*verdict;
//   }
//
// Thread-safety: the pure functions may be called from any thread. The coroutines run on the
// calling worker's executor; the Decision, its provider and the TLS context must outlive the call.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <tl/expected.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "balance/decision_verdict.h"
#include "inspect/request_facts.h"
#include "net/asio_fwd.h"
#include "observe/metrics.h"
#include "snapshot/snapshot.h"

namespace rolter {

// SPEC §7: the whole call (connect, write, read) has 3000 ms.
inline constexpr std::chrono::milliseconds kDecisionTimeout{3000};
// SPEC §7: the client body sent as `state` is at most 64 KiB.
inline constexpr size_t kMaxDecisionStateBytes = 64 * 1024;
// A verdict names a handful of models; 1 MiB is far beyond any honest reply and bounds a bad one.
inline constexpr size_t kMaxDecisionReplyBytes = 1 << 20;

// Whether a request of `kind` on a pool with `policy` asks the decision service: the route has an
// active decision_service, and the request is inference other than embeddings (an embedding
// model is not chosen by how hard a conversation is).
bool wants_decision(ApiKind kind, const PolicyRoute& policy);

// The /v1/systemone body for `client_body`. `state` is the client body embedded as JSON when it is
// valid JSON of at most kMaxDecisionStateBytes. Otherwise `state` is a JSON string holding the
// body's first kMaxDecisionStateBytes bytes (cut on a UTF-8 character boundary; when the body is
// not valid UTF-8, every non-ASCII byte becomes '?'). Why a prefix as text: the request stays
// valid JSON and bounded without re-serialising the client's body, and the prefix carries what a
// model choice rests on first (the system prompt, the tools, the task) while a length past 64 KiB
// already says "long context". A decision engine that wants structure gets it for every body up
// to the bound.
std::string decision_request_body(std::string_view client_body,
                                  const PolicyRoute::Decision& decision);

// The verdict of a /v1/systemone reply. An error (no vote) when the body is not JSON, lacks
// answers.model_selection, its `choice` is not a string, its `confidence` is not a number in
// (0, 1], or `probabilities` is present but not an object of numbers in [0, 1]. A reply without
// `probabilities` (or with an empty object) gives its choice probability 1 and no other model
// any: the service named one model and nothing else. When a model is named twice, the first
// value counts.
tl::expected<DecisionVerdict, std::string> read_decision_reply(std::string_view body);

struct DecisionCall {
  Metrics::DecisionOutcome outcome = Metrics::DecisionOutcome::kError;
  std::optional<DecisionVerdict> verdict;  // kOk only
  std::string error;                       // why not, for the log; empty on kOk
};

// POST /v1/systemone with `body` to the first instance of `provider`, within `timeout` for
// everything. Neither logs nor counts.
Task<DecisionCall> call_decision_service(const Provider& provider, std::string body,
                                         asio::ssl::context& tls,
                                         std::chrono::milliseconds timeout);

// The whole step: builds the body, calls, counts the outcome and duration in the decision's
// instruments, logs a failure at debug. nullopt = no vote. `timeout` is kDecisionTimeout in the
// product; tests shorten it.
Task<std::optional<DecisionVerdict>> ask_decision_service(
    const PolicyRoute::Decision& decision, std::string_view route, std::string_view client_body,
    asio::ssl::context& tls, std::chrono::milliseconds timeout = kDecisionTimeout);

}  // namespace rolter
