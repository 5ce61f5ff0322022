// The decision service client (SPEC §7, policy mode's decision_service): asks a decision engine
// which target *model* fits a request, before the pick.
//
// The request is POST {provider base_url}/v1/systemone; its body and the reply's reading are in
// proxy/decision_protocol.h. A reply that may vote becomes a DecisionVerdict that the policy
// balancer reads through RouteContext::decision.
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
//     verdict = co_await ask_decision_service(*policy.decision, route_name, body, tls);
//     if (verdict) ctx.decision = &*verdict;
//   }
// (server/endpoints.cc also keeps a session's verdict for 60 s: proxy/decision_cache.h.)
//
// Thread-safety: wants_decision() may be called from any thread. The coroutines run on the
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
#include "proxy/decision_protocol.h"
#include "snapshot/snapshot.h"
#include "upstream/client_tls.h"

namespace rolter {

// SPEC §7: the whole call (connect, write, read) has 3000 ms.
inline constexpr std::chrono::milliseconds kDecisionTimeout{3000};

// Whether a request of `kind` on a pool with `policy` asks the decision service: the route has an
// active decision_service, and the request is inference other than embeddings (an embedding
// model is not chosen by how hard a conversation is).
bool wants_decision(ApiKind kind, const PolicyRoute& policy);

struct DecisionCall {
  Metrics::DecisionOutcome outcome = Metrics::DecisionOutcome::kError;
  std::optional<DecisionVerdict> verdict;  // kOk only
  std::string error;                       // why not, for the log; empty on kOk
};

// POST /v1/systemone with `body` to the first instance of `provider`, within `timeout` for
// everything. Neither logs nor counts.
Task<DecisionCall> call_decision_service(const Provider& provider, std::string body,
                                         ClientTls tls,
                                         std::chrono::milliseconds timeout);

// The whole step: builds the body, calls, counts the outcome and duration in the decision's
// instruments, logs a failure at debug. nullopt = no vote. `timeout` is kDecisionTimeout in the
// product; tests shorten it.
Task<std::optional<DecisionVerdict>> ask_decision_service(
    const PolicyRoute::Decision& decision, std::string_view route, std::string_view client_body,
    ClientTls tls, std::chrono::milliseconds timeout = kDecisionTimeout);

}  // namespace rolter
