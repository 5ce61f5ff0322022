// One attempt's exchange with one upstream instance (SPEC §2, §8): send the request (the body
// with only `model` rewritten, behind the head of http/upstream_head.h), read response heads
// until the final one (1xx consumed), decide whether the answer may still be retried, and if not
// relay it to the client as it arrives. The forwarder's attempt loop (proxy/forwarder.h) runs
// one of these per attempt and learns from the report.
//
// An SSE body goes out whole event by whole event (an incomplete event waits for its end), so a
// stream that breaks, or outlives the request's deadline, ends with an error event in its API's
// shape (proxy/stream_error.h) and never mid-event. The deadline is checked on every chunk.
//
// Thread-safety: runs on the worker thread that owns the connection and the client stream.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "net/asio_fwd.h"
#include "net/timed_stream.h"
#include "proxy/forwarder.h"
#include "proxy/usage_scanner.h"
#include "upstream/upstream_connection.h"

namespace rolter {

// What one attempt on one candidate came to.
enum class Outcome {
  kRelayed,  // a response went to the client (completely, or cut by the client)
  kStale,    // reused connection was dead before any response byte: resend, same candidate
  kFailed,   // failed before anything reached the client: another candidate may serve
};

struct AttemptReport {
  Outcome outcome = Outcome::kFailed;
  std::string error;           // for kFailed: what went wrong, for the 502 message
  // for kFailed: what went wrong, for the access log, where the flags below do not say it
  // (the forwarder's reason_of() reads both)
  AttemptReason reason = AttemptReason::kNone;
  bool timed_out = false;      // for kFailed: a first-byte timeout
  bool refused = false;        // for kFailed: the connection was refused
  bool auth_rejected = false;  // for kFailed: the upstream refused the gateway's credentials
  // for kRelayed: the client's body has no translation for the target (SPEC §16); `error` says
  // why, and the client got a 400 from the gateway
  bool untranslatable = false;
  // for kFailed: the upstream said the prompt is too long (AttemptParams::
  // may_fall_back_on_context_length)
  bool context_length = false;
  // for kFailed: the upstream's content filter refused the request
  bool content_filter = false;
  bool broken = false;         // for kRelayed: the upstream failed mid-body (or ran out of time)
  bool reusable = false;       // the upstream connection may go back to the pool
  bool client_usable = true;
  bool client_gone = false;  // for kRelayed: the client stopped reading mid-relay
  unsigned status = 0;       // the upstream status, when a response head arrived
  uint64_t bytes_out = 0;    // for kRelayed: the response body bytes written to the client
  std::chrono::steady_clock::time_point first_byte;  // for kRelayed: head sent to the client
  std::optional<std::chrono::steady_clock::time_point>
      first_token;     // for kRelayed: first content event (streams), or head
  UsageScanner usage;  // for kRelayed: token usage seen in the relayed body
  std::optional<std::chrono::milliseconds> retry_after;  // from a 429's Retry-After
};

struct AttemptParams {
  const ForwardRequest* request;
  const Candidate* candidate;
  std::string_view model;  // upstream model to write into the body
  bool may_retry;          // another attempt could follow a retryable status
  // A 429 is not relayed but fails the attempt: the request may fall back for it (SPEC §16).
  bool may_fall_back_on_429 = false;
  // A 400 or 413 saying the prompt is too long fails the attempt (for a fallback route) instead
  // of reaching the client: its body is read first.
  bool may_fall_back_on_context_length = false;
  // The same for a 400 saying the content was refused by the target's filter.
  bool may_fall_back_on_content_filter = false;
  unsigned attempt_number;
  std::chrono::milliseconds first_byte_timeout;
  std::chrono::steady_clock::time_point deadline;
  // The pick's explanation (x-rolter-decision), when the client asked for one; else empty.
  std::string_view decision;
  // Released when the first token arrives (the head, for an answer that is not streamed).
  PrefillTicket* prefill = nullptr;
  // The client connection's watch: a client that half-closed gets the head on its own, so that a
  // client that in fact closed fails the write that follows and is logged as gone (499).
  const ClientWatch* watch = nullptr;
};

// Runs one attempt on `connection` (whose stream is `upstream`: UpstreamConnection::Plain or ::Tls)
// for the client on `client`. Never throws; everything that happened is in the report.
template <typename Stream>
Task<AttemptReport> run_exchange(Stream& upstream, UpstreamConnection& connection,
                                 TimedStream& client, const AttemptParams& p);

extern template Task<AttemptReport> run_exchange(UpstreamConnection::Plain&, UpstreamConnection&,
                                                 TimedStream&, const AttemptParams&);
extern template Task<AttemptReport> run_exchange(UpstreamConnection::Tls&, UpstreamConnection&,
                                                 TimedStream&, const AttemptParams&);

}  // namespace rolter
