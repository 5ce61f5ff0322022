#include "server/endpoints.h"

#include <boost/beast/http/write.hpp>

#include <algorithm>
#include <optional>

#include "common/json_escape.h"
#include "inspect/request_inspector.h"
#include "observe/metrics.h"
#include "proxy/forwarder.h"
#include "server/server_state.h"
#include "server/worker.h"

namespace rolter {
namespace http = beast::http;

namespace {

struct EndpointSpec {
  std::string_view path;
  http::verb method;
  std::optional<ApiKind> kind;  // inference endpoints
};

constexpr EndpointSpec kEndpoints[] = {
    {"/v1/chat/completions", http::verb::post, ApiKind::chat_completions},
    {"/v1/completions", http::verb::post, ApiKind::completions},
    {"/v1/embeddings", http::verb::post, ApiKind::embeddings},
    {"/v1/responses", http::verb::post, ApiKind::responses},
    {"/v1/messages", http::verb::post, ApiKind::messages},
    {"/v1/models", http::verb::get, std::nullopt},
    {"/healthz", http::verb::get, std::nullopt},
    {"/readyz", http::verb::get, std::nullopt},
    {"/metrics", http::verb::get, std::nullopt},
};

std::string_view path_of(std::string_view target) {
  return target.substr(0, target.find('?'));
}

// The presented key: `Authorization: Bearer <key>` (OpenAI) or `x-api-key` (Anthropic).
std::string_view presented_key(const http::request<http::string_body>& request) {
  std::string_view auth = request[http::field::authorization];
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.size() > kBearer.size() && beast::iequals(auth.substr(0, kBearer.size()), kBearer)) {
    return auth.substr(kBearer.size());
  }
  return request["x-api-key"];
}

std::string models_body(const Snapshot& snapshot, const ApiKey* key) {
  std::string body = R"({"object":"list","data":[)";
  bool first = true;
  for (const auto& id : snapshot.model_ids()) {
    if (key != nullptr && !key->allows_address(id)) continue;
    if (!first) body.push_back(',');
    first = false;
    body.append(R"({"id":)");
    append_json_string(body, id);
    body.append(R"(,"object":"model","created":0,"owned_by":"rolter"})");
  }
  body.append("]}");
  return body;
}

// What to answer. Deciding is synchronous; only the answer is written asynchronously. (Keeping
// temporaries out of co_await expressions also sidesteps GCC 12 coroutine temporary bugs.)
struct Dispatch {
  enum class Kind { kJson, kError, kForward } kind = Kind::kError;
  http::status status = http::status::ok;  // kJson
  std::string json;                        // kJson
  std::string_view content_type = "application/json";  // kJson
  ApiError error;                          // kError
  ErrorStyle style = ErrorStyle::kOpenAi;
  ResolvedRoute route;  // kForward
  RouteContext ctx;     // kForward
  const ApiKey* key = nullptr;  // kForward: the authenticated key, null on an open gateway
  const EndpointSpec* endpoint = nullptr;

  static Dispatch fail(ErrorStyle style, ApiError error) {
    Dispatch d;
    d.kind = Kind::kError;
    d.style = style;
    d.error = std::move(error);
    return d;
  }
  static Dispatch json_answer(http::status status, std::string body) {
    Dispatch d;
    d.kind = Kind::kJson;
    d.status = status;
    d.json = std::move(body);
    return d;
  }
};

Dispatch dispatch(Worker& worker, const Snapshot& snapshot,
                  http::request<http::string_body>& request, RequestFacts& facts) {
  const std::string_view path = path_of(request.target());
  const EndpointSpec* endpoint = nullptr;
  for (const auto& e : kEndpoints) {
    if (e.path == path) endpoint = &e;
  }
  const ErrorStyle style =
      path == "/v1/messages" ? ErrorStyle::kAnthropic : ErrorStyle::kOpenAi;
  if (endpoint == nullptr) {
    return Dispatch::fail(style, {.status = 404, .message = "no such endpoint: " + std::string(path)});
  }
  if (request.method() != endpoint->method) {
    return Dispatch::fail(style, {.status = 405,
                                  .message = std::string(path) + " accepts " +
                                             std::string(http::to_string(endpoint->method)) +
                                             " only"});
  }
  if (path == "/healthz") return Dispatch::json_answer(http::status::ok, R"({"status":"ok"})");
  if (path == "/readyz") {
    const bool ready = worker.server().ready() && !worker.server().draining();
    return ready ? Dispatch::json_answer(http::status::ok, R"({"status":"ready"})")
                 : Dispatch::json_answer(http::status::service_unavailable,
                                         R"({"status":"not ready"})");
  }

  const ApiKey* key = nullptr;
  if (path == "/metrics") {
    auto& state = worker.server();
    if (state.metrics == nullptr || state.tracker == nullptr) {
      return Dispatch::fail(style, {.status = 404, .message = "metrics are not enabled"});
    }
    Dispatch d = Dispatch::json_answer(http::status::ok, state.metrics->render(*state.tracker));
    d.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return d;
  }

  if (!snapshot.open()) {
    const std::string_view presented = presented_key(request);
    if (presented.empty()) {
      return Dispatch::fail(style, {.status = 401,
                                    .message = "missing API key: send 'Authorization: Bearer "
                                               "<key>' or 'x-api-key'"});
    }
    key = snapshot.authenticate(presented);
    if (key == nullptr) {
      return Dispatch::fail(style, {.status = 401, .message = "invalid API key",
                                    .code = "invalid_api_key"});
    }
  }

  if (path == "/v1/models") return Dispatch::json_answer(http::status::ok, models_body(snapshot, key));

  auto& body = request.body();
  InspectHeaders headers;
  headers.session_id = request["x-session-id"];
  if (auto it = request.find("x-rolter-vllm-token-ids"); it != request.end()) {
    headers.vllm_token_ids = it->value();
  }
  auto inspected = worker.inspector().inspect(body.data(), body.size(), body.capacity(),
                                              *endpoint->kind, headers, facts);
  if (!inspected) {
    const bool internal = inspected.error().code == InspectErrorCode::internal;
    return Dispatch::fail(style, {.status = internal ? 500u : 400u,
                                  .type = internal ? "api_error" : "invalid_request_error",
                                  .message = inspected.error().message,
                                  .code = inspect_error_code_name(inspected.error().code)});
  }

  auto route = snapshot.resolve(facts.model);
  if (!route) {
    return Dispatch::fail(style, {.status = 404,
                                  .type = "invalid_request_error",
                                  .message = "The model '" + facts.model + "' does not exist",
                                  .code = "model_not_found",
                                  .param = "model"});
  }
  if (key != nullptr) {
    if (!key->allows_address(facts.model)) {
      return Dispatch::fail(style, {.status = 403,
                                    .type = "permission_error",
                                    .message = "key '" + key->name + "' may not use model '" +
                                               facts.model + "'"});
    }
    const auto& candidates = route->pool->candidates;
    if (std::none_of(candidates.begin(), candidates.end(), [&](const Candidate& c) {
          return key->allows_provider(c.provider->name);
        })) {
      return Dispatch::fail(style, {.status = 403,
                                    .type = "permission_error",
                                    .message = "key '" + key->name + "' may not use any target of '" +
                                               facts.model + "'"});
    }
  }
  Dispatch d;
  d.kind = Dispatch::Kind::kForward;
  d.key = key;
  d.style = style;
  d.endpoint = endpoint;
  d.route = *route;
  d.ctx = build_route_context(facts);
  if (!route->requested_model.empty()) d.ctx.adapter = route->requested_model;
  return d;
}

}  // namespace

Task<bool> handle_request(Worker& worker, const Snapshot& snapshot, beast::tcp_stream& stream,
                          beast::flat_buffer& buffer,
                          http::request<http::string_body>& request, RequestFacts& facts,
                          bool keep_alive) {
  const Dispatch d = dispatch(worker, snapshot, request, facts);
  switch (d.kind) {
    case Dispatch::Kind::kJson: {
      http::response<http::string_body> res{d.status, 11};
      res.set(http::field::content_type, d.content_type);
      res.body() = d.json;
      res.keep_alive(keep_alive);
      res.prepare_payload();
      auto [ec, n] = co_await http::async_write(stream, res, kNoThrow);
      co_return !ec && keep_alive;
    }
    case Dispatch::Kind::kError: {
      const error_code ec = co_await write_error(stream, d.style, d.error, keep_alive);
      co_return !ec && keep_alive;
    }
    case Dispatch::Kind::kForward:
      break;
  }
  const ForwardRequest forward{
      .snapshot = &snapshot,
      .route = d.route,
      .ctx = &d.ctx,
      .request = &request,
      .body = request.body(),
      .facts = &facts,
      .style = d.style,
      .client_keep_alive = keep_alive,
      .key = d.key,
  };
  const ForwardResult result = co_await worker.forwarder().forward(stream, buffer, forward);
  co_return result.client_usable;
}

}  // namespace rolter
