#include "collect/adaptive_telemetry/adaptive_telemetry.h"

#include <spdlog/spdlog.h>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>
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
using Json = nlohmann::json;
using std::chrono::milliseconds;

// A post must end well before the next is due; a control plane that takes longer is down for
// this tick, and the next tick sends a newer sample anyway.
constexpr milliseconds kMaxPostTimeout{5000};
// The control plane's answer is a status and at most a short message.
constexpr size_t kMaxAnswerBytes = 64 * 1024;
constexpr const char* kPath = "/internal/adaptive-telemetry";

Json optional_number(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json split_json(const AdaptiveSplit& split) {
  Json out = Json::object();
  for (size_t k = 0; k < kAdaptiveDecisionCount; ++k) {
    out[std::string(adaptive_decision_name(static_cast<AdaptiveDecision>(k)))] = split[k];
  }
  return out;
}

Json policy_json(const AdaptivePolicy& p) {
  return Json{{"enabled", p.enabled},
              {"latency_weight", p.latency_weight},
              {"cost_weight", p.cost_weight},
              {"load_weight", p.load_weight},
              {"exploration_ratio", p.exploration_ratio},
              {"min_samples", p.min_samples}};
}

}  // namespace

std::vector<AdaptiveRouteSample> collect_adaptive_samples(const Snapshot& snapshot,
                                                          Clock::TimePoint now) {
  std::vector<AdaptiveRouteSample> out;
  for (const auto& pool : snapshot.pools()) {
    if (pool->adaptive_state == nullptr) continue;
    const auto* balancer = dynamic_cast<const AdaptiveBalancer*>(pool->balancer.get());
    if (balancer == nullptr) continue;
    AdaptiveRouteSample sample = balancer->sample(pool->loads(), now);
    // Group pools are reported under their address, as their metrics are.
    sample.route = pool->kind == RoutePool::Kind::kGroup ? pool->name + "/*" : pool->name;
    // The snapshot's names (with "#<instance>" when a provider has several) tell instances apart.
    for (size_t i = 0; i < sample.candidates.size() && i < pool->candidates.size(); ++i) {
      sample.candidates[i].target = pool->candidates[i].explain_name;
    }
    out.push_back(std::move(sample));
  }
  return out;
}

std::string adaptive_telemetry_json(const std::string& node_id,
                                    const std::vector<AdaptiveRouteSample>& routes) {
  Json doc = {{"node_id", node_id}, {"routes", Json::array()}};
  for (const AdaptiveRouteSample& r : routes) {
    Json targets = Json::array();
    for (const AdaptiveCandidateSample& c : r.candidates) {
      targets.push_back(Json{
          {"target", c.target},
          {"score", c.score},
          {"components",
           {{"latency", c.latency_score}, {"cost", c.cost_score}, {"load", c.load_score}}},
          {"signals",
           {{"latency_ms", optional_number(c.latency_ms)},
            {"price", optional_number(c.price)},
            {"in_flight", c.in_flight}}},
          {"picks", c.picks},
          {"picks_by_decision", split_json(c.picks_by_decision)},
          {"seconds_since_last_pick", optional_number(c.seconds_since_last_pick)},
      });
    }
    doc["routes"].push_back(Json{{"route", r.route},
                                 {"engaged", r.engaged},
                                 {"served", r.served},
                                 {"decisions", split_json(r.decisions)},
                                 {"policy", policy_json(r.policy)},
                                 {"targets", std::move(targets)}});
  }
  // Replace, not throw, on a label that is not valid UTF-8.
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// ---------------------------------------------------------------------------------------------
// The I/O loop.

struct AdaptiveTelemetry::Impl {
  Impl(SnapshotStore& s, Options o, const Clock& c)
      : store(s), options(std::move(o)), clock(c), tls(make_client_tls_context()) {
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
  asio::ssl::context tls;
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
    const bool taken = options.deliver(options.node_id,
                                       adaptive_telemetry_json(options.node_id, samples));
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
                 endpoint->base_url, kPath,
                 answer ? status_text(*answer) : answer.error().message,
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
