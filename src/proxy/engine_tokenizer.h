// Engine tokenisation (SPEC §6.15, tokenize = "engine"): the token ids of a request that brings
// none, asked of the engine that will cache them.
//
// A strategy that scores token ids (balance/balancer_factory.h, strategy_reads_token_ids) is
// neutral about a request without them. When one of the route's candidates belongs to a provider
// with tokenize = "engine", the gateway asks one instance of it `POST {base_url}/tokenize` (vLLM's
// endpoint) with the candidate's upstream `model` and the client's `messages` (chat) or `prompt`
// (completions), copied byte for byte from the client's body, and routes with the `tokens` of the
// reply. Only /v1/chat/completions and /v1/completions are tokenised.
//
// The call is best effort: it has the provider's tokenize_timeout_ms for resolve-free connect,
// write and read together, and any failure (no instance to ask, refused, timeout, non-200, a body
// without a `tokens` array of 32-bit ids) leaves the request without token ids, never with an
// error. Each call is observed in rolter_tokenize_seconds{provider,outcome}.
//
// Each call opens a fresh connection and closes it afterwards (`Connection: close`): a fresh
// connection keeps the timeout's meaning simple (a half-read pooled connection is never left
// behind), at the price of one TCP connect per tokenised request (tens of microseconds on a LAN;
// the worker's upstream pool could carry these calls too). A host name in base_url is resolved by the
// system resolver outside the timeout, as for the engine-metrics scrape.
//
//   std::vector<uint32_t> owned;  // must outlive every use of ctx.token_ids
//   if (auto ids = co_await engine_token_ids(step)) {
//     owned = std::move(*ids);
//     ctx.token_ids = std::span<const uint32_t>(owned);
//   }
//
// Thread-safety: the pure functions may be called from any thread. engine_token_ids() and
// call_tokenize() run on the calling worker's executor; the snapshot, candidate and TLS context
// they are given must outlive the call.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <tl/expected.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "balance/route_context.h"
#include "common/clock.h"
#include "inspect/request_facts.h"
#include "net/asio_fwd.h"
#include "observe/metrics.h"
#include "snapshot/snapshot.h"
#include "upstream/client_tls.h"

namespace rolter {

// Largest /tokenize reply read; a bigger one is an error. A million-token context at 11 bytes of
// JSON per id is 11 MiB, far beyond any model's context window today.
inline constexpr size_t kMaxTokenizeReplyBytes = 64u << 20;

// Whether a request of `kind` whose RouteContext is `ctx`, resolved to `pool`, is worth
// tokenising: it has no token ids, it is chat or completions, and the pool's strategy reads them,
// or the pool is a disaggregated route's (its split decision counts the prompt's tokens, SPEC
// §18). The engine asked is a decode candidate's, else a prefill candidate's.
bool wants_engine_tokens(ApiKind kind, const RouteContext& ctx, const RoutePool& pool);

// The candidate whose instance to ask: among the candidates of providers with tokenize =
// "engine" that `key` (null: an open gateway) may use and that may take traffic at `now`
// (availability() == kNone), the least loaded; the first of those on a tie. nullopt when none.
std::optional<size_t> choose_tokenize_candidate(const RoutePool& pool, const ApiKey* key,
                                                Clock::TimePoint now, const BreakerParams& breaker);

// The /tokenize body for a client body of `kind`: {"model":<model>,"messages":<as sent>} for chat,
// {"model":<model>,"prompt":<as sent>} for completions. nullopt when the client body is not a
// JSON object with that field (an array for messages; a string or an array for prompt).
std::optional<std::string> tokenize_request_body(ApiKind kind, std::string_view client_body,
                                                 std::string_view model);

// The ids of a /tokenize reply's `tokens` array; an error when the body is not a JSON object with
// such an array of integers in [0, 2^32).
tl::expected<std::vector<uint32_t>, std::string> read_tokenize_reply(std::string_view body);

struct TokenizeResult {
  Metrics::TokenizeOutcome outcome = Metrics::TokenizeOutcome::kError;
  std::vector<uint32_t> tokens;  // kOk only
  std::string error;             // why not, for the log; empty on kOk
};

// POST {candidate's base_url}/tokenize with `body`, the provider's credentials and its
// tokenize_timeout, on a fresh connection. Observes the call's duration in the provider's
// tokenize instruments.
Task<TokenizeResult> call_tokenize(const Candidate& candidate, std::string body,
                                   ClientTls tls);

// What engine_token_ids() needs from the request being served.
struct EngineTokenizeRequest {
  const Snapshot* snapshot = nullptr;
  const ResolvedRoute* route = nullptr;
  const RouteContext* ctx = nullptr;
  ApiKind kind = ApiKind::kChatCompletions;
  std::string_view body;        // the client's body, as received
  const ApiKey* key = nullptr;  // null on an open gateway
  const Clock* clock = nullptr;
  ClientTls tls;
};

// The whole step: when wants_engine_tokens(), choose a candidate, build the body, call it.
// nullopt when the request is not tokenised or the call failed (the request then goes on without
// token ids).
Task<std::optional<std::vector<uint32_t>>> engine_token_ids(EngineTokenizeRequest request);

}  // namespace rolter
