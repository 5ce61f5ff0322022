#include "collect/usage_flush/usage_post_sink.h"

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <optional>

#include "collect/follow/control_plane_client.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

namespace http = beast::http;
constexpr const char* kUsagePath = "/internal/v1/usage";

// What every call of one sink shares: the parsed URL, the TLS context and the node's identity.
struct PostState {
  explicit PostState(UsagePostOptions o)
      : options(std::move(o)),
        node{options.node_id, options.node_token, options.node_version} {
    auto parsed = parse_endpoint(options.control_plane);
    if (parsed) {
      endpoint = std::move(*parsed);
    } else {
      spdlog::error("usage: control plane URL '{}' does not parse ({}); usage is not posted",
                    options.control_plane, parsed.error());
    }
  }

  const UsagePostOptions options;
  const NodeCredentials node;
  ClientTls tls;  // the process's, made at the first https:// connection
  std::optional<Endpoint> endpoint;
  bool failing = false;

  bool post(const std::vector<UsageRow>& rows);
};

bool PostState::post(const std::vector<UsageRow>& rows) {
  if (!endpoint) return false;
  const uint64_t serving = options.snapshot_version ? options.snapshot_version() : 0;
  auto request = control_plane_request(http::verb::post, *endpoint, kUsagePath, node, serving);
  request.set(http::field::content_type, "application/json");
  request.body() = usage_rows_json(rows);
  request.prepare_payload();
  const ExchangeLimits limits{.connect_timeout = options.connect_timeout,
                              .deadline = options.deadline};
  // A loop of its own, run to the end: the exchange's own deadlines bound it.
  asio::io_context io;
  std::optional<tl::expected<ControlPlaneReply, std::string>> reply;
  asio::co_spawn(
      io, exchange_with_control_plane(*endpoint, tls, std::move(request), limits),
      [&reply](std::exception_ptr error, tl::expected<ControlPlaneReply, std::string> r) {
        reply = error ? tl::unexpected(std::string("the exchange failed")) : std::move(r);
      });
  io.run();
  const bool stored = reply && *reply && (*reply)->status >= 200 && (*reply)->status < 300;
  if (stored) {
    if (std::exchange(failing, false)) {
      spdlog::info("usage: {} accepts usage again", endpoint->base_url);
    }
    return true;
  }
  if (!std::exchange(failing, true)) {
    const std::string why = !reply    ? "no answer"
                            : !*reply ? reply->error()
                                      : explain_reply(**reply, node);
    spdlog::warn("usage: posting to {}{} failed: {}", endpoint->base_url, kUsagePath, why);
  }
  return false;
}

}  // namespace

UsageFlusher::Sink make_usage_post_sink(UsagePostOptions options) {
  auto state = std::make_shared<PostState>(std::move(options));
  return [state](std::vector<UsageRow>&& rows) { return state->post(rows); };
}

}  // namespace rolter
