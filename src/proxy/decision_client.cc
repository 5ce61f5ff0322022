#include "proxy/decision_client.h"

#include <spdlog/spdlog.h>

#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <variant>

#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

namespace http = beast::http;
using Outcome = Metrics::DecisionOutcome;

// connect_upstream() labels a connection with its instance's id for the connection pool; this
// connection is never pooled, and a decision service has no InstanceState.
constexpr uint32_t kNoInstance = 0;

template <typename Stream>
Task<DecisionCall> exchange(Stream& stream, UpstreamConnection& connection,
                            const Provider& provider, std::string body) {
  const Endpoint& endpoint = provider.endpoints.front();
  http::request<http::string_body> request{http::verb::post, endpoint.base_path + "/v1/systemone",
                                           11};
  request.set(http::field::host, endpoint.host_header);
  request.set(http::field::user_agent, "rolter-decision");
  request.set(http::field::content_type, "application/json");
  request.set(http::field::accept, "application/json");
  if (!provider.api_key.empty()) {
    request.set(http::field::authorization, "Bearer " + provider.api_key);
  }
  request.keep_alive(false);
  request.body() = std::move(body);
  request.prepare_payload();

  DecisionCall result;
  auto failed = [&](const error_code& ec, std::string_view step) {
    result.outcome = ec == beast::error::timeout ? Outcome::kTimeout : Outcome::kError;
    result.error = std::string(step) + ": " + ec.message();
    return result;
  };
  auto [write_ec, written] = co_await http::async_write(stream, request, kNoThrow);
  if (write_ec) co_return failed(write_ec, "sending the request");
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxDecisionReplyBytes);
  auto [read_ec, read] = co_await http::async_read(stream, connection.buffer, parser, kNoThrow);
  if (read_ec) co_return failed(read_ec, "reading the response");
  const unsigned status = parser.get().result_int();
  if (status < 200 || status > 299) {
    result.outcome = Outcome::kStatus;
    result.error = "status " + std::to_string(status);
    co_return result;
  }
  auto verdict = read_decision_reply(parser.get().body());
  if (!verdict) {
    result.outcome = Outcome::kInvalid;
    result.error = std::move(verdict.error());
    co_return result;
  }
  result.outcome = Outcome::kOk;
  result.verdict = std::move(*verdict);
  co_return result;
}

}  // namespace

bool wants_decision(ApiKind kind, const PolicyRoute& policy) {
  return policy.decision.has_value() && kind != ApiKind::embeddings;
}

Task<DecisionCall> call_decision_service(const Provider& provider, std::string body,
                                         asio::ssl::context& tls,
                                         std::chrono::milliseconds timeout) {
  using std::chrono::steady_clock;
  DecisionCall result;
  if (provider.endpoints.empty()) {
    result.error = "the provider has no instance";
    co_return result;
  }
  const auto deadline = steady_clock::now() + timeout;
  // Not a structured binding: a lambda below captures the connection, which clang before 16
  // does not allow of a binding (and the fuzz targets build with clang).
  auto connected = co_await connect_upstream(provider.endpoints.front(), kNoInstance, tls, timeout);
  const error_code ec = connected.first;
  if (ec) {
    result.outcome = ec == beast::error::timeout ? Outcome::kTimeout : Outcome::kError;
    result.error = "connecting: " + ec.message();
    co_return result;
  }
  if (steady_clock::now() >= deadline) {
    result.outcome = Outcome::kTimeout;
    result.error = "connecting: the timeout passed";
    co_return result;
  }
  UpstreamConnection& connection = *connected.second;
  connection.tcp().expires_at(deadline);
  auto run = [&](auto& stream) { return exchange(stream, connection, provider, std::move(body)); };
  result = co_await std::visit(run, connection.stream);
  beast::error_code ignored;
  connection.tcp().socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  connection.tcp().close();
  co_return result;
}

Task<std::optional<DecisionVerdict>> ask_decision_service(const PolicyRoute::Decision& decision,
                                                          std::string_view route,
                                                          std::string_view client_body,
                                                          asio::ssl::context& tls,
                                                          std::chrono::milliseconds timeout) {
  using std::chrono::steady_clock;
  const auto started = steady_clock::now();
  std::string body = decision_request_body(client_body, decision);
  DecisionCall call =
      co_await call_decision_service(*decision.provider, std::move(body), tls, timeout);
  const double seconds = std::chrono::duration<double>(steady_clock::now() - started).count();
  Metrics::observe_decision(decision.instruments, call.outcome, seconds);
  if (call.outcome != Outcome::kOk) {
    spdlog::debug("decision service '{}' for route '{}': {}; routing without a vote",
                  decision.provider->name, route, call.error);
    co_return std::nullopt;
  }
  if (call.verdict) keep_route_models(*call.verdict, decision);
  co_return std::move(call.verdict);
}

}  // namespace rolter
