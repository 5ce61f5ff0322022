// The HTTP side a data-plane node shares between its conversations with the control plane (the
// snapshot follower's long poll, the stats reporter's posts): the node's identity headers, and one
// request/answer exchange on a fresh connection (upstream/one_shot, http or https with certificate
// verification).
//
// Every request carries
//   authorization: Bearer <node token>     (absent when the token is empty)
//   x-rolter-node-id, x-rolter-node-version, x-rolter-snapshot-version (0 = none yet)
//
// Include only from collect/'s .cc files: it pulls in Beast.
//
// Thread-safety: free functions; exchange_with_control_plane() runs on the caller's io_context,
// and `tls` must not be used by another thread meanwhile.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <tl/expected.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "net/asio_fwd.h"
#include "snapshot/snapshot.h"
#include "upstream/client_tls.h"

namespace rolter {

// Who the node is, as the control plane sees it.
struct NodeCredentials {
  std::string node_id;
  std::string node_token;    // the secret; never logged
  std::string node_version;  // rolter's software version
};

// The answer to one exchange.
struct ControlPlaneReply {
  unsigned status = 0;
  std::string snapshot_version;  // the x-rolter-snapshot-version header, as sent
  std::string body;
};

using ControlPlaneRequest = beast::http::request<beast::http::string_body>;

// A request for `{base_path}{path_and_query}` with the node's headers; the connection closes after
// the answer.
ControlPlaneRequest control_plane_request(beast::http::verb verb, const Endpoint& endpoint,
                                          std::string_view path_and_query,
                                          const NodeCredentials& node, uint64_t serving_version);

struct ExchangeLimits {
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds deadline{5000};  // for the request and the whole answer, after connect
                                             // (at the latest: a quick connect leaves more)
  size_t max_body_bytes = 64 * 1024;
};

// Connects, sends `request`, reads the answer. The error says which step failed and why.
Task<tl::expected<ControlPlaneReply, std::string>> exchange_with_control_plane(
    const Endpoint& endpoint, ClientTls tls, ControlPlaneRequest request,
    ExchangeLimits limits);

// The first line of a body, cut to `max` bytes, for a log line.
std::string body_excerpt(std::string_view body, size_t max = 200);

// What an answer other than the one hoped for says, for a log line: "status 503: <the body's first
// line>", or for 401/403 which token was refused and what to check. Never the token itself, even
// when the body echoes it.
std::string explain_reply(const ControlPlaneReply& reply, const NodeCredentials& node);

// True for 401 and 403: the control plane refused the node's credentials.
inline bool refused_credentials(const ControlPlaneReply& reply) {
  return reply.status == 401 || reply.status == 403;
}

}  // namespace rolter
