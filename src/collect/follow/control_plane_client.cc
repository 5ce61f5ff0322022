#include "collect/follow/control_plane_client.h"

#include "upstream/one_shot.h"

namespace rolter {

namespace http = beast::http;

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
    const Endpoint& endpoint, ClientTls tls, ControlPlaneRequest request,
    ExchangeLimits limits) {
  const OneShotLimits one_shot_limits{.timeout = limits.connect_timeout + limits.deadline,
                                      .connect_timeout = limits.connect_timeout,
                                      .max_body_bytes = limits.max_body_bytes};
  OneShotResult answer = co_await one_shot(endpoint, 0, tls, std::move(request), one_shot_limits);
  if (!answer) co_return tl::unexpected(std::move(answer.error().message));
  ControlPlaneReply reply;
  reply.status = answer->result_int();
  reply.snapshot_version = std::string((*answer)["x-rolter-snapshot-version"]);
  reply.body = std::move(answer->body());
  co_return reply;
}

std::string body_excerpt(std::string_view body, size_t max) {
  const size_t end = body.find_first_of("\r\n");
  std::string_view line = body.substr(0, end);
  if (line.size() > max) line = line.substr(0, max);
  return std::string(line);
}

std::string explain_reply(const ControlPlaneReply& reply, const NodeCredentials& node) {
  const std::string status = "status " + std::to_string(reply.status);
  if (refused_credentials(reply)) {
    return status + ": the control plane refused the node token" +
           (node.node_token.empty() ? " (ROLTER_NODE_TOKEN is not set)"
            : reply.status == 401
                ? " (is ROLTER_NODE_TOKEN the one the control plane gave this node?)"
                : " (is the token meant for node '" + node.node_id + "'?)");
  }
  std::string excerpt = body_excerpt(reply.body);
  // A body is the control plane's message; it never should, but must not echo the secret.
  if (!node.node_token.empty() && excerpt.find(node.node_token) != std::string::npos) {
    excerpt.clear();
  }
  return excerpt.empty() ? status : status + ": " + excerpt;
}

}  // namespace rolter
