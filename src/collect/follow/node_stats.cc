#include "collect/follow/node_stats.h"

#include <prometheus/registry.h>
#include <spdlog/spdlog.h>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <atomic>
#include <optional>

#include "collect/follow/control_plane_client.h"
#include "collect/loop/background_loop.h"
#include "observe/metrics.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

namespace http = beast::http;
constexpr const char* kStatsPath = "/internal/node-stats";
// A post must end well before the next is due; a control plane that takes longer is down for
// this report, and the next one carries the same totals and more.
constexpr std::chrono::milliseconds kMaxPostTimeout{5000};

int64_t unix_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

struct NodeStatsReporter::Impl {
  Impl(Metrics& m, Options o, std::function<uint64_t()> v)
      : metrics(m),
        options(std::move(o)),
        snapshot_version(std::move(v)),
        node{options.node_id, options.node_token, options.node_version} {
    auto parsed = parse_endpoint(options.control_plane);
    if (parsed) {
      endpoint = std::move(*parsed);
    } else if (options.deliver) {
      // Reports go to `deliver`; there is nothing to connect to.
    } else {
      spdlog::error("node stats: control plane URL '{}' does not parse ({}); not reporting",
                    options.control_plane, parsed.error());
    }
  }

  Metrics& metrics;
  const Options options;
  const std::function<uint64_t()> snapshot_version;
  const NodeCredentials node;
  std::optional<Endpoint> endpoint;
  ClientTls tls;  // the process's, made at the first https:// connection
  // The counters it reports start with the process, as the reporter does.
  const int64_t started_at_ms = unix_ms(std::chrono::system_clock::now());
  std::atomic<uint64_t> ok{0};
  std::atomic<uint64_t> failed{0};
  bool failing = false;    // the reporter thread's
  BackgroundLoop background;  // last: its pending work goes before what it uses

  Task<void> run();
  Task<void> report();
};

Task<void> NodeStatsReporter::Impl::report() {
  const uint64_t serving = snapshot_version ? snapshot_version() : 0;
  const NodeStatsHeader header{
      .node_id = options.node_id,
      .version = options.node_version,
      .snapshot_version = serving,
      .at_ms = unix_ms(std::chrono::system_clock::now()),
      .started_at_ms = started_at_ms,
  };
  if (options.tracker != nullptr) metrics.refresh(*options.tracker);
  std::string body = node_stats_json(header, metrics.collect());
  if (options.deliver) {
    ++(options.deliver(options.node_id, body) ? ok : failed);
    co_return;
  }
  auto request = control_plane_request(http::verb::post, *endpoint, kStatsPath, node, serving);
  request.set(http::field::content_type, "application/json");
  request.body() = std::move(body);
  request.prepare_payload();
  const ExchangeLimits limits{.connect_timeout = options.connect_timeout,
                              .deadline = std::min(kMaxPostTimeout, options.interval)};
  const auto reply =
      co_await exchange_with_control_plane(*endpoint, tls, std::move(request), limits);
  if (reply && reply->status >= 200 && reply->status < 300) {
    ++ok;
    if (std::exchange(failing, false)) {
      spdlog::info("node stats: {} accepts reports again", endpoint->base_url);
    }
    co_return;
  }
  ++failed;
  if (!std::exchange(failing, true)) {
    spdlog::warn("node stats: posting to {}{} failed: {}; retrying every {} ms", endpoint->base_url,
                 kStatsPath, reply ? explain_reply(*reply, node) : reply.error(),
                 options.interval.count());
  }
}

Task<void> NodeStatsReporter::Impl::run() {
  asio::steady_timer timer(background.io());
  for (;;) {
    timer.expires_after(options.interval);
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
    co_await report();
  }
}

NodeStatsReporter::NodeStatsReporter(Metrics& metrics, Options options,
                                     std::function<uint64_t()> snapshot_version)
    : impl_(std::make_unique<Impl>(metrics, std::move(options), std::move(snapshot_version))) {}

NodeStatsReporter::~NodeStatsReporter() { stop(); }

void NodeStatsReporter::start() {
  if ((!impl_->endpoint && !impl_->options.deliver)) return;
  impl_->background.start([impl = impl_.get()] { return impl->run(); });
}

void NodeStatsReporter::stop() { impl_->background.stop(); }

uint64_t NodeStatsReporter::posts_ok() const { return impl_->ok.load(); }
uint64_t NodeStatsReporter::posts_failed() const { return impl_->failed.load(); }

}  // namespace rolter
