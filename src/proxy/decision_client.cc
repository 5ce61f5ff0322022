#include "proxy/decision_client.h"

#include <spdlog/spdlog.h>

#include "upstream/one_shot.h"

namespace rolter {
namespace {

namespace http = beast::http;
using Outcome = Metrics::DecisionOutcome;

// one_shot() labels a connection with its instance's id; a decision service has no InstanceState.
constexpr uint32_t kNoInstance = 0;

}  // namespace

bool wants_decision(ApiKind kind, const PolicyRoute& policy) {
  return policy.decision.has_value() && kind != ApiKind::kEmbeddings;
}

Task<DecisionCall> call_decision_service(const Provider& provider, std::string body,
                                         ClientTls tls,
                                         std::chrono::milliseconds timeout) {
  DecisionCall result;
  if (provider.endpoints.empty()) {
    result.error = "the provider has no instance";
    co_return result;
  }
  const Endpoint& endpoint = provider.endpoints.front();
  OneShotRequest request =
      one_shot_request(http::verb::post, endpoint, "/v1/systemone", "rolter-decision");
  request.set(http::field::content_type, "application/json");
  request.set(http::field::accept, "application/json");
  if (!provider.api_key.empty()) {
    request.set(http::field::authorization, "Bearer " + provider.api_key);
  }
  request.body() = std::move(body);
  const OneShotResult answer =
      co_await one_shot(endpoint, kNoInstance, tls, std::move(request),
                        {.timeout = timeout, .max_body_bytes = kMaxDecisionReplyBytes});
  if (!answer) {
    result.outcome = answer.error().timed_out ? Outcome::kTimeout : Outcome::kError;
    result.error = answer.error().message;
    co_return result;
  }
  const unsigned status = answer->result_int();
  if (status < 200 || status > 299) {
    result.outcome = Outcome::kStatus;
    result.error = status_text(*answer);
    co_return result;
  }
  auto verdict = read_decision_reply(answer->body());
  if (!verdict) {
    result.outcome = Outcome::kInvalid;
    result.error = std::move(verdict.error());
    co_return result;
  }
  result.outcome = Outcome::kOk;
  result.verdict = std::move(*verdict);
  co_return result;
}

Task<std::optional<DecisionVerdict>> ask_decision_service(const PolicyRoute::Decision& decision,
                                                          std::string_view route,
                                                          std::string_view client_body,
                                                          ClientTls tls,
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
