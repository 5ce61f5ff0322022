#include "proxy/exchange.h"

#include <boost/asio/write.hpp>
#include <boost/beast/core/buffer_traits.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/read.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <span>
#include <type_traits>

#include "http/buffered_parse.h"
#include "http/client_head.h"
#include "http/retry_after.h"
#include "http/sse_progress.h"
#include "http/upstream_head.h"
#include "inspect/model_rewrite.h"
#include "net/write_now.h"
#include "observe/inter_token_timer.h"
#include "proxy/client_response.h"
#include "proxy/relay_buffer.h"
#include "proxy/request_log.h"
#include "proxy/stream_error.h"
#include "proxy/translated_relay.h"
#include "proxy/usage_chunk.h"

namespace rolter {
namespace http = beast::http;

namespace {

constexpr size_t kMaxResponseHeaderBytes = 64 * 1024;
// Interim (1xx) responses consumed before the final one; more is an upstream gone wrong.
constexpr int kMaxInterimResponses = 8;
// How much of an upstream's 401/403 body is read for the log.
constexpr size_t kAuthExcerptBytes = 512;

// A pooled connection the upstream closed while idle fails at once with one of these, before any
// response byte: the request is resent on a fresh connection without counting an attempt.
bool is_stale_connection_error(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::connection_aborted;
}

// The balancer learns which candidate served the request (observe()) when the answer is committed
// to the client, not when it ends: a long stream would otherwise hide, for its whole length, where
// its prefix now lives, and requests sharing that prefix that arrive meanwhile (an agent's
// parallel calls, a conversation's next turn on another node) would miss it.
void observe_served(const AttemptParams& p) {
  const RoutePool& pool = *p.request->route.pool;
  const auto index = static_cast<size_t>(p.candidate - pool.candidates.data());
  pool.balancer->observe(index, *p.request->ctx);
}

UpstreamHeadSpec::KeyField key_field(ProviderKind kind) {
  switch (kind) {
    case ProviderKind::kAnthropic:
      return UpstreamHeadSpec::KeyField::kXApiKey;
    case ProviderKind::kGemini:
      return UpstreamHeadSpec::KeyField::kGoogApiKey;
    default:
      return UpstreamHeadSpec::KeyField::kBearer;
  }
}

// `target`: the request target to send (the client's, or a translated request's path); `fixed`:
// the provider's fixed fields (with anthropic-version for a translated Anthropic request).
HeadString build_request_head(const ForwardRequest& request, const Candidate& candidate,
                              size_t body_length, std::string_view target,
                              std::span<const std::pair<std::string, std::string>> fixed) {
  const auto& client = *request.request;
  const auto& server = request.snapshot->config().server;
  UpstreamHeadSpec spec{
      .method = client.method_string(),
      .base_path = candidate.endpoint->base_path,
      .target = target,
      .host_header = candidate.endpoint->host_header,
      .api_key = candidate.provider->api_key,
      .key_field = key_field(candidate.provider->kind),
      .fixed_fields = fixed,
      .forwarded = server.forwarded_headers,
      .trusted_peer = request.trusted_peer,
      .client_ip = request.client_ip,
      .proto = request.client_tls ? "https" : "http",
      .client_version = request.client_version,
  };
  if (request.trace != nullptr) {
    spec.request_id = request.trace->request_id();
    spec.traceparent = request.trace->upstream_traceparent();
    spec.keep_tracestate = request.trace->keeps_tracestate();
  }
  if (client.method() != http::verb::get || body_length > 0) spec.content_length = body_length;
  HeadString head;
  head.reserve(512);
  append_upstream_head(spec, client, head);
  return head;
}

// True when the request went out; else what its failure means for the attempt.
bool sent_or_failed(const error_code& write_ec, const UpstreamConnection& connection,
                    AttemptReport& report) {
  if (!write_ec) return true;
  report.outcome =
      connection.reused && is_stale_connection_error(write_ec) ? Outcome::kStale : Outcome::kFailed;
  report.reason = AttemptReason::kSendError;
  report.error = "send: " + write_ec.message();
  return false;
}

// Writes a request's pieces (head and body), within the deadline.
template <typename Stream>
Task<bool> send_buffers(Stream& upstream, UpstreamConnection& connection, const AttemptParams& p,
                        const std::array<asio::const_buffer, 4>& buffers, AttemptReport& report) {
  // On a plain connection the request usually fits in the send buffer: written at once. The rest,
  // if any (a large body), and everything over TLS, goes asynchronously, within the deadline.
  error_code write_ec;
  beast::buffers_suffix<std::array<asio::const_buffer, 4>> rest(buffers);
  if constexpr (std::is_same_v<Stream, UpstreamConnection::Plain>) {
    rest.consume(write_now(upstream.socket(), buffers, write_ec));
  }
  if (!write_ec && beast::buffer_bytes(rest) > 0) {
    connection.tcp().expires_at(p.deadline);
    auto [ec, written] = co_await asio::async_write(upstream, rest, kNoThrow);
    write_ec = ec;
  }
  co_return sent_or_failed(write_ec, connection, report);
}

// The client's body has no translation for the picked target: a 400 naming why, as the client's
// answer (another target would get the same body).
Task<void> refuse_untranslatable(TimedStream& client, const AttemptParams& p,
                                 AttemptReport& report) {
  const auto& request = *p.request;
  report.outcome = Outcome::kRelayed;
  report.untranslatable = true;
  report.status = 400;
  report.first_byte = std::chrono::steady_clock::now();
  report.first_token = report.first_byte;
  const ApiError error{.status = 400, .type = "invalid_request_error", .message = report.error};
  const auto ec = co_await write_error(client, request.style, error, request_id_of(request),
                                       request.client_keep_alive, p.attempt_number, {},
                                       request.extra_fields, &report.bytes_out);
  report.client_usable = !ec && request.client_keep_alive;
  report.client_gone = static_cast<bool>(ec);
}

// Sends the request translated for the target's API (proxy/translated_relay.h), or answers the
// client's 400 when its body has no translation for this target.
template <typename Stream>
Task<bool> send_translated(Stream& upstream, UpstreamConnection& connection,
                           TimedStream& client, const AttemptParams& p,
                           const TranslationPlan& plan, AttemptReport& report) {
  if (plan.unsupported) {
    report.error = std::string(api_kind_name(p.request->kind)) + " requests cannot be served by " +
                   p.candidate->label + " (a " +
                   std::string(provider_kind_name(p.candidate->provider->kind)) + " target)";
    co_await refuse_untranslatable(client, p, report);
    co_return false;
  }
  auto translated = translate_attempt(p, *plan.translator);
  if (!translated) {
    report.error = std::move(translated.error().message);
    co_await refuse_untranslatable(client, p, report);
    co_return false;
  }
  const TranslatedRequest& request = translated->request;
  const HeadString head = build_request_head(*p.request, *p.candidate, request.body.size(),
                                             request.path, translated->fixed_fields);
  const std::array<asio::const_buffer, 4> buffers = {asio::buffer(head), asio::buffer(request.body),
                                                     asio::const_buffer(), asio::const_buffer()};
  co_return co_await send_buffers(upstream, connection, p, buffers, report);
}

// Sends the head and the body (three pieces around the rewritten model: no copy of the body), or
// the request translated for a target of another API. False when the attempt ends here (failed,
// or answered with a 400 when the body has no translation for the target).
template <typename Stream>
Task<bool> send_request(Stream& upstream, UpstreamConnection& connection, TimedStream& client,
                        const AttemptParams& p, AttemptReport& report) {
  if (const TranslationPlan plan = plan_translation(p.request->kind, p.candidate->provider->kind);
      plan.translator != nullptr || plan.unsupported) {
    co_return co_await send_translated(upstream, connection, client, p, plan, report);
  }
  const auto& request = *p.request;
  auto rewrite = rewrite_model(request.body, *request.facts, p.model);
  if (!rewrite) {
    report.reason = AttemptReason::kInternal;
    report.error = "model rewrite: " + rewrite.error().message;
    co_return false;
  }
  // The usage request goes before the body's closing brace (the suffix holds it: `model` is inside
  // the object).
  std::string_view suffix = rewrite->suffix;
  std::string_view closing;
  std::string_view usage_request;
  if (usage_chunk_unasked(request)) {
    if (const size_t brace = suffix.rfind('}'); brace != std::string_view::npos) {
      closing = suffix.substr(brace);
      suffix = suffix.substr(0, brace);
      usage_request = kUsageRequestSuffix;
    }
  }
  const HeadString head =
      build_request_head(request, *p.candidate, rewrite->size() + usage_request.size(),
                         request.request->target(), p.candidate->provider->headers);
  const std::array<asio::const_buffer, 6> buffers = {
      asio::buffer(head),   asio::buffer(rewrite->prefix), asio::buffer(rewrite->model_token),
      asio::buffer(suffix), asio::buffer(usage_request),   asio::buffer(closing)};
  // Written here rather than through send_buffers(): one coroutine frame less per request.
  error_code write_ec;
  beast::buffers_suffix<std::array<asio::const_buffer, 6>> rest(buffers);
  if constexpr (std::is_same_v<Stream, UpstreamConnection::Plain>) {
    rest.consume(write_now(upstream.socket(), buffers, write_ec));
  }
  if (!write_ec && beast::buffer_bytes(rest) > 0) {
    connection.tcp().expires_at(p.deadline);
    auto [ec, written] = co_await asio::async_write(upstream, rest, kNoThrow);
    write_ec = ec;
  }
  co_return sent_or_failed(write_ec, connection, report);
}

// Reads response heads until the final one: interim 1xx responses (100 Continue, 103 Early
// Hints) are consumed, never relayed. 101 is an error: the proxy never asks to switch protocols.
template <typename Stream>
Task<bool> read_final_head(Stream& upstream, UpstreamConnection& connection,
                           std::optional<ResponseParser>& parser, const AttemptParams& p,
                           AttemptReport& report) {
  connection.tcp().expires_at(
      std::min(p.deadline, std::chrono::steady_clock::now() + p.first_byte_timeout));
  for (int interim = 0; interim <= kMaxInterimResponses; ++interim) {
    parser.emplace();
    parser->body_limit(boost::none);
    parser->header_limit(kMaxResponseHeaderBytes);
    auto [ec, bytes] =
        co_await http::async_read_header(upstream, connection.buffer, *parser, kNoThrow);
    if (ec) {
      const bool nothing_yet = interim == 0 && bytes == 0;
      if (connection.reused && nothing_yet && is_stale_connection_error(ec)) {
        report.outcome = Outcome::kStale;
      }
      report.timed_out = ec == beast::error::timeout;
      const bool request_deadline = std::chrono::steady_clock::now() >= p.deadline;
      report.reason = !report.timed_out  ? AttemptReason::kResponseError
                      : request_deadline ? AttemptReason::kDeadline
                                         : AttemptReason::kFirstByteTimeout;
      report.error = !report.timed_out  ? "response: " + ec.message()
                     : request_deadline ? "no response within upstream_timeout_ms"
                                        : "no response within first_byte_timeout_ms";
      co_return false;
    }
    const unsigned status = parser->get().result_int();
    if (status == 101) {
      report.reason = AttemptReason::kProtocolError;
      report.error = "upstream switched protocols (101), which was never asked for";
      co_return false;
    }
    if (status >= 200) co_return true;
  }
  report.reason = AttemptReason::kProtocolError;
  report.error = "more than " + std::to_string(kMaxInterimResponses) + " interim responses";
  co_return false;
}

// Reads the start of a refused response's body, for the operator's log.
template <typename Stream>
Task<std::string> read_excerpt(Stream& upstream, UpstreamConnection& connection,
                               ResponseParser& parser, const AttemptParams& p) {
  std::string excerpt(kAuthExcerptBytes, '\0');
  size_t got = 0;
  while (!parser.is_done() && got < excerpt.size()) {
    parser.get().body().data = excerpt.data() + got;
    parser.get().body().size = excerpt.size() - got;
    connection.tcp().expires_at(
        std::min(p.deadline, std::chrono::steady_clock::now() + p.first_byte_timeout));
    auto [ec, n] = co_await http::async_read_some(upstream, connection.buffer, parser, kNoThrow);
    got = excerpt.size() - parser.get().body().size;
    if (ec && ec != http::error::need_buffer) break;
  }
  excerpt.resize(got);
  co_return excerpt;
}

// Relays the body as it arrives, until the upstream finishes, fails, or the request's deadline
// passes. The deadline is checked on every chunk, not only by the socket timer: a stream whose
// reads all complete at once never lets the timer's handler run.
//
// An SSE stream goes out whole event by whole event: the bytes of an event not yet complete wait
// in the buffer for the rest. So a stream that breaks mid-event ends cleanly with the error event,
// never with half an event a client would fail to parse.
//
// Writes are coalesced where that costs no time: a head whose first body bytes are already here
// goes out with them, and the last piece carries the end of the body, so a small answer that
// arrives in one read leaves in one write.
//
// An answer in another API than the client's goes through relay_translated(), and an error a
// fallback may take through relay_error_or_fall_back() (proxy/translated_relay.h).
// Whether a displaceable request's answer begins only with its first body piece: a stream
// relayed as it is. Its head comes at once from the engine (before the prompt is even
// prefilled), so the head alone does not begin the answer; the client gets it with the first
// piece (flow/preemption.h). Every other answer begins with its head.
bool answer_begins_with_body(const ResponseParser& parser, const AttemptParams& p) {
  return p.watch != nullptr && p.watch->displaceable() && parser.get().result_int() == 200 &&
         plan_translation(p.request->kind, p.candidate->provider->kind).translator == nullptr &&
         parser.get()[http::field::content_type].starts_with("text/event-stream");
}

// The attempt of a displaced request: nothing reached the client, and the upstream connection,
// cut or mid-answer, is not reused.
void mark_displaced(AttemptReport& report) {
  report.outcome = Outcome::kFailed;
  report.reason = AttemptReason::kDisplaced;
  report.error = "displaced by a request of a higher priority band";
  report.reusable = false;
  report.first_token.reset();
}

template <typename Stream>
Task<void> relay_body(Stream& upstream, UpstreamConnection& connection, TimedStream& client,
                      ResponseParser& parser, const AttemptParams& p, AttemptReport& report) {
  if (const unsigned status = parser.get().result_int();
      (p.may_fall_back_on_context_length || p.may_fall_back_on_content_filter) &&
      (status == 400 || status == 413)) {
    co_await relay_error_or_fall_back(upstream, connection, client, parser, p, report);
    co_return;
  }
  observe_served(p);
  if (const TranslationPlan plan = plan_translation(p.request->kind, p.candidate->provider->kind);
      plan.translator != nullptr) {
    co_await relay_translated(upstream, connection, client, parser, p, *plan.translator, report);
    co_return;
  }
  ClientResponse response(parser, p, report.bytes_out);
  const bool is_sse = parser.get()[http::field::content_type].starts_with("text/event-stream");
  // (A stream framed by Content-Length keeps its bytes: the client was promised that length.)
  const bool drop_usage =
      is_sse && usage_chunk_unasked(*p.request) && !parser.content_length().has_value();
  if (!is_sse) {
    report.first_token = report.first_byte;
    if (p.prefill != nullptr) p.prefill->release();
  }
  auto client_gone = [&] {
    report.client_usable = false;
    report.client_gone = true;
  };
  const bool half_closed = p.watch != nullptr && p.watch->half_closed();
  // Until then the request may be displaced (answer_begins_with_body()).
  bool begun = !answer_begins_with_body(parser, p);
  if (begun && !parser.is_done() && (connection.buffer.size() == 0 || half_closed)) {
    // No body byte yet (a stream waiting for its first token): the client gets the head now. A
    // half-closed client gets it alone too (AttemptParams::watch).
    if (!co_await response.write_head(client)) co_return client_gone();
  }
  bool finished = false;  // the last piece went out
  SseProgress progress;
  InterTokenTimer inter_token(p.request->route.pool->instruments.inter_token);
  RelayBuffer buffer;
  size_t held = 0;  // SSE: the start of an incomplete event, at the front of `buffer`
  while (!parser.is_done()) {
    error_code read_ec = beast::error::timeout;
    if (std::chrono::steady_clock::now() < p.deadline) {
      parser.get().body().data = buffer.data() + held;
      parser.get().body().size = buffer.size() - held;
      error_code ec;
      bool parsed = false;
      if (const size_t held_bytes = connection.buffer.size(); held_bytes > 0) {
        // Bytes read with the head (or after it): parsed where they lie, no read to wait for.
        // Only an incomplete piece (half a chunk header) leaves them all there: then read on.
        ec = parse_buffered(parser, connection.buffer, ParseUntil::kMessage);
        parsed = ec || parser.is_done() || connection.buffer.size() != held_bytes;
      }
      if (!parsed) {
        connection.tcp().expires_at(p.deadline);
        auto [read_ec_, n] =
            co_await http::async_read_some(upstream, connection.buffer, parser, kNoThrow);
        ec = read_ec_;
      }
      read_ec = ec == http::error::need_buffer ? error_code{} : ec;
      if (!begun && p.watch->displaced()) co_return mark_displaced(report);
      const size_t got = buffer.size() - held - parser.get().body().size;
      const std::string_view fresh(buffer.data() + held, got);
      report.usage.feed(fresh);
      const uint64_t pieces_before = progress.content_pieces();
      if (is_sse && progress.feed(fresh) && !report.first_token) {
        report.first_token = std::chrono::steady_clock::now();
        if (p.prefill != nullptr) p.prefill->release();
      }
      if (const uint64_t pieces = progress.content_pieces() - pieces_before; pieces > 0) {
        inter_token.arrived(std::chrono::steady_clock::now(), pieces);
      }
      std::string_view ready(buffer.data(), held + got);
      size_t send = ready.size();
      if (is_sse && !parser.is_done()) {
        // Hold an incomplete event back, unless it fills the buffer (then it goes as it is), or
        // drop it when the stream broke.
        const size_t whole = complete_events_length(ready);
        if (whole > 0 || ready.size() < buffer.size() || read_ec) send = whole;
      }
      if (drop_usage) {
        // The usage chunk rolter asked for leaves the bytes to send; what is held moves up.
        const size_t kept = drop_usage_events(buffer.data(), send);
        if (kept != send) {
          std::memmove(buffer.data() + kept, buffer.data() + send, ready.size() - send);
          ready = std::string_view(buffer.data(), ready.size() - (send - kept));
          send = kept;
        }
      }
      const bool last = parser.is_done() && !read_ec;
      if (!begun) {
        if (!p.watch->begin_answer()) co_return mark_displaced(report);
        begun = true;
      }
      if (!co_await response.write(client, ready.substr(0, send), last)) {
        co_return client_gone();
      }
      finished = last;
      held = ready.size() - send;
      std::memmove(buffer.data(), buffer.data() + send, held);
    }
    if (read_ec) {
      report.broken = true;
      report.client_usable = false;
      // Mid-body failure: never a silent truncation that looks like success.
      if (is_sse) {
        const std::string why = read_ec == beast::error::timeout
                                    ? "upstream_timeout_ms exceeded"
                                    : "upstream failed mid-stream: " + read_ec.message();
        // The incomplete event was dropped above: the error event takes its place.
        co_await response.write(
            client,
            stream_error_event(p.request->kind, why, progress.last_sequence_number(),
                               request_id_of(*p.request)),
            false);
      }
      co_return;
    }
  }
  if (!finished && !co_await response.write(client, {}, true)) co_return client_gone();
  report.client_usable = response.keep_alive();
  report.reusable = clean_after(parser);
}

}  // namespace

template <typename Stream>
Task<AttemptReport> run_exchange(Stream& upstream, UpstreamConnection& connection,
                                 TimedStream& client, const AttemptParams& p) {
  AttemptReport report;
  if (!co_await send_request(upstream, connection, client, p, report)) co_return report;
  std::optional<ResponseParser> parser;
  if (!co_await read_final_head(upstream, connection, parser, p, report)) co_return report;

  const auto& head_in = parser->get();
  const unsigned status = head_in.result_int();
  report.status = status;
  if (status == 408 && connection.reused) {
    // An idle connection the upstream timed out: its 408 answers no request of ours.
    report.outcome = Outcome::kStale;
    co_return report;
  }
  if (status == 429) {
    report.retry_after =
        parse_retry_after(head_in[http::field::retry_after], std::chrono::system_clock::now());
  }
  if (status == 401 || status == 403) {
    // The upstream refused the gateway's own key, not the client's: say so, and never pass the
    // upstream's answer off as the client's authentication failing.
    const std::string excerpt = co_await read_excerpt(upstream, connection, *parser, p);
    log_upstream_auth_failure(p.candidate->provider->name, status, excerpt);
    report.auth_rejected = true;
    report.error = "provider '" + p.candidate->provider->name +
                   "' rejected the gateway's credentials (" + std::to_string(status) + ")";
    co_return report;
  }
  const auto& retry_statuses = p.request->snapshot->config().retry.on_status;
  if ((p.may_retry &&
       std::find(retry_statuses.begin(), retry_statuses.end(), status) != retry_statuses.end()) ||
      (status == 429 && p.may_fall_back_on_429)) {
    report.error = "status " + std::to_string(status);
    co_return report;  // not reusable: its body was not read
  }

  // A request a higher band displaced before this point must not answer: its slot is taken, and
  // it waits in its queue again (flow/preemption.h). Past this point it can no longer be, except
  // a stream, whose answer begins with its first body piece (relay_body()).
  if (p.watch != nullptr && !answer_begins_with_body(*parser, p) && !p.watch->begin_answer()) {
    mark_displaced(report);
    co_return report;
  }

  // From here on the client sees this response: no more retries. (On a route that falls back on
  // context_length or content_filter, relay_body() first reads a 400 or 413 whole, and such an
  // error fails the attempt instead.)
  report.outcome = Outcome::kRelayed;
  report.first_byte = std::chrono::steady_clock::now();
  co_await relay_body(upstream, connection, client, *parser, p, report);
  co_return report;
}

template Task<AttemptReport> run_exchange(UpstreamConnection::Plain&, UpstreamConnection&,
                                          TimedStream&, const AttemptParams&);
template Task<AttemptReport> run_exchange(UpstreamConnection::Tls&, UpstreamConnection&,
                                          TimedStream&, const AttemptParams&);

}  // namespace rolter
