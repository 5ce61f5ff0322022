#include "collect/adaptive_telemetry/adaptive_telemetry.h"

#include <spdlog/spdlog.h>
#include <boost/asio/steady_timer.hpp>
#include <tl/expected.hpp>

#include <algorithm>
#include <optional>

#include "collect/loop/background_loop.h"
#include "snapshot/snapshot_store.h"
#include "upstream/one_shot.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

namespace http = beast::http;
using std::chrono::milliseconds;

// A post must end well before the next is due; a control plane that takes longer is down for
// this tick, and the next tick sends a newer sample anyway.
constexpr milliseconds kMaxPostTimeout{5000};
// The control plane's answer is a status and at most a short message.
constexpr size_t kMaxAnswerBytes = 64 * 1024;
constexpr const char* kPath = "/internal/adaptive-telemetry";

}  // namespace

struct AdaptiveTelemetry::Impl {
  Impl(SnapshotStore& s, Options o, const Clock& c)
      : store(s), options(std::move(o)), clock(c) {
    if (!options.control_plane.empty()) {
      auto parsed = parse_endpoint(options.control_plane);
      if (parsed) {
        endpoint = std::move(*parsed);
      } else {
        spdlog::error("adaptive telemetry: control plane URL '{}' does not parse ({}); not sending",
                      options.control_plane, parsed.error());
      }
    }
  }

  SnapshotStore& store;
  const Options options;
  const Clock& clock;
  ClientTls tls;  // the process's, made at the first https:// connection
  std::optional<Endpoint> endpoint;
  bool failing = false;
  BackgroundLoop background;  // last: its pending work goes before what it uses

  Task<void> run();
  Task<void> tick();
  Task<OneShotResult> post(std::string body);
};

Task<OneShotResult> AdaptiveTelemetry::Impl::post(std::string body) {
  OneShotRequest request =
      one_shot_request(http::verb::post, *endpoint, kPath, "rolter-adaptive-telemetry");
  request.set(http::field::content_type, "application/json");
  request.set("x-rolter-node-id", options.node_id);
  if (!options.node_token.empty()) {
    request.set(http::field::authorization, "Bearer " + options.node_token);
  }
  request.body() = std::move(body);
  const OneShotLimits limits{.timeout = std::min(kMaxPostTimeout, options.interval),
                             .max_body_bytes = kMaxAnswerBytes};
  co_return co_await one_shot(*endpoint, 0, tls, std::move(request), limits);
}

Task<void> AdaptiveTelemetry::Impl::tick() {
  const std::shared_ptr<const Snapshot> snapshot = store.current();
  if (!snapshot) co_return;
  const auto samples = collect_adaptive_samples(*snapshot, clock.now());
  if (Metrics* metrics = snapshot->metrics()) {
    for (const auto& route : samples) {
      for (const auto& c : route.candidates)
        metrics->set_adaptive_score(route.route, c.target, c.score);
    }
  }
  if (samples.empty()) co_return;
  if (options.deliver) {
    const bool taken =
        options.deliver(options.node_id, adaptive_telemetry_json(options.node_id, samples));
    if (Metrics* metrics = snapshot->metrics()) metrics->count_adaptive_telemetry_post(taken);
    co_return;
  }
  if (!endpoint) co_return;
  const OneShotResult answer = co_await post(adaptive_telemetry_json(options.node_id, samples));
  const bool ok = answer && answer->result_int() >= 200 && answer->result_int() < 300;
  if (Metrics* metrics = snapshot->metrics()) metrics->count_adaptive_telemetry_post(ok);
  if (ok) {
    if (std::exchange(failing, false)) {
      spdlog::info("adaptive telemetry: {} accepts samples again", endpoint->base_url);
    }
  } else if (!std::exchange(failing, true)) {
    spdlog::warn("adaptive telemetry: posting to {}{} failed: {}; retrying every {} ms",
                 endpoint->base_url, kPath, answer ? status_text(*answer) : answer.error().message,
                 options.interval.count());
  }
}

Task<void> AdaptiveTelemetry::Impl::run() {
  asio::steady_timer timer(background.io());
  for (;;) {
    timer.expires_after(options.interval);
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
    co_await tick();
  }
}

AdaptiveTelemetry::AdaptiveTelemetry(SnapshotStore& store, Options options, const Clock& clock)
    : impl_(std::make_unique<Impl>(store, std::move(options), clock)) {}

AdaptiveTelemetry::~AdaptiveTelemetry() { stop(); }

void AdaptiveTelemetry::start() {
  impl_->background.start([impl = impl_.get()] { return impl->run(); });
}

void AdaptiveTelemetry::stop() { impl_->background.stop(); }

}  // namespace rolter
