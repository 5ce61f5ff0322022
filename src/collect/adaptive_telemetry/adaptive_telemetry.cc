#include "collect/adaptive_telemetry/adaptive_telemetry.h"

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <nlohmann/json.hpp>
#include <tl/expected.hpp>

#include <algorithm>
#include <optional>

#include "snapshot/snapshot_store.h"
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

namespace {

using Status = tl::expected<unsigned, std::string>;  // the answer's status, or why there is none

template <typename Stream>
Task<Status> post_on(Stream& stream, UpstreamConnection& connection,
                     http::request<http::string_body>& request) {
  auto [write_ec, written] = co_await http::async_write(stream, request, kNoThrow);
  if (write_ec) co_return tl::unexpected("sending: " + write_ec.message());
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxAnswerBytes);
  auto [read_ec, read] = co_await http::async_read(stream, connection.buffer, parser, kNoThrow);
  if (read_ec) co_return tl::unexpected("reading the answer: " + read_ec.message());
  co_return parser.get().result_int();
}

}  // namespace

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
  asio::io_context io{1};  // last: its pending work goes before what it uses

  Task<void> run();
  Task<void> tick();
  Task<Status> post(const std::string& body);
};

Task<Status> AdaptiveTelemetry::Impl::post(const std::string& body) {
  const auto timeout = std::min(kMaxPostTimeout, options.interval);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto [ec, connection] = co_await connect_upstream(*endpoint, 0, tls, timeout);
  if (ec) co_return tl::unexpected("connecting: " + ec.message());
  connection->tcp().expires_at(deadline);
  http::request<http::string_body> request{http::verb::post, endpoint->base_path + kPath, 11};
  request.set(http::field::host, endpoint->host_header);
  request.set(http::field::user_agent, "rolter-adaptive-telemetry");
  request.set(http::field::content_type, "application/json");
  request.set("x-rolter-node-id", options.node_id);
  if (!options.node_token.empty()) {
    request.set(http::field::authorization, "Bearer " + options.node_token);
  }
  request.keep_alive(false);
  request.body() = body;
  request.prepare_payload();
  co_return co_await std::visit([&](auto& stream) { return post_on(stream, *connection, request); },
                                connection->stream);
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
  const Status status = co_await post(adaptive_telemetry_json(options.node_id, samples));
  const bool ok = status && *status >= 200 && *status < 300;
  if (Metrics* metrics = snapshot->metrics()) metrics->count_adaptive_telemetry_post(ok);
  if (ok) {
    if (std::exchange(failing, false)) {
      spdlog::info("adaptive telemetry: {} accepts samples again", endpoint->base_url);
    }
  } else if (!std::exchange(failing, true)) {
    spdlog::warn("adaptive telemetry: posting to {}{} failed: {}; retrying every {} ms",
                 endpoint->base_url, kPath,
                 status ? "status " + std::to_string(*status) : status.error(),
                 options.interval.count());
  }
}

Task<void> AdaptiveTelemetry::Impl::run() {
  asio::steady_timer timer(io);
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
  asio::co_spawn(impl_->io, impl_->run(), asio::detached);
  thread_ = std::thread([impl = impl_.get()] { impl->io.run(); });
}

void AdaptiveTelemetry::stop() {
  if (!thread_.joinable()) return;
  impl_->io.stop();
  thread_.join();
}

}  // namespace rolter
