#include "proxy/forwarder.h"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <limits>
#include <optional>

#include "http/response_fields.h"
#include "http/retry_after.h"
#include "http/sse_progress.h"
#include "http/upstream_head.h"
#include "inspect/model_rewrite.h"
#include "proxy/request_log.h"
#include "proxy/stream_error.h"
#include "proxy/usage_scanner.h"

namespace rolter {
namespace http = beast::http;
using namespace asio::experimental::awaitable_operators;
using std::chrono::milliseconds;
using SteadyTime = std::chrono::steady_clock::time_point;

namespace {

// Relay buffer: one SSE event of a token is tens of bytes, a non-streamed answer a few KiB.
constexpr size_t kRelayBufferBytes = 16 * 1024;
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

std::string build_request_head(const ForwardRequest& request, const Candidate& candidate,
                               size_t body_length) {
  const auto& client = *request.request;
  const auto& server = request.snapshot->config().server;
  UpstreamHeadSpec spec{
      .method = client.method_string(),
      .base_path = candidate.endpoint->base_path,
      .target = client.target(),
      .host_header = candidate.endpoint->host_header,
      .api_key = candidate.provider->api_key,
      .anthropic_key = candidate.provider->kind == ProviderKind::kAnthropic,
      .forwarded = server.forwarded_headers,
      .trusted_peer = request.trusted_peer,
      .client_ip = request.client_ip,
      .client_version = request.client_version,
  };
  if (client.method() != http::verb::get || body_length > 0) spec.content_length = body_length;
  std::string head;
  head.reserve(512);
  append_upstream_head(spec, client, head);
  return head;
}

// What one attempt on one candidate came to.
enum class Outcome {
  kRelayed,  // a response went to the client (completely, or cut by the client)
  kStale,    // reused connection was dead before any response byte: resend, same candidate
  kFailed,   // failed before anything reached the client: another candidate may serve
};

struct AttemptReport {
  Outcome outcome = Outcome::kFailed;
  std::string error;           // for kFailed: what went wrong, for the 502 message
  bool timed_out = false;      // for kFailed: a first-byte timeout
  bool refused = false;        // for kFailed: the connection was refused
  bool auth_rejected = false;  // for kFailed: the upstream refused the gateway's credentials
  bool broken = false;         // for kRelayed: the upstream failed mid-body (or ran out of time)
  bool reusable = false;       // the upstream connection may go back to the pool
  bool client_usable = true;
  bool client_gone = false;               // for kRelayed: the client stopped reading mid-relay
  unsigned status = 0;                    // the upstream status, when a response head arrived
  SteadyTime first_byte;                  // for kRelayed: head sent to the client
  std::optional<SteadyTime> first_token;  // for kRelayed: first content event (streams), or head
  UsageScanner usage;                     // for kRelayed: token usage seen in the relayed body
  std::optional<std::chrono::seconds> retry_after;  // from a 429's Retry-After
};

struct AttemptParams {
  const ForwardRequest* request;
  const Candidate* candidate;
  std::string_view model;  // upstream model to write into the body
  bool may_retry;          // another attempt could follow a retryable status
  unsigned attempt_number;
  milliseconds first_byte_timeout;
  SteadyTime deadline;
};

using ResponseParser = http::response_parser<http::buffer_body>;

// Sends the head and the body (three pieces around the rewritten model: no copy of the body).
template <typename Stream>
Task<bool> send_request(Stream& upstream, UpstreamConnection& connection, const AttemptParams& p,
                        AttemptReport& report) {
  const auto& request = *p.request;
  auto rewrite = rewrite_model(request.body, *request.facts, p.model);
  if (!rewrite) {
    report.error = "model rewrite: " + rewrite.error().message;
    co_return false;
  }
  const std::string head = build_request_head(request, *p.candidate, rewrite->size());
  const std::array<asio::const_buffer, 4> buffers = {
      asio::buffer(head), asio::buffer(rewrite->prefix), asio::buffer(rewrite->model_token),
      asio::buffer(rewrite->suffix)};
  connection.tcp().expires_at(p.deadline);
  auto [write_ec, written] = co_await asio::async_write(upstream, buffers, kNoThrow);
  if (write_ec) {
    report.outcome = connection.reused && is_stale_connection_error(write_ec) ? Outcome::kStale
                                                                              : Outcome::kFailed;
    report.error = "send: " + write_ec.message();
    co_return false;
  }
  co_return true;
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
      report.error = !report.timed_out  ? "response: " + ec.message()
                     : request_deadline ? "no response within upstream_timeout_ms"
                                        : "no response within first_byte_timeout_ms";
      co_return false;
    }
    const unsigned status = parser->get().result_int();
    if (status == 101) {
      report.error = "upstream switched protocols (101), which was never asked for";
      co_return false;
    }
    if (status >= 200) co_return true;
  }
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

// The client's response head, from the upstream's final head.
http::response<http::buffer_body> client_head(const ResponseParser& parser,
                                              const AttemptParams& p) {
  const auto& request = *p.request;
  const auto& in = parser.get();
  const unsigned status = in.result_int();
  http::response<http::buffer_body> res;
  res.version(request.client_version == 10 ? 10 : 11);
  res.result(status);  // any three-digit status passes with its number and reason
  res.reason(in.reason());
  copy_response_fields(in, res, request.snapshot->config().server.forwarded_headers);
  res.set("x-rolter-target", p.candidate->label);
  res.set("x-rolter-attempts", std::to_string(p.attempt_number));
  const bool bodiless = status == 204 || status == 304;
  bool keep_alive = request.client_keep_alive;
  if (auto length = parser.content_length(); length && !bodiless) {
    res.content_length(*length);
  } else if (!parser.is_done()) {
    // An HTTP/1.0 client cannot read chunked: the end of its body is the end of the connection.
    if (request.client_version == 10) {
      keep_alive = false;
    } else {
      res.chunked(true);
    }
  } else if (!bodiless) {
    res.content_length(0);
  }
  res.keep_alive(keep_alive);
  return res;
}

// Whether the exchange left the connection fit for another request: RFC 9112 §9.3 keep-alive and
// complete framing. 204 and 304 carry no body by definition; one that sent a body anyway left bytes
// that may still be in flight, so those connections are never reused. (That nothing was read past
// the response is the pool's check: ConnectionPool::give_back.)
bool clean_after(const ResponseParser& parser) {
  const unsigned status = parser.get().result_int();
  return parser.is_done() && parser.keep_alive() && status != 204 && status != 304;
}

// Writes `data` to the client as the next piece of the body. False when the client is gone.
Task<bool> write_piece(beast::tcp_stream& client, http::response_serializer<http::buffer_body>& sr,
                       http::response<http::buffer_body>& res, std::string_view data) {
  if (data.empty()) co_return true;
  res.body().data = const_cast<char*>(data.data());
  res.body().size = data.size();
  res.body().more = true;
  auto [ec, n] = co_await http::async_write(client, sr, kNoThrow);
  co_return !ec || ec == http::error::need_buffer;
}

// Relays the body as it arrives, until the upstream finishes, fails, or the request's deadline
// passes. The deadline is checked on every chunk, not only by the socket timer: a stream whose
// reads all complete at once never lets the timer's handler run.
//
// An SSE stream goes out whole event by whole event: the bytes of an event not yet complete wait
// in the buffer for the rest. So a stream that breaks mid-event ends cleanly with the error event,
// never with half an event a client would fail to parse.
template <typename Stream>
Task<void> relay_body(Stream& upstream, UpstreamConnection& connection, beast::tcp_stream& client,
                      ResponseParser& parser, http::response<http::buffer_body>& res,
                      const AttemptParams& p, AttemptReport& report) {
  const bool is_sse = parser.get()[http::field::content_type].starts_with("text/event-stream");
  if (!is_sse) report.first_token = report.first_byte;
  http::response_serializer<http::buffer_body> sr{res};
  res.body().data = nullptr;
  res.body().more = !parser.is_done();
  auto [head_ec, head_bytes] = co_await http::async_write_header(client, sr, kNoThrow);
  auto client_gone = [&] {
    report.client_usable = false;
    report.client_gone = true;
  };
  if (head_ec) co_return client_gone();
  SseProgress progress;
  std::array<char, kRelayBufferBytes> buffer;
  size_t held = 0;  // SSE: the start of an incomplete event, at the front of `buffer`
  while (!parser.is_done()) {
    error_code read_ec = beast::error::timeout;
    if (std::chrono::steady_clock::now() < p.deadline) {
      parser.get().body().data = buffer.data() + held;
      parser.get().body().size = buffer.size() - held;
      connection.tcp().expires_at(p.deadline);
      auto [ec, n] = co_await http::async_read_some(upstream, connection.buffer, parser, kNoThrow);
      read_ec = ec == http::error::need_buffer ? error_code{} : ec;
      const size_t got = buffer.size() - held - parser.get().body().size;
      const std::string_view fresh(buffer.data() + held, got);
      report.usage.feed(fresh);
      if (is_sse && progress.feed(fresh) && !report.first_token) {
        report.first_token = std::chrono::steady_clock::now();
      }
      const std::string_view ready(buffer.data(), held + got);
      size_t send = ready.size();
      if (is_sse && !parser.is_done()) {
        // Hold an incomplete event back, unless it fills the buffer (then it goes as it is), or
        // drop it when the stream broke.
        const size_t whole = complete_events_length(ready);
        if (whole > 0 || ready.size() < buffer.size() || read_ec) send = whole;
      }
      if (!co_await write_piece(client, sr, res, ready.substr(0, send))) co_return client_gone();
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
        co_await write_piece(
            client, sr, res,
            stream_error_event(p.request->kind, why, progress.last_sequence_number()));
      }
      co_return;
    }
  }
  res.body().data = nullptr;
  res.body().size = 0;
  res.body().more = false;
  auto [finish_ec, finish_bytes] = co_await http::async_write(client, sr, kNoThrow);
  if (finish_ec) co_return client_gone();
  report.client_usable = res.keep_alive();
  report.reusable = clean_after(parser);
}

template <typename Stream>
Task<AttemptReport> run_one(Stream& upstream, UpstreamConnection& connection,
                            beast::tcp_stream& client, const AttemptParams& p) {
  AttemptReport report;
  if (!co_await send_request(upstream, connection, p, report)) co_return report;
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
  if (p.may_retry &&
      std::find(retry_statuses.begin(), retry_statuses.end(), status) != retry_statuses.end()) {
    report.error = "status " + std::to_string(status);
    co_return report;  // not reusable: its body was not read
  }

  // From here on the client sees this response: no more retries.
  report.outcome = Outcome::kRelayed;
  auto res = client_head(*parser, p);
  report.first_byte = std::chrono::steady_clock::now();
  co_await relay_body(upstream, connection, client, *parser, res, p, report);
  co_return report;
}

// Reads the client side while a response is in flight. A client that shuts down its sending side
// after a complete request (a half-close) still waits for its answer: that is noted, not acted
// on. Any other read error means the client is gone: the in-flight upstream exchange is cancelled.
// Bytes the client sends meanwhile (a pipelined request) are kept in `buffer` for the next request.
Task<void> watch_client(beast::tcp_stream& client, beast::flat_buffer& buffer,
                        UpstreamConnection** in_flight, ClientWatch& watch) {
  co_await asio::this_coro::throw_if_cancelled(false);
  auto [ec, n] = co_await client.socket().async_read_some(buffer.prepare(4096), kNoThrow);
  if (!ec || ec == asio::error::eof) {
    buffer.commit(n);
    watch.half_closed = ec == asio::error::eof;
    // Keep the read side quiet until the response is done; the relay branch ends this wait.
    asio::steady_timer forever(co_await asio::this_coro::executor,
                               asio::steady_timer::time_point::max());
    co_await forever.async_wait(kNoThrow);
    co_return;
  }
  if (*in_flight != nullptr) (*in_flight)->tcp().cancel();
}

}  // namespace

Task<error_code> write_error(beast::tcp_stream& client, ErrorStyle style, const ApiError& error,
                             bool keep_alive, unsigned attempts) {
  http::response<http::string_body> res{static_cast<http::status>(error.status), 11};
  res.set(http::field::content_type, "application/json");
  if (attempts > 0) res.set("x-rolter-attempts", std::to_string(attempts));
  res.body() = error_body(style, error);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  auto [ec, n] = co_await http::async_write(client, res, kNoThrow);
  co_return ec;
}

Task<ForwardResult> Forwarder::forward(beast::tcp_stream& client, beast::flat_buffer& client_buffer,
                                       const ForwardRequest& request) {
  UpstreamConnection* in_flight = nullptr;
  ClientWatch watch;
  const auto started = std::chrono::steady_clock::now();
  // A client that stops reading cannot hold a worker's stream beyond the request's own deadline.
  client.expires_after(milliseconds(request.snapshot->config().server.upstream_timeout_ms));
  auto done = co_await (run_attempts(client, request, &in_flight) ||
                        watch_client(client, client_buffer, &in_flight, watch));
  if (done.index() == 0) {
    ForwardResult result = std::get<0>(std::move(done));
    // A half-closed client sends nothing more: the connection ends with this answer.
    if (watch.half_closed) result.client_usable = false;
    co_return result;
  }
  // The client left before its answer: 499, once, as nginx logs it; never a 5xx.
  const auto& pool = *request.route.pool;
  Metrics::count_response(pool.no_target, kClientClosedRequest);
  log_request(RequestLogLine{
      .route = pool.name,
      .target = "none",
      .status = kClientClosedRequest,
      .duration_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()});
  ForwardResult gone;
  gone.client_usable = false;
  gone.status = kClientClosedRequest;
  co_return gone;
}

Task<ForwardResult> Forwarder::run_attempts(beast::tcp_stream& client,
                                            const ForwardRequest& request,
                                            UpstreamConnection** in_flight) {
  co_await asio::this_coro::throw_if_cancelled(false);
  const auto& snapshot = *request.snapshot;
  const auto& server = snapshot.config().server;
  const auto& retry = snapshot.config().retry;
  const BreakerParams& breaker = snapshot.breaker();
  const auto& pool = *request.route.pool;
  const size_t n = pool.candidates.size();
  const Loads loads = pool.loads();
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + milliseconds(server.upstream_timeout_ms);
  const unsigned max_attempts = std::max<unsigned>(1, retry.max_attempts);
  Metrics* metrics = snapshot.metrics();
  auto seconds_since_start = [&](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(t - started).count();
  };

  // `excluded`: tried in this request, or not allowed to the key. Eligible adds availability.
  boost::container::small_vector<bool, 64> excluded(n, false);
  for (size_t i = 0; i < n; ++i) {
    excluded[i] =
        request.key != nullptr && !request.key->allows_provider(pool.candidates[i].provider->name);
  }
  auto now = clock_.now();
  auto eligible = [&](size_t i) {
    return i < n && !excluded[i] &&
           availability(pool.candidates[i].state->health, now, breaker) == OutReason::kNone;
  };
  std::string failures;
  bool all_timeouts = true;
  bool all_auth_rejected = true;
  unsigned attempts = 0;
  ForwardResult result;

  // No new attempt once the request's own deadline has passed: it could only time out at once,
  // and would count against an instance that never saw the request.
  while (attempts < max_attempts && std::chrono::steady_clock::now() < deadline) {
    auto cs = co_await asio::this_coro::cancellation_state;
    if (cs.cancelled() != asio::cancellation_type::none) {
      result.client_usable = false;
      co_return result;
    }
    now = clock_.now();
    auto pick = pool.balancer->pick_eligible(*request.ctx, loads, eligible);
    // A strategy may ignore eligibility (SPEC §5): skip its ineligible answer ourselves.
    if (pick && !eligible(*pick)) {
      pick.reset();
      for (size_t i = 0; i < n; ++i) {
        if (eligible(i)) {
          pick = i;
          break;
        }
      }
    }
    bool bypass_admit = false;
    if (!pick) {
      // Everything is out. Rather than fail, try the candidate that comes back soonest by
      // itself (parking or an open breaker ends); unhealthy ones do not come back on a timer.
      int64_t soonest = std::numeric_limits<int64_t>::max();
      for (size_t i = 0; i < n; ++i) {
        if (excluded[i]) continue;
        const auto& health = pool.candidates[i].state->health;
        const auto reason = availability(health, now, breaker);
        if (reason == OutReason::kUnhealthy) continue;
        if (const int64_t at = back_at(health, breaker); at < soonest) {
          soonest = at;
          pick = i;
        }
      }
      bypass_admit = true;
    }
    if (!pick) break;
    const size_t index = *pick;
    const Candidate& candidate = pool.candidates[index];
    auto& health = candidate.state->health;
    excluded[index] = true;
    if (!bypass_admit && !admit(health, now, breaker)) continue;  // lost a half-open probe race
    ++attempts;
    Metrics::count_pick(candidate.instruments);
    if (attempts > 1) Metrics::count_retry(pool.instruments);
    InFlightGuard guard(*candidate.state);

    AttemptParams params{
        .request = &request,
        .candidate = &candidate,
        .model = request.route.upstream_model(index),
        .may_retry = attempts < max_attempts &&
                     std::any_of(excluded.begin(), excluded.end(), [](bool e) { return !e; }),
        .attempt_number = attempts,
        .first_byte_timeout = milliseconds(server.first_byte_timeout_ms),
        .deadline = deadline,
    };

    AttemptReport report;
    auto connection = pool_.take(candidate.state->id);
    // A stale pooled connection is replaced once by a fresh one, without counting an attempt.
    for (int fresh_tries = 0; fresh_tries < 2; ++fresh_tries) {
      if (!connection) {
        const auto left =
            std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
        auto [ec, fresh] = co_await connect_upstream(
            *candidate.endpoint, candidate.state->id, tls_,
            std::clamp(left, milliseconds(1), milliseconds(server.connect_timeout_ms)));
        if (ec) {
          report = AttemptReport{};
          report.error = "connect: " + ec.message();
          report.refused = ec == asio::error::connection_refused;
          // A connect that timed out is an upstream timeout too (SPEC §2: 504).
          report.timed_out = ec == beast::error::timeout;
          break;
        }
        connection = std::move(fresh);
      }
      *in_flight = connection.get();
      report = co_await std::visit(
          [&](auto& stream) { return run_one(stream, *connection, client, params); },
          connection->stream);
      *in_flight = nullptr;
      if (report.outcome != Outcome::kStale) break;
      connection.reset();
    }

    // A client that went away cut the attempt short: that says nothing about the instance, and
    // there is no one left to answer (forward() logs the 499).
    auto cancelled = co_await asio::this_coro::cancellation_state;
    if (cancelled.cancelled() != asio::cancellation_type::none) {
      result.client_usable = false;
      result.attempts = attempts;
      co_return result;
    }

    // What this attempt teaches about the instance (SPEC §8).
    const auto after = clock_.now();
    if (report.auth_rejected) {
      // A credentials problem is the operator's to fix; the instance itself is fine.
    } else if (report.refused) {
      park_refused(health, after);
      record_failure(health, after, breaker);
      if (metrics != nullptr) metrics->park(candidate.state->identity, "refused");
    } else if (report.status == 429) {
      const auto cap = milliseconds(retry.park_on_429_max_ms);
      const auto wait = report.retry_after.value_or(std::chrono::seconds(1));
      park_for(health, after, std::min<Clock::Duration>(wait, cap));
      if (metrics != nullptr) metrics->park(candidate.state->identity, "429");
      record_success(health);  // it answered: rate limiting is not a fault of the instance
    } else if (report.status >= 500 || report.broken ||
               (report.status == 0 && report.outcome == Outcome::kFailed)) {
      record_failure(health, after, breaker);
    } else if (report.status != 0) {
      record_success(health);
    }

    if (report.outcome == Outcome::kRelayed) {
      if (report.reusable) pool_.give_back(std::move(connection));
      pool.balancer->observe(index, *request.ctx);
      // A client that left before the end is logged and counted as 499, never as the relayed
      // status: it did not get it (nginx's "client closed request").
      const unsigned logged_status = report.client_gone ? kClientClosedRequest : report.status;
      Metrics::count_response(candidate.instruments, logged_status);
      std::optional<double> ttft;
      if (report.first_token) {
        ttft = seconds_since_start(*report.first_token);
        Metrics::observe_seconds(pool.instruments.ttft, *ttft);
      }
      const double duration = seconds_since_start(std::chrono::steady_clock::now());
      Metrics::observe_seconds(pool.instruments.duration, duration);
      Metrics::count_tokens(pool.instruments, report.usage.input_tokens(),
                            report.usage.output_tokens());
      log_request(RequestLogLine{.route = pool.name,
                                 .target = candidate.label,
                                 .attempts = attempts,
                                 .status = logged_status,
                                 .upstream_status = report.status,
                                 .duration_s = duration,
                                 .ttft_s = ttft,
                                 .tokens_in = report.usage.input_tokens(),
                                 .tokens_out = report.usage.output_tokens(),
                                 .complete = !report.broken && !report.client_gone});
      result.client_usable = report.client_usable;
      result.status = report.status;
      result.attempts = attempts;
      co_return result;
    }
    all_timeouts = all_timeouts && report.timed_out;
    all_auth_rejected = all_auth_rejected && report.auth_rejected;
    // Targets are named as clients know them; internal URLs stay out of answers.
    if (!failures.empty()) failures.append("; ");
    failures.append(candidate.label).append(": ").append(report.error);
  }

  result.attempts = attempts;
  ApiError error;
  if (attempts == 0) {
    error.status = 503;
    error.message = "no eligible target for '" + pool.name + "':";
    for (size_t i = 0; i < n; ++i) {
      const auto& c = pool.candidates[i];
      error.message.append(i == 0 ? " " : "; ").append(c.label).append(": ");
      if (request.key != nullptr && !request.key->allows_provider(c.provider->name)) {
        error.message.append("not allowed to this key");
      } else {
        error.message.append(out_reason_text(availability(c.state->health, now, breaker)));
      }
    }
  } else {
    error.status = all_timeouts ? 504 : 502;
    error.message = "all " + std::to_string(attempts) + " attempts failed: " + failures;
    if (all_auth_rejected) error.code = "upstream_auth_failed";
  }
  result.status = error.status;
  Metrics::count_response(pool.no_target, error.status);
  const auto ec =
      co_await write_error(client, request.style, error, request.client_keep_alive, attempts);
  const double duration = seconds_since_start(std::chrono::steady_clock::now());
  Metrics::observe_seconds(pool.instruments.duration, duration);
  log_request(RequestLogLine{.route = pool.name,
                             .target = "none",
                             .attempts = attempts,
                             .status = error.status,
                             .duration_s = duration});
  result.client_usable = !ec && request.client_keep_alive;
  co_return result;
}

}  // namespace rolter
