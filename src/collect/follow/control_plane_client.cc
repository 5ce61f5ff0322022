#include "collect/follow/control_plane_client.h"

#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <variant>

#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

namespace http = beast::http;

template <typename Stream>
Task<tl::expected<ControlPlaneReply, std::string>> exchange_on(Stream& stream,
                                                               beast::flat_buffer& buffer,
                                                               ControlPlaneRequest& request,
                                                               size_t max_body_bytes) {
  auto [write_ec, written] = co_await http::async_write(stream, request, kNoThrow);
  if (write_ec) co_return tl::unexpected("sending: " + write_ec.message());
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_body_bytes);
  auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, kNoThrow);
  if (read_ec) co_return tl::unexpected("reading the answer: " + read_ec.message());
  http::response<http::string_body> response = parser.release();
  ControlPlaneReply reply;
  reply.status = response.result_int();
  reply.snapshot_version = std::string(response["x-rolter-snapshot-version"]);
  reply.body = std::move(response.body());
  co_return reply;
}

}  // namespace

ControlPlaneRequest control_plane_request(http::verb verb, const Endpoint& endpoint,
                                          std::string_view path_and_query,
                                          const NodeCredentials& node, uint64_t serving_version) {
  ControlPlaneRequest request{verb, endpoint.base_path + std::string(path_and_query), 11};
  request.set(http::field::host, endpoint.host_header);
  request.set(http::field::user_agent, "rolter-node/" + node.node_version);
  if (!node.node_token.empty()) {
    request.set(http::field::authorization, "Bearer " + node.node_token);
  }
  request.set("x-rolter-node-id", node.node_id);
  request.set("x-rolter-node-version", node.node_version);
  request.set("x-rolter-snapshot-version", std::to_string(serving_version));
  request.keep_alive(false);
  return request;
}

Task<tl::expected<ControlPlaneReply, std::string>> exchange_with_control_plane(
    const Endpoint& endpoint, asio::ssl::context& tls, ControlPlaneRequest request,
    ExchangeLimits limits) {
  auto [ec, connection] = co_await connect_upstream(endpoint, 0, tls, limits.connect_timeout);
  if (ec) co_return tl::unexpected("connecting: " + ec.message());
  connection->tcp().expires_after(limits.deadline);
  co_return co_await std::visit(
      [&](auto& stream) {
        return exchange_on(stream, connection->buffer, request, limits.max_body_bytes);
      },
      connection->stream);
}

std::string body_excerpt(std::string_view body, size_t max) {
  const size_t end = body.find_first_of("\r\n");
  std::string_view line = body.substr(0, end);
  if (line.size() > max) line = line.substr(0, max);
  return std::string(line);
}

}  // namespace rolter
