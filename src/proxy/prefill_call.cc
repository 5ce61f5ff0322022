#include "proxy/prefill_call.h"

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>

#include "proxy/kv_transfer.h"
#include "upstream/one_shot.h"

namespace rolter {
namespace http = beast::http;

Task<PrefillCall> call_prefill(PrefillCallParams params, ClientTls tls) {
  const Candidate& candidate = *params.candidate;
  const Provider& provider = *candidate.provider;
  OneShotRequest request =
      one_shot_request(http::verb::post, *candidate.endpoint, params.target, "rolter");
  request.set(http::field::content_type, "application/json");
  request.set(http::field::accept, "application/json");
  if (!provider.api_key.empty()) {
    request.set(http::field::authorization, "Bearer " + provider.api_key);
  }
  for (const auto& [name, value] : provider.headers) request.set(name, value);
  if (!params.request_id.empty()) request.set("x-request-id", params.request_id);
  if (!params.traceparent.empty()) request.set("traceparent", params.traceparent);
  request.body() = std::move(params.body);
  const OneShotResult answer = co_await one_shot(
      *candidate.endpoint, candidate.state->id, tls, std::move(request),
      {.timeout = params.timeout, .max_body_bytes = kMaxPrefillAnswerBytes});
  PrefillCall call;
  if (!answer) {
    call.timed_out = answer.error().timed_out;
    call.refused = answer.error().refused;
    call.error = answer.error().message;
    co_return call;
  }
  call.status = answer->result_int();
  if (call.status != 200) {
    call.error = "prefill answered " + status_text(*answer);
    co_return call;
  }
  auto found = kv_transfer_params_of(answer->body());
  if (!found) {
    call.error = std::move(found.error());
    co_return call;
  }
  call.params = std::string(*found);
  co_return call;
}

}  // namespace rolter
