#include "server/http_session.h"

#include <boost/asio/ip/address_v4.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <array>
#include <chrono>
#include <optional>
#include <string>

#include "http/buffered_parse.h"
#include "http/request_framing.h"
#include "proxy/forwarder.h"
#include "server/endpoints.h"
#include "server/refusal_log.h"
#include "server/server_state.h"
#include "server/worker.h"
#include "trace/request_trace.h"

namespace rolter {
namespace http = beast::http;

namespace {

// A client request's parser, its fields from the worker's small-block cache (http/fields.h).
using ClientRequestParser = http::request_parser<http::string_body, FieldAllocator>;

// Bounds a request head; 64 KiB holds any sane set of headers and rejects header floods early.
constexpr uint32_t kMaxHeaderBytes = 64 * 1024;
// The request body must arrive within this.
constexpr auto kBodyTimeout = std::chrono::seconds(60);

// RAII: counts a request in progress for the drain.
struct ActiveRequest {
  explicit ActiveRequest(ServerState& s) : state(s) { state.request_started(); }
  ~ActiveRequest() { state.request_finished(); }
  ServerState& state;
};

// RAII: registers the stream as idle (between requests) with its worker.
struct IdleMark {
  IdleMark(Worker& w, TimedStream& s) : worker(w) {
    link.stream = &s;
    worker.add_idle(link);
  }
  IdleMark(const IdleMark&) = delete;
  ~IdleMark() { worker.remove_idle(link); }
  Worker& worker;
  Worker::IdleLink link;
};

// The answer to a request that could not be read, or nullopt when the client is simply gone.
std::optional<ApiError> read_error(const error_code& ec, const Snapshot& snapshot) {
  if (ec == http::error::header_limit) {
    return ApiError{.status = 431, .message = "request headers too large"};
  }
  if (ec == http::error::body_limit) {
    return ApiError{.status = 413,
                    .message = "request body larger than " +
                               std::to_string(snapshot.config().server.max_body_bytes) +
                               " bytes (server.max_body_bytes)"};
  }
  if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
      ec == asio::error::operation_aborted || ec == beast::error::timeout ||
      ec == asio::error::eof || ec == asio::error::connection_reset) {
    return std::nullopt;
  }
  return ApiError{.status = 400, .message = "malformed HTTP request: " + ec.message()};
}

// Lingering close (as nginx does): after an error answered before the body was read, keep reading
// and discarding what the client still sends, for a short while, before closing. Closing with
// unread data makes the kernel send a reset, which can destroy the answer before the client reads
// it.
constexpr auto kLingerTime = std::chrono::seconds(2);

Task<void> discard_until_close(TimedStream& stream) {
  std::array<char, 4096> scratch;
  stream.expires_after(kLingerTime);
  for (;;) {
    auto [ec, n] = co_await stream.async_read_some(asio::buffer(scratch), kNoThrow);
    if (ec) co_return;
  }
}

// What the client's head says of the request's id and trace (SPEC §17).
IncomingTrace incoming_trace(const ClientRequestParser& parser) {
  const auto& request = parser.get();
  IncomingTrace in;
  in.request_id = request["x-request-id"];
  const auto traceparent = request.find("traceparent");
  if (traceparent != request.end()) {
    in.traceparent = traceparent->value();
    in.several_traceparents = request.count("traceparent") > 1;
  }
  in.tracestate = request["tracestate"];
  return in;
}

TracingSettings tracing_settings(const Snapshot& snapshot) {
  const TracingConfig& tracing = snapshot.config().tracing;
  return {.exporting = !tracing.otlp_endpoint.empty(), .sample_ratio = tracing.sample_ratio};
}

// True when the body has not been (and would have to be) read: the connection cannot carry
// another request unless it is.
bool body_pending(const ClientRequestParser& parser) {
  return !parser.is_done();
}

}  // namespace

std::string client_ip(const asio::ip::tcp::socket& socket) {
  error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  auto address = endpoint.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).to_string();
  }
  return address.to_string();
}

Task<void> serve_connection(Worker& worker, TimedStream stream, ClientPeer peer) {
  beast::flat_buffer buffer;
  RequestFacts facts;  // reused across the connection's requests: no allocation once warm
  RequestTrace trace;  // the same: each request's id and trace (SPEC §17)
  auto& server = worker.server();
  const TraceDeps trace_deps{.queue = server.spans};
  bool linger = false;  // closing with the client possibly still sending: see discard_until_close
  ClientWatch watch(stream);
  for (;;) {
    // The metrics listener keeps answering through a drain: its /readyz says 503 to the load
    // balancer's probes, its /healthz 200 until the process exits (SPEC §17).
    if (server.draining() && peer.listener == Listener::kMain) break;
    ClientRequestParser parser;
    parser.header_limit(kMaxHeaderBytes);
    std::shared_ptr<const Snapshot> snapshot = worker.snapshot();
    if (!snapshot) break;
    parser.body_limit(snapshot->config().server.max_body_bytes);

    const auto& limits = snapshot->config().server;
    error_code ec;
    if (buffer.size() == 0) {
      // Idle between requests: wait for the first byte of the next one.
      IdleMark idle(worker, stream);
      stream.expires_after(std::chrono::milliseconds(limits.idle_timeout_ms));
      auto [first_ec, first_bytes] =
          co_await stream.async_read_some(buffer.prepare(4096), kNoThrow);
      buffer.commit(first_bytes);
      ec = first_ec;
    }
    if (!ec) {
      // The whole head must follow within header_timeout_ms: a slow-loris client is cut here.
      // Usually it is already here, read with the first bytes.
      ec = parse_buffered(parser, buffer, ParseUntil::kHeader);
      if (!ec && !parser.is_header_done()) {
        stream.expires_after(std::chrono::milliseconds(limits.header_timeout_ms));
        auto [header_ec, n] = co_await http::async_read_header(stream, buffer, parser, kNoThrow);
        ec = header_ec;
      }
    }
    if (ec) {
      if (auto error = read_error(ec, *snapshot)) {
        trace.begin_unread(trace_deps);
        uint64_t sent = 0;
        co_await write_error(stream, ErrorStyle::kOpenAi, *error, trace.request_id(), false, 0, {},
                             {}, &sent);
        // The request line was read when a field failed (a Content-Length over the body limit);
        // not when the head as a whole was too large or malformed.
        const auto& partial = parser.get();
        log_refusal({.trace = trace,
                     .client = peer.ip,
                     .request = partial.target().empty() ? nullptr : &partial,
                     .status = error->status,
                     .bytes_out = sent});
        linger = true;
      }
      break;
    }
    auto& request = parser.get();
    trace.begin(trace_deps, tracing_settings(*snapshot), incoming_trace(parser));
    trace.set_http(request.method_string(), {});
    if (auto problem = request_framing_problem(request, request.version())) {
      // The body's extent is unknown or ambiguous: answer, and never read on from here.
      const ApiError error{.status = 400,
                           .message = "malformed HTTP request: " + std::string(*problem)};
      trace.set_status(error.status);
      uint64_t sent = 0;
      co_await write_error(stream, ErrorStyle::kOpenAi, error, trace.request_id(), false, 0, {}, {},
                           &sent);
      log_refusal({.trace = trace,
                   .client = peer.ip,
                   .request = &request,
                   .status = error.status,
                   .bytes_out = sent});
      trace.end();
      linger = true;
      break;
    }

    ActiveRequest active(server);
    snapshot = worker.snapshot();  // the newest snapshot for the request that just arrived
    const HeadVerdict head = check_head(worker, *snapshot, request, peer);
    trace.set_http(request.method_string(), endpoint_route(head.endpoint));
    if (head.error) {
      // Refused on its head alone: the body is never read, so the connection cannot go on.
      const bool keep = !body_pending(parser) && request.keep_alive() && !server.draining();
      trace.set_status(head.error->status);
      uint64_t sent = 0;
      const error_code write_ec = co_await write_error(stream, head.style, *head.error,
                                                       trace.request_id(), keep, 0, {}, {}, &sent);
      log_refusal({.trace = trace,
                   .client = peer.ip,
                   .request = &request,
                   .key = head.key,
                   .status = head.error->status,
                   .bytes_out = sent});
      trace.end();
      if (write_ec || !keep) {
        linger = !write_ec;
        break;
      }
      continue;
    }
    if (auto length = parser.content_length()) {
      // Room for the inspector's padding, so the body is parsed where it lies. Only now, once the
      // caller is known: a claimed length costs nothing before authentication.
      request.body().reserve(*length + RequestInspector::kPadding);
    }
    const size_t head_fields = field_count(request);
    // A small body came with the head: it is parsed where it lies, with no read to wait for (and
    // no deadline to set).
    error_code body_ec = parse_buffered(parser, buffer, ParseUntil::kMessage);
    if (!body_ec && body_pending(parser)) {
      stream.expires_after(kBodyTimeout);
      if (beast::iequals(request[http::field::expect], "100-continue")) {
        // Clients such as curl wait for this before sending a body over 1 KiB.
        static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
        auto [continue_ec, continue_bytes] =
            co_await asio::async_write(stream, asio::buffer(kContinue), kNoThrow);
        if (continue_ec) break;
      }
      auto [read_ec, body_bytes] = co_await http::async_read(stream, buffer, parser, kNoThrow);
      body_ec = read_ec;
    }
    if (body_ec) {
      if (auto error = read_error(body_ec, *snapshot)) {
        trace.set_status(error->status);
        uint64_t sent = 0;
        co_await write_error(stream, ErrorStyle::kOpenAi, *error, trace.request_id(), false, 0, {},
                             {}, &sent);
        log_refusal({.trace = trace,
                     .client = peer.ip,
                     .request = &request,
                     .key = head.key,
                     .status = error->status,
                     .bytes_out = sent});
        linger = true;
      }
      trace.end();
      break;
    }
    stream.expires_never();
    // A chunked trailer's fields were appended to the head's: they are never headers.
    erase_trailer_fields(request, head_fields);

    const bool keep_alive = request.keep_alive() && !server.draining();
    const bool usable = co_await handle_request(worker, *snapshot, stream, watch, request, facts,
                                                head, peer, keep_alive, trace);
    trace.end();
    if (!usable || !keep_alive) break;
  }
  error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  if (linger) co_await discard_until_close(stream);
  stream.close();
}

}  // namespace rolter
