#include "upstream/one_shot.h"

#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <variant>

#include "http/upstream_path.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

namespace http = beast::http;
using std::chrono::steady_clock;

constexpr auto kNothing = [] {};

OneShotError failure(std::string_view step, const error_code& ec) {
  return OneShotError{.timed_out = ec == beast::error::timeout,
                      .refused = ec == asio::error::connection_refused,
                      .message = std::string(step) + ": " + ec.message()};
}

template <typename Stream>
Task<OneShotResult> exchange(Stream& stream, beast::flat_buffer& buffer, OneShotRequest& request,
                             size_t max_body_bytes) {
  auto [write_ec, written] = co_await http::async_write(stream, request, kNoThrow);
  if (write_ec) co_return tl::unexpected(failure("sending the request", write_ec));
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_body_bytes);
  auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, kNoThrow);
  if (read_ec) co_return tl::unexpected(failure("reading the response", read_ec));
  co_return parser.release();
}

}  // namespace

OneShotRequest one_shot_request(http::verb verb, const Endpoint& endpoint, std::string_view path,
                                std::string_view user_agent) {
  OneShotRequest request{verb, upstream_path(endpoint.base_path, path), 11};
  request.set(http::field::host, endpoint.host_header);
  request.set(http::field::user_agent, user_agent);
  request.keep_alive(false);
  return request;
}

Task<OneShotResult> one_shot(const Endpoint& endpoint, uint32_t instance_id,
                             ClientTls tls, OneShotRequest request, OneShotLimits limits,
                             FunctionRef<void()> connected) {
  const auto deadline = steady_clock::now() + limits.timeout;
  const auto connect_timeout = limits.connect_timeout.count() > 0
                                   ? std::min(limits.connect_timeout, limits.timeout)
                                   : limits.timeout;
  // Not a structured binding: the lambda below names the connection, and Clang before 16 cannot
  // capture a binding (scripts/check-thread-safety and the fuzz targets build with Clang).
  auto connect = co_await connect_upstream(endpoint, instance_id, tls, connect_timeout);
  if (connect.first) co_return tl::unexpected(failure("connecting", connect.first));
  UpstreamConnection& connection = *connect.second;
  if (steady_clock::now() >= deadline) {
    co_return tl::unexpected(failure("connecting", beast::error::timeout));
  }
  connection.tcp().expires_at(deadline);
  request.prepare_payload();
  connected();
  OneShotResult result = co_await std::visit(
      [&](auto& stream) {
        return exchange(stream, connection.buffer, request, limits.max_body_bytes);
      },
      connection.stream);
  beast::error_code ignored;
  connection.tcp().socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  connection.tcp().close();
  co_return result;
}

Task<OneShotResult> one_shot(const Endpoint& endpoint, uint32_t instance_id,
                             ClientTls tls, OneShotRequest request,
                             OneShotLimits limits) {
  return one_shot(endpoint, instance_id, tls, std::move(request), limits, kNothing);
}

std::string status_text(const OneShotResponse& response) {
  return "status " + std::to_string(response.result_int());
}

}  // namespace rolter
