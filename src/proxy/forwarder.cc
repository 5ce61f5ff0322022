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
#include <limits>
#include <optional>

#include "inspect/model_rewrite.h"
#include "proxy/request_log.h"
#include "proxy/usage_scanner.h"

namespace rolter {
namespace http = beast::http;
using namespace asio::experimental::awaitable_operators;
using std::chrono::milliseconds;

namespace {

// Relay buffer: one SSE event of a token is tens of bytes, a non-streamed answer a few KiB.
constexpr size_t kRelayBufferBytes = 16 * 1024;
constexpr size_t kMaxResponseHeaderBytes = 64 * 1024;

bool is_hop_by_hop(std::string_view name) {
  static constexpr std::array<std::string_view, 8> kHopByHop = {
      "connection", "keep-alive", "proxy-connection", "te",
      "trailer",    "transfer-encoding", "upgrade", "proxy-authenticate"};
  for (auto h : kHopByHop) {
    if (beast::iequals(name, h)) return true;
  }
  return false;
}

// Client headers that belong to the gateway hop, not to the upstream.
bool is_gateway_only(std::string_view name) {
  return is_hop_by_hop(name) || beast::iequals(name, "host") ||
         beast::iequals(name, "content-length") || beast::iequals(name, "authorization") ||
         beast::iequals(name, "x-api-key") || beast::iequals(name, "expect");
}


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
  std::string head;
  head.reserve(512);
  head.append(client.method_string());
  head.push_back(' ');
  head.append(candidate.endpoint->base_path);
  head.append(client.target());
  head.append(" HTTP/1.1\r\nHost: ");
  head.append(candidate.endpoint->host_header);
  head.append("\r\n");
  if (client.method() != http::verb::get || body_length > 0) {
    head.append("Content-Length: ").append(std::to_string(body_length)).append("\r\n");
  }
  const auto& api_key = candidate.provider->api_key;
  if (!api_key.empty()) {
    if (candidate.provider->kind == ProviderKind::kAnthropic) {
      head.append("x-api-key: ").append(api_key).append("\r\n");
    } else {
      head.append("Authorization: Bearer ").append(api_key).append("\r\n");
    }
  }
  for (const auto& field : client) {
    if (is_gateway_only(field.name_string())) continue;
    head.append(field.name_string()).append(": ").append(field.value()).append("\r\n");
  }
  head.append("\r\n");
  return head;
}

// What one attempt on one candidate came to.
enum class Outcome {
  kRelayed,      // a response went to the client (completely, or cut by the client)
  kStale,        // reused connection was dead before any response byte: resend, same candidate
  kFailed,       // failed before anything reached the client: another candidate may serve
};

struct AttemptReport {
  Outcome outcome = Outcome::kFailed;
  std::string error;       // for kFailed: what went wrong, for the 502 message
  bool timed_out = false;  // for kFailed: a first-byte timeout
  bool refused = false;    // for kFailed: the connection was refused
  bool broken = false;     // for kRelayed: the upstream failed mid-body
  bool reusable = false;   // the upstream connection may go back to the pool
  bool client_usable = true;
  unsigned status = 0;     // the upstream status, when a response head arrived
  std::chrono::steady_clock::time_point first_byte;  // for kRelayed: head sent to the client
  UsageScanner usage;  // for kRelayed: token usage seen in the relayed body
  std::optional<std::chrono::seconds> retry_after;  // from a 429's Retry-After
};

// Retry-After in delta-seconds; an HTTP-date (rare from engines) is read as 1 s.
std::optional<std::chrono::seconds> parse_retry_after(std::string_view value) {
  if (value.empty()) return std::nullopt;
  uint64_t seconds = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::chrono::seconds(1);
    seconds = std::min<uint64_t>(seconds * 10 + static_cast<uint64_t>(c - '0'), 86400);
  }
  return std::chrono::seconds(seconds);
}

struct AttemptParams {
  const ForwardRequest* request;
  const Candidate* candidate;
  std::string_view model;  // upstream model to write into the body
  bool may_retry;          // another attempt could follow a retryable status
  unsigned attempt_number;
  milliseconds first_byte_timeout;
  std::chrono::steady_clock::time_point deadline;
};

Task<void> write_sse_error(beast::tcp_stream& client, http::response_serializer<http::buffer_body>& sr,
                           http::response<http::buffer_body>& res, ErrorStyle style,
                           std::string_view why) {
  std::string event = "event: error\ndata: ";
  event.append(error_body(style, ApiError{.status = 502,
                                          .type = "api_error",
                                          .message = "upstream failed mid-stream: " +
                                                     std::string(why)}));
  event.append("\n\n");
  res.body().data = event.data();
  res.body().size = event.size();
  res.body().more = true;
  co_await http::async_write(client, sr, kNoThrow);
}

template <typename Stream>
Task<AttemptReport> run_one(Stream& upstream, UpstreamConnection& connection,
                            beast::tcp_stream& client, const AttemptParams& p) {
  AttemptReport report;
  const auto& request = *p.request;
  const auto& candidate = *p.candidate;

  // The body goes out as three pieces around the rewritten model: no copy of the body.
  auto rewrite = rewrite_model(request.body, *request.facts, p.model);
  if (!rewrite) {
    report.error = "model rewrite: " + rewrite.error().message;
    co_return report;
  }
  const std::string head = build_request_head(request, candidate, rewrite->size());
  const std::array<asio::const_buffer, 4> buffers = {
      asio::buffer(head), asio::buffer(rewrite->prefix), asio::buffer(rewrite->model_token),
      asio::buffer(rewrite->suffix)};

  auto& tcp = connection.tcp();
  tcp.expires_at(p.deadline);
  auto [write_ec, written] = co_await asio::async_write(upstream, buffers, kNoThrow);
  if (write_ec) {
    report.outcome = connection.reused && is_stale_connection_error(write_ec) ? Outcome::kStale
                                                                              : Outcome::kFailed;
    report.error = "send: " + write_ec.message();
    co_return report;
  }

  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  parser.header_limit(kMaxResponseHeaderBytes);
  tcp.expires_at(std::min(p.deadline, std::chrono::steady_clock::now() + p.first_byte_timeout));
  auto [header_ec, header_bytes] =
      co_await http::async_read_header(upstream, connection.buffer, parser, kNoThrow);
  if (header_ec) {
    if (connection.reused && is_stale_connection_error(header_ec) && header_bytes == 0) {
      report.outcome = Outcome::kStale;
    }
    report.timed_out = header_ec == beast::error::timeout;
    report.error = report.timed_out ? "no response within first_byte_timeout_ms"
                                    : "response: " + header_ec.message();
    co_return report;
  }

  const auto& head_in = parser.get();
  const unsigned status = head_in.result_int();
  report.status = status;
  if (status == 429) report.retry_after = parse_retry_after(head_in[http::field::retry_after]);
  const auto& retry_statuses = request.snapshot->config().retry.on_status;
  if (p.may_retry &&
      std::find(retry_statuses.begin(), retry_statuses.end(), status) != retry_statuses.end()) {
    report.error = "status " + std::to_string(status);
    co_return report;  // not reusable: its body was not read
  }

  // From here on the client sees this response: no more retries.
  report.outcome = Outcome::kRelayed;
  http::response<http::buffer_body> res{head_in.result(), 11};
  for (const auto& field : head_in) {
    if (is_hop_by_hop(field.name_string()) || beast::iequals(field.name_string(), "content-length"))
      continue;
    res.insert(field.name_string(), field.value());
  }
  res.set("x-rolter-target", candidate.label);
  res.set("x-rolter-attempts", std::to_string(p.attempt_number));
  if (auto length = parser.content_length()) {
    res.content_length(*length);
  } else if (!parser.is_done()) {
    res.chunked(true);
  } else {
    res.content_length(0);
  }
  res.keep_alive(request.client_keep_alive);
  const bool is_sse = head_in[http::field::content_type].starts_with("text/event-stream");

  http::response_serializer<http::buffer_body> sr{res};
  res.body().data = nullptr;
  res.body().more = !parser.is_done();
  report.first_byte = std::chrono::steady_clock::now();
  auto [client_header_ec, client_header_bytes] =
      co_await http::async_write_header(client, sr, kNoThrow);
  if (client_header_ec) {
    report.client_usable = false;
    co_return report;
  }

  std::array<char, kRelayBufferBytes> buffer;
  while (!parser.is_done()) {
    parser.get().body().data = buffer.data();
    parser.get().body().size = buffer.size();
    tcp.expires_at(p.deadline);
    auto [read_ec, read_bytes] =
        co_await http::async_read_some(upstream, connection.buffer, parser, kNoThrow);
    if (read_ec == http::error::need_buffer) read_ec = {};
    const size_t got = buffer.size() - parser.get().body().size;
    if (got > 0) {
      report.usage.feed(std::string_view(buffer.data(), got));
      res.body().data = buffer.data();
      res.body().size = got;
      res.body().more = true;
      auto [client_ec, client_bytes] = co_await http::async_write(client, sr, kNoThrow);
      if (client_ec && client_ec != http::error::need_buffer) {
        report.client_usable = false;  // the client went away: drop the upstream request too
        co_return report;
      }
    }
    if (read_ec) {
      report.broken = true;
      // Mid-body failure: never a silent truncation that looks like success.
      if (is_sse) {
        const std::string why = read_ec.message();
        co_await write_sse_error(client, sr, res, request.style, why);
      }
      report.client_usable = false;
      co_return report;
    }
  }
  res.body().data = nullptr;
  res.body().size = 0;
  res.body().more = false;
  auto [finish_ec, finish_bytes] = co_await http::async_write(client, sr, kNoThrow);
  report.client_usable = !finish_ec && request.client_keep_alive;
  report.reusable = head_in.keep_alive();
  co_return report;
}

// Reads the client side while a response is in flight. A read error means the client went away;
// it then cancels the in-flight upstream exchange and returns. Bytes the client sends meanwhile
// (a pipelined request) are kept in `buffer` for the next request.
Task<void> watch_client(beast::tcp_stream& client, beast::flat_buffer& buffer,
                        UpstreamConnection** in_flight) {
  co_await asio::this_coro::throw_if_cancelled(false);
  auto [ec, n] = co_await client.socket().async_read_some(buffer.prepare(4096), kNoThrow);
  if (!ec) {
    buffer.commit(n);
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

Task<ForwardResult> Forwarder::forward(beast::tcp_stream& client,
                                       beast::flat_buffer& client_buffer,
                                       const ForwardRequest& request) {
  UpstreamConnection* in_flight = nullptr;
  // A client that stops reading cannot hold a worker's stream beyond the request's own deadline.
  client.expires_after(milliseconds(request.snapshot->config().server.upstream_timeout_ms));
  auto done = co_await (run_attempts(client, request, &in_flight) ||
                        watch_client(client, client_buffer, &in_flight));
  if (done.index() == 0) co_return std::get<0>(std::move(done));
  log_request(RequestLogLine{.route = request.route.pool->name, .target = "none", .status = 499});
  ForwardResult gone;
  gone.client_usable = false;
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
    excluded[i] = request.key != nullptr &&
                  !request.key->allows_provider(pool.candidates[i].provider->name);
  }
  auto now = clock_.now();
  auto eligible = [&](size_t i) {
    return i < n && !excluded[i] &&
           availability(pool.candidates[i].state->health, now, breaker) == OutReason::kNone;
  };
  std::string failures;
  bool all_timeouts = true;
  unsigned attempts = 0;
  ForwardResult result;

  while (attempts < max_attempts) {
    auto cs = co_await asio::this_coro::cancellation_state;
    if (cs.cancelled() != asio::cancellation_type::none) break;
    now = clock_.now();
    auto pick = pool.balancer->pick_eligible(*request.ctx, loads, eligible);
    // A strategy may ignore eligibility (SPEC §5): skip its ineligible answer ourselves.
    if (pick && !eligible(*pick)) {
      pick.reset();
      for (size_t i = 0; i < n; ++i) {
        if (eligible(i)) { pick = i; break; }
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
        auto [ec, fresh] = co_await connect_upstream(*candidate.endpoint, candidate.state->id, tls_,
                                                     milliseconds(server.connect_timeout_ms));
        if (ec) {
          report = AttemptReport{};
          report.error = "connect: " + ec.message();
          report.refused = ec == asio::error::connection_refused;
          report.timed_out = false;
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

    // A client that went away cut the attempt short: that says nothing about the instance.
    auto cancelled = co_await asio::this_coro::cancellation_state;
    if (cancelled.cancelled() != asio::cancellation_type::none) break;

    // What this attempt teaches about the instance (SPEC §8).
    const auto after = clock_.now();
    if (report.refused) {
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
      if (report.reusable && report.client_usable) pool_.give_back(std::move(connection));
      pool.balancer->observe(index, *request.ctx);
      Metrics::count_response(candidate.instruments, report.status);
      Metrics::observe_seconds(pool.instruments.ttft, seconds_since_start(report.first_byte));
      const double duration = seconds_since_start(std::chrono::steady_clock::now());
      const double ttft = seconds_since_start(report.first_byte);
      Metrics::observe_seconds(pool.instruments.duration, duration);
      Metrics::count_tokens(pool.instruments, report.usage.input_tokens(),
                            report.usage.output_tokens());
      log_request(RequestLogLine{.route = pool.name,
                                 .target = candidate.label,
                                 .attempts = attempts,
                                 .status = report.status,
                                 .duration_s = duration,
                                 .ttft_s = ttft,
                                 .tokens_in = report.usage.input_tokens(),
                                 .tokens_out = report.usage.output_tokens(),
                                 .complete = !report.broken});
      result.client_usable = report.client_usable;
      result.status = report.status;
      result.attempts = attempts;
      co_return result;
    }
    all_timeouts = all_timeouts && report.timed_out;
    if (!failures.empty()) failures.append("; ");
    failures.append(candidate.label).append(" (").append(candidate.endpoint->base_url);
    failures.append("): ").append(report.error);
  }

  result.attempts = attempts;
  ApiError error;
  if (attempts == 0) {
    error.status = 503;
    error.message = "no eligible target for '" + pool.name + "':";
    for (size_t i = 0; i < n; ++i) {
      const auto& c = pool.candidates[i];
      error.message.append(i == 0 ? " " : "; ").append(c.label).append(" (");
      error.message.append(c.endpoint->base_url).append("): ");
      if (request.key != nullptr && !request.key->allows_provider(c.provider->name)) {
        error.message.append("not allowed to this key");
      } else {
        error.message.append(out_reason_text(availability(c.state->health, now, breaker)));
      }
    }
  } else {
    error.status = all_timeouts ? 504 : 502;
    error.message = "all " + std::to_string(attempts) + " attempts failed: " + failures;
  }
  result.status = error.status;
  Metrics::count_response(pool.no_target, error.status);
  const auto ec = co_await write_error(client, request.style, error, request.client_keep_alive,
                                       attempts);
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
