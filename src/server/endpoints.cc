#include "server/endpoints.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>
#include <optional>

#include "common/json_escape.h"
#include "common/percent_decode.h"
#include "http/tokens.h"
#include "inspect/request_inspector.h"
#include "observe/metrics.h"
#include "proxy/decision_client.h"
#include "proxy/engine_tokenizer.h"
#include "proxy/forwarder.h"
#include "proxy/policy_session_key.h"
#include "proxy/request_log.h"
#include "proxy/tenancy.h"
#include "server/control_handler.h"
#include "server/refusal_log.h"
#include "server/server_state.h"
#include "server/worker.h"
#include "snapshot/snapshot_fleet_view.h"

namespace rolter {
namespace http = beast::http;

struct EndpointSpec {
  std::string_view path;  // exact, or a prefix when it ends in '/'
  http::verb method;
  std::optional<ApiKind> kind;  // inference endpoints
  bool needs_key = true;        // on a gateway with [[keys]]
};

namespace {

constexpr EndpointSpec kEndpoints[] = {
    {"/v1/chat/completions", http::verb::post, ApiKind::kChatCompletions},
    {"/v1/completions", http::verb::post, ApiKind::kCompletions},
    {"/v1/embeddings", http::verb::post, ApiKind::kEmbeddings},
    {"/v1/responses", http::verb::post, ApiKind::kResponses},
    {"/v1/messages", http::verb::post, ApiKind::kMessages},
    {"/v1/models", http::verb::get, std::nullopt},
    {"/v1/models/", http::verb::get, std::nullopt},  // GET /v1/models/{id}
    {"/healthz", http::verb::get, std::nullopt, /*needs_key=*/false},
    {"/readyz", http::verb::get, std::nullopt, /*needs_key=*/false},
    {"/metrics", http::verb::get, std::nullopt},
};

constexpr std::string_view kModelsPrefix = "/v1/models/";

// The control plane's paths (any method; it checks its own tokens).
constexpr EndpointSpec kControlEndpoint = {"/api/", http::verb::unknown, std::nullopt,
                                           /*needs_key=*/false};
// SPEC §10: a snapshot long poll is held this long at most, then answered 304.
constexpr auto kLongPoll = std::chrono::seconds(30);

std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

// The field every answer of the gateway's own carries (SPEC §17).
constexpr std::string_view kRequestIdField = "x-request-id";

const EndpointSpec* find_endpoint(std::string_view path) {
  for (const auto& e : kEndpoints) {
    if (e.path == path) return &e;
  }
  if (path.size() > kModelsPrefix.size() && path.starts_with(kModelsPrefix)) {
    for (const auto& e : kEndpoints) {
      if (e.path == kModelsPrefix) return &e;
    }
  }
  return nullptr;
}

// The presented key: `Authorization: Bearer <key>` (OpenAI) or `x-api-key` (Anthropic).
std::string_view presented_key(const ClientRequest& request) {
  const std::string_view bearer = bearer_token(request[http::field::authorization]);
  return bearer.empty() ? std::string_view(request["x-api-key"]) : bearer;
}

void append_model(std::string& body, std::string_view id) {
  body.append(R"({"id":)");
  append_json_string(body, id);
  body.append(R"(,"object":"model","created":0,"owned_by":"rolter"})");
}

// Whether `key` (null: an open gateway) may use the model `id`: the address is allowed, and so is
// the provider of at least one of its targets.
bool key_may_use(const Snapshot& snapshot, const ApiKey* key, std::string_view id) {
  const auto route = snapshot.resolve(id);
  if (!route) return false;
  if (key == nullptr) return true;
  if (!key->allows_address(id)) return false;
  const auto& candidates = route->pool->candidates;
  return std::any_of(candidates.begin(), candidates.end(),
                     [&](const Candidate& c) { return key->allows_provider(c.provider->name); });
}

std::string models_body(const Snapshot& snapshot, const ApiKey* key) {
  std::string body = R"({"object":"list","data":[)";
  bool first = true;
  for (const auto& id : snapshot.model_ids()) {
    if (!key_may_use(snapshot, key, id)) continue;
    if (!first) body.push_back(',');
    first = false;
    append_model(body, id);
  }
  body.append("]}");
  return body;
}

// What to answer. Deciding is synchronous; only the answer is written asynchronously. (Keeping
// temporaries out of co_await expressions also sidesteps GCC 12 coroutine temporary bugs.)
struct Dispatch {
  enum class Kind { kJson, kError, kForward } kind = Kind::kError;
  http::status status = http::status::ok;              // kJson
  std::string json;                                    // kJson
  std::string_view content_type = "application/json";  // kJson
  ApiError error;                                      // kError
  ErrorStyle style = ErrorStyle::kOpenAi;
  ResolvedRoute route;          // kForward
  RouteContext ctx;             // kForward
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

ApiError model_not_found(std::string_view model) {
  return {.status = 404,
          .type = "invalid_request_error",
          .message = "The model '" + std::string(model) + "' does not exist",
          .code = "model_not_found",
          .param = "model"};
}

// GET /v1/models/{id}: the model, when it resolves and the key may use it.
Dispatch model_answer(const Snapshot& snapshot, std::string_view path, const ApiKey* key) {
  const std::string id = percent_decode(path.substr(kModelsPrefix.size()));
  if (!key_may_use(snapshot, key, id)) {
    return Dispatch::fail(ErrorStyle::kOpenAi, model_not_found(id));
  }
  std::string body;
  append_model(body, id);
  return Dispatch::json_answer(http::status::ok, std::move(body));
}

Dispatch dispatch(Worker& worker, const Snapshot& snapshot,
                  ClientRequest& request, RequestFacts& facts,
                  const HeadVerdict& head) {
  const std::string_view path = path_of(request.target());
  const EndpointSpec* endpoint = head.endpoint;
  const ErrorStyle style = head.style;
  const ApiKey* key = head.key;
  if (endpoint->path == "/healthz") {
    return Dispatch::json_answer(http::status::ok, R"({"status":"ok"})");
  }
  if (endpoint->path == "/readyz") {
    const bool ready = worker.server().ready() && !worker.server().draining();
    return ready ? Dispatch::json_answer(http::status::ok, R"({"status":"ready"})")
                 : Dispatch::json_answer(http::status::service_unavailable,
                                         R"({"status":"not ready"})");
  }
  if (endpoint->path == "/metrics") {
    auto& state = worker.server();
    if (state.metrics == nullptr || state.tracker == nullptr) {
      return Dispatch::fail(style, {.status = 404, .message = "metrics are not enabled"});
    }
    const SnapshotFleetView fleet(*state.tracker, snapshot, std::chrono::steady_clock::now());
    Dispatch d = Dispatch::json_answer(http::status::ok, state.metrics->render(fleet));
    d.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return d;
  }
  if (endpoint->path == kModelsPrefix) return model_answer(snapshot, path, key);
  if (endpoint->path == "/v1/models") {
    return Dispatch::json_answer(http::status::ok, models_body(snapshot, key));
  }

  auto& body = request.body();
  InspectHeaders headers;
  headers.session_id = request["x-session-id"];
  if (auto it = request.find("x-rolter-vllm-token-ids"); it != request.end()) {
    headers.vllm_token_ids = it->value();
  }
  auto inspected = worker.inspector().inspect(body.data(), body.size(), body.capacity(),
                                              *endpoint->kind, headers, facts);
  if (!inspected) {
    const bool internal = inspected.error().code == InspectErrorCode::kInternal;
    return Dispatch::fail(style, {.status = internal ? 500u : 400u,
                                  .type = internal ? "api_error" : "invalid_request_error",
                                  .message = inspected.error().message,
                                  .code = inspect_error_code_name(inspected.error().code)});
  }

  auto route = snapshot.resolve(facts.model);
  if (!route) return Dispatch::fail(style, model_not_found(facts.model));
  if (key != nullptr) {
    if (!key->allows_address(facts.model)) {
      return Dispatch::fail(
          style, {.status = 403,
                  .type = "permission_error",
                  .message = "key '" + key->name + "' may not use model '" + facts.model + "'"});
    }
    const auto& candidates = route->pool->candidates;
    if (std::none_of(candidates.begin(), candidates.end(),
                     [&](const Candidate& c) { return key->allows_provider(c.provider->name); })) {
      return Dispatch::fail(
          style,
          {.status = 403,
           .type = "permission_error",
           .message = "key '" + key->name + "' may not use any target of '" + facts.model + "'"});
    }
  }
  Dispatch d;
  d.kind = Dispatch::Kind::kForward;
  d.key = key;
  d.style = style;
  d.endpoint = endpoint;
  d.route = *route;
  d.ctx = build_route_context(facts);
  // A passthrough group member serves the requested model under its own name: on vLLM that is a
  // LoRA adapter (SPEC §6.12). A pinned provider or a fixed upstream model names no adapter.
  if (route->pool->passthrough) d.ctx.adapter = route->requested_model;
  return d;
}

// `x-rolter-explain: 1` (or "true") asks for the x-rolter-decision response header.
bool wants_explain(const ClientRequest& request) {
  auto it = request.find("x-rolter-explain");
  if (it == request.end()) return false;
  const std::string_view v = it->value();
  return v == "1" || beast::iequals(v, "true");
}

}  // namespace

HeadVerdict check_head(Worker& worker, const Snapshot& snapshot,
                       const ClientRequest& request, const ClientPeer& peer) {
  const std::string_view path = path_of(request.target());
  HeadVerdict verdict;
  verdict.style = path == "/v1/messages" ? ErrorStyle::kAnthropic : ErrorStyle::kOpenAi;
  auto fail = [&](ApiError error) {
    verdict.error = std::move(error);
    return verdict;
  };
  if (ControlHandler* control = worker.server().control;
      control != nullptr && peer.listener == Listener::kMain && control->serves(path)) {
    verdict.endpoint = &kControlEndpoint;
    return verdict;
  }
  const EndpointSpec* endpoint = find_endpoint(path);
  const bool separate_metrics = !snapshot.config().server.metrics_listen.empty();
  if (peer.listener == Listener::kMetrics) {
    // The metrics listener serves the operator's probes and scrapes, nothing else.
    if (endpoint == nullptr || endpoint->kind || endpoint->path.starts_with("/v1/")) {
      return fail(
          {.status = 404, .message = "this listener serves /metrics, /healthz and /readyz"});
    }
  } else if (endpoint != nullptr && endpoint->path == "/metrics" && separate_metrics) {
    return fail({.status = 404, .message = "/metrics is served on server.metrics_listen"});
  }
  if (endpoint == nullptr) {
    return fail({.status = 404, .message = "no such endpoint: " + std::string(path)});
  }
  verdict.endpoint = endpoint;
  if (request.method() != endpoint->method) {
    return fail({.status = 405,
                 .message = std::string(path) + " accepts " +
                            std::string(http::to_string(endpoint->method)) + " only"});
  }
  if (snapshot.open() || !endpoint->needs_key || peer.listener == Listener::kMetrics) {
    return verdict;
  }
  const std::string_view presented = presented_key(request);
  const ApiKey* key = presented.empty() ? nullptr : snapshot.authenticate(presented);
  if (key == nullptr) {
    const std::string_view reason = presented.empty() ? "missing" : "invalid";
    if (auto* metrics = worker.server().metrics) metrics->auth_failure(reason);
    log_auth_failure(reason, path, peer.ip);
    if (presented.empty()) {
      return fail(
          {.status = 401,
           .message = "missing API key: send 'Authorization: Bearer <key>' or 'x-api-key'"});
    }
    return fail({.status = 401, .message = "invalid API key", .code = "invalid_api_key"});
  }
  verdict.key = key;
  return verdict;
}

namespace {

// The coroutines below run only for the requests that need them, each with its own frame: what
// they hold while they wait stays off handle_request's frame, which every request pays for.

// A JSON answer of the gateway's own (models, health, metrics). (The trace goes by reference:
// what a co_await's arguments hold stays in the caller's frame, which every request pays for.)
Task<bool> write_json(TimedStream& stream, const Dispatch& d, bool keep_alive,
                      const RequestTrace& trace) {
  http::response<http::string_body> res{d.status, 11};
  res.set(http::field::content_type, d.content_type);
  res.set(kRequestIdField, trace.request_id());
  res.body() = d.json;
  res.keep_alive(keep_alive);
  res.prepare_payload();
  auto [ec, n] = co_await http::async_write(stream, res, kNoThrow);
  co_return !ec && keep_alive;
}

// An error of the gateway's own, decided before any upstream was asked, and its log line.
Task<bool> write_dispatch_error(TimedStream& stream, const Dispatch& d, bool keep_alive,
                                const RequestTrace& trace, const ClientPeer& peer,
                                const ClientRequest& request, const HeadVerdict& head,
                                const RequestFacts& facts) {
  uint64_t sent = 0;
  const error_code ec = co_await write_error(stream, d.style, d.error, trace.request_id(),
                                             keep_alive, 0, {}, {}, &sent);
  log_refusal({.trace = trace,
               .client = peer.ip,
               .request = &request,
               .key = head.key,
               .model = facts.model,
               .status = d.error.status,
               .bytes_out = sent});
  co_return !ec && keep_alive;
}

// SPEC §7: a policy route reads its own session key chain and may ask its decision service which
// model fits, before the pick; a session's verdict is reused for 60 s. `policy_key` and `verdict`
// are the caller's, for the whole request; d.ctx views them.
Task<void> attach_policy_inputs(Worker& worker, Dispatch& d,
                                const ClientRequest& request,
                                std::string& policy_key, std::optional<DecisionVerdict>& verdict) {
  const PolicyRoute& policy = *d.route.pool->policy;
  auto header = [&](std::string_view name) { return std::string_view(request[name]); };
  policy_key = policy_session_key(policy, path_of(request.target()), header, request.body());
  d.ctx.policy_session_key = policy_key;
  if (!wants_decision(*d.endpoint->kind, policy)) co_return;
  // Named locals, not temporaries, in the co_await (see Dispatch on GCC 12).
  const std::string_view route_name = d.route.pool->name;
  const std::string_view body = request.body();
  verdict = worker.decision_cache().find(route_name, policy_key);
  if (!verdict) {
    verdict = co_await ask_decision_service(*policy.decision, route_name, body, worker.tls(),
                                            kDecisionTimeout);
    if (verdict) worker.decision_cache().put(route_name, policy_key, *verdict);
  }
  if (verdict) d.ctx.decision = &*verdict;
}

// SPEC §6.15: a request without token ids, on a route whose strategy reads them, may get them
// from an engine (tokenize = "engine"). Best effort: on any failure it goes on without.
// `tokens` is the caller's, for the whole request; d.ctx views it.
Task<void> attach_engine_tokens(Worker& worker, const Snapshot& snapshot, Dispatch& d,
                                std::string_view body, std::vector<uint32_t>& tokens) {
  const EngineTokenizeRequest tokenize{
      .snapshot = &snapshot,
      .route = &d.route,
      .ctx = &d.ctx,
      .kind = *d.endpoint->kind,
      .body = body,
      .key = d.key,
      .clock = &default_clock(),
      .tls = worker.tls(),
  };
  std::optional<std::vector<uint32_t>> ids = co_await engine_token_ids(tokenize);
  if (ids) {
    tokens = std::move(*ids);
    d.ctx.token_ids = std::span<const uint32_t>(tokens);
  }
}

// A request for the control plane in this process: answered by it, with a long poll waiting on a
// timer that the control plane cancels when a new version is published.
Task<bool> serve_control(Worker& worker, TimedStream& stream,
                         const ClientRequest& request, bool keep_alive,
                         RequestTrace& trace) {
  ControlHandler& control = *worker.server().control;
  const std::string method(request.method_string());
  ControlRequest call{
      .method = method,
      .target = request.target(),
      .authorization = request[http::field::authorization],
      .header = [&](std::string_view name) { return std::string_view(request[name]); },
      .body = request.body(),
  };
  ControlResponse answer = control.handle(call);
  if (answer.wait_after) {
    auto timer = std::make_shared<asio::steady_timer>(worker.io(), kLongPoll);
    auto executor = worker.io().get_executor();
    const uint64_t ticket = control.on_change(*answer.wait_after, [timer, executor] {
      asio::post(executor, [timer] { timer->cancel(); });
    });
    co_await timer->async_wait(kNoThrow);
    control.forget(ticket);
    call.after_wait = true;
    answer = control.handle(call);
  }
  http::response<http::string_body> res{static_cast<http::status>(answer.status), 11};
  if (answer.status != 304 && answer.status != 204) {
    res.set(http::field::content_type, answer.content_type);
    res.body() = std::move(answer.body);
  }
  res.set(http::field::cache_control, "no-store");
  for (const auto& [name, value] : answer.headers) res.set(name, value);
  res.set(kRequestIdField, trace.request_id());
  trace.set_status(answer.status);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  auto [ec, n] = co_await http::async_write(stream, res, kNoThrow);
  co_return !ec && keep_alive;
}

// A request whose key has limits, or whose usage is recorded (SPEC §15): admitted, forwarded,
// settled and recorded. Its own frame keeps what it holds off handle_request's.
Task<bool> forward_with_tenancy(Worker& worker, const Snapshot& snapshot, TimedStream& stream,
                                ClientWatch& watch, const ForwardRequest& forward) {
  // The request's usage hour: when its head arrived (the trace read the wall clock then).
  const int64_t started_ms =
      forward.trace != nullptr ? static_cast<int64_t>(forward.trace->began_unix_nanos() / 1'000'000)
                               : std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
  const TenancyScope scope = worker.tenancy().scope(*worker.server().tenancy, snapshot, forward.key,
                                                    worker.server().metrics, started_ms);
  const ForwardResult result =
      co_await forward_accounted(worker.forwarder(), stream, watch, forward, scope);
  if (forward.trace != nullptr) forward.trace->set_status(result.status);
  co_return result.client_usable;
}

}  // namespace

std::string_view endpoint_route(const EndpointSpec* endpoint) {
  if (endpoint == nullptr || endpoint == &kControlEndpoint) return {};
  if (endpoint->path == kModelsPrefix) return "/v1/models/{id}";
  return endpoint->path;
}

Task<bool> handle_request(Worker& worker, const Snapshot& snapshot, TimedStream& stream,
                          ClientWatch& watch, ClientRequest& request, RequestFacts& facts,
                          const HeadVerdict& head, const ClientPeer& peer, bool keep_alive,
                          RequestTrace& trace) {
  if (head.endpoint == &kControlEndpoint) {
    co_return co_await serve_control(worker, stream, request, keep_alive, trace);
  }
  Dispatch d = dispatch(worker, snapshot, request, facts, head);
  switch (d.kind) {
    case Dispatch::Kind::kJson:
      trace.set_status(static_cast<unsigned>(d.status));
      co_return co_await write_json(stream, d, keep_alive, trace);
    case Dispatch::Kind::kError:
      trace.set_status(d.error.status);
      co_return co_await write_dispatch_error(stream, d, keep_alive, trace, peer, request, head,
                                              facts);
    case Dispatch::Kind::kForward:
      break;
  }
  // Policy routes (SPEC §7) get their session key and decision-service verdict; other routes skip
  // this on one pointer test. Both values are owned here, for the whole request; d.ctx views them.
  std::string policy_key;
  std::optional<DecisionVerdict> verdict;
  if (d.route.pool->policy) co_await attach_policy_inputs(worker, d, request, policy_key, verdict);
  // Token ids from an engine (SPEC §6.15), checked here first so that other requests do not even
  // start the coroutine.
  std::vector<uint32_t> engine_tokens;  // what d.ctx.token_ids views, for the whole request
  if (wants_engine_tokens(*d.endpoint->kind, d.ctx, *d.route.pool)) {
    const std::string_view body = request.body();  // a named local in the co_await (GCC 12)
    co_await attach_engine_tokens(worker, snapshot, d, body, engine_tokens);
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
      .kind = *d.endpoint->kind,
      .client_ip = peer.ip,
      .trusted_peer = snapshot.trusted_proxy(peer.ip),
      .client_tls = peer.tls,
      .client_version = request.version(),
      .explain = wants_explain(request),
      .trace = &trace,
  };
  if (WorkerTenancy::applies(worker.server().tenancy, d.key)) {
    co_return co_await forward_with_tenancy(worker, snapshot, stream, watch, forward);
  }
  const ForwardResult result = co_await worker.forwarder().forward(stream, watch, forward);
  trace.set_status(result.status);
  co_return result.client_usable;
}

}  // namespace rolter
