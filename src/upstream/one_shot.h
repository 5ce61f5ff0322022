// One request and its answer on a fresh connection that closes after it: how the background
// services poll engines and post to the control plane, and how the request path asks a decision
// service or an engine's /tokenize. Plain TCP or TLS (certificate and host-name verification), all
// within one deadline, the answer's body bounded.
//
//   OneShotRequest request = one_shot_request(http::verb::get, endpoint, "/metrics", "rolter-x");
//   OneShotResult answer = co_await one_shot(endpoint, instance_id, tls, std::move(request),
//                                            {.timeout = 1s, .max_body_bytes = 4 << 20});
//   if (!answer) log(answer.error().message);          // "connecting: Connection refused"
//   else if (answer->result_int() == 200) use(answer->body());
//
// Include only from .cc files: it pulls in Beast's message types.
//
// Thread-safety: runs on the caller's io_context; `tls` must not be used by another thread
// meanwhile.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <tl/expected.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/function_ref.h"
#include "net/asio_fwd.h"
#include "upstream/client_tls.h"
#include "upstream/endpoint.h"

namespace rolter {

using OneShotRequest = beast::http::request<beast::http::string_body>;
using OneShotResponse = beast::http::response<beast::http::string_body>;

struct OneShotLimits {
  // Connect (with resolving and the TLS handshake), request and answer, from the call.
  std::chrono::milliseconds timeout{1000};
  // Connecting alone; 0 = the whole timeout.
  std::chrono::milliseconds connect_timeout{0};
  size_t max_body_bytes = 64 * 1024;
};

// Why there is no answer: the step that failed and its error ("connecting: ...", "sending the
// request: ...", "reading the response: ..."), and whether the deadline was the cause.
struct OneShotError {
  bool timed_out = false;
  bool refused = false;  // the connection was refused: nothing listens there
  std::string message;
};

using OneShotResult = tl::expected<OneShotResponse, OneShotError>;

// `{endpoint.base_path}{path}` with Host and User-Agent set; the connection closes after the answer.
OneShotRequest one_shot_request(beast::http::verb verb, const Endpoint& endpoint,
                                std::string_view path, std::string_view user_agent);

// Connects to `endpoint`, writes `request` and reads the answer, whatever its status. An answer
// whose body exceeds max_body_bytes is an error. `instance_id` labels the connection (0 when it
// serves no instance). `connected` runs once connected, just before the request is written; it
// must outlive the call.
Task<OneShotResult> one_shot(const Endpoint& endpoint, uint32_t instance_id,
                             ClientTls tls, OneShotRequest request, OneShotLimits limits,
                             FunctionRef<void()> connected);
Task<OneShotResult> one_shot(const Endpoint& endpoint, uint32_t instance_id,
                             ClientTls tls, OneShotRequest request,
                             OneShotLimits limits);

// "status 503", for a log line about an answer that is not the one wanted.
std::string status_text(const OneShotResponse& response);

}  // namespace rolter
