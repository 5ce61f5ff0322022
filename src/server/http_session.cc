#include "server/http_session.h"

#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <optional>

#include "proxy/forwarder.h"
#include "server/endpoints.h"
#include "server/server_state.h"
#include "server/worker.h"

namespace rolter {
namespace http = beast::http;

namespace {

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
  IdleMark(Worker& w, beast::tcp_stream& s) : worker(w), stream(&s) { worker.add_idle(stream); }
  ~IdleMark() { worker.remove_idle(stream); }
  Worker& worker;
  beast::tcp_stream* stream;
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

}  // namespace

Task<void> serve_connection(Worker& worker, beast::tcp_stream stream) {
  beast::flat_buffer buffer;
  RequestFacts facts;  // reused across the connection's requests: no allocation once warm
  auto& server = worker.server();
  for (;;) {
    if (server.draining()) break;
    http::request_parser<http::string_body> parser;
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
      auto [first_ec, first_bytes] = co_await stream.async_read_some(buffer.prepare(4096), kNoThrow);
      buffer.commit(first_bytes);
      ec = first_ec;
    }
    if (!ec) {
      // The whole head must follow within header_timeout_ms: a slow-loris client is cut here.
      stream.expires_after(std::chrono::milliseconds(limits.header_timeout_ms));
      auto [header_ec, n] = co_await http::async_read_header(stream, buffer, parser, kNoThrow);
      ec = header_ec;
    }
    if (ec) {
      if (auto error = read_error(ec, *snapshot)) {
        co_await write_error(stream, ErrorStyle::kOpenAi, *error, false);
      }
      break;
    }

    ActiveRequest active(server);
    snapshot = worker.snapshot();  // the newest snapshot for the request that just arrived
    if (auto length = parser.content_length()) {
      // Room for the inspector's padding, so the body is parsed where it lies.
      parser.get().body().reserve(*length + RequestInspector::kPadding);
    }
    stream.expires_after(kBodyTimeout);
    if (beast::iequals(parser.get()[http::field::expect], "100-continue")) {
      // Clients such as curl wait for this before sending a body over 1 KiB.
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      auto [continue_ec, continue_bytes] =
          co_await asio::async_write(stream, asio::buffer(kContinue), kNoThrow);
      if (continue_ec) break;
    }
    auto [body_ec, body_bytes] = co_await http::async_read(stream, buffer, parser, kNoThrow);
    if (body_ec) {
      if (auto error = read_error(body_ec, *snapshot)) {
        co_await write_error(stream, ErrorStyle::kOpenAi, *error, false);
      }
      break;
    }
    stream.expires_never();

    auto& request = parser.get();
    const bool keep_alive = request.keep_alive() && !server.draining();
    const bool usable =
        co_await handle_request(worker, *snapshot, stream, buffer, request, facts, keep_alive);
    if (!usable || !keep_alive) break;
  }
  error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  stream.close();
}

}  // namespace rolter
