#include "collect/health/health_checker.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <unordered_set>

#include "upstream/upstream_connection.h"

namespace rolter {
namespace http = beast::http;
using std::chrono::milliseconds;

struct HealthChecker::Impl {
  explicit Impl(SnapshotStore& s) : store(s), tls(make_client_tls_context()) {}

  SnapshotStore& store;
  asio::io_context io{1};
  asio::executor_work_guard<asio::io_context::executor_type> guard{io.get_executor()};
  asio::ssl::context tls;
  uint64_t generation = 0;  // bumped per snapshot; older check loops end

  void on_snapshot(std::shared_ptr<const Snapshot> snapshot);
  Task<void> check_loop(uint64_t my_generation, std::shared_ptr<const Snapshot> snapshot,
                        const Candidate* candidate, std::string path);
};

namespace {

// One check: true when the instance answered 2xx within the timeout.
template <typename Stream>
Task<bool> get_ok(Stream& stream, UpstreamConnection& connection, const Endpoint& endpoint,
                  const std::string& target) {
  http::request<http::empty_body> request{http::verb::get, target, 11};
  request.set(http::field::host, endpoint.host_header);
  request.set(http::field::user_agent, "rolter-health");
  request.keep_alive(false);
  auto [write_ec, written] = co_await http::async_write(stream, request, kNoThrow);
  if (write_ec) co_return false;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 * 1024);
  auto [read_ec, read] = co_await http::async_read(stream, connection.buffer, parser, kNoThrow);
  if (read_ec) co_return false;
  const unsigned status = parser.get().result_int();
  co_return status >= 200 && status < 300;
}

}  // namespace

Task<void> HealthChecker::Impl::check_loop(uint64_t my_generation,
                                           std::shared_ptr<const Snapshot> snapshot,
                                           const Candidate* candidate, std::string path) {
  const auto& config = snapshot->config().health;
  const auto timeout = milliseconds(config.timeout_ms);
  const std::string target = candidate->endpoint->base_path + path;
  uint32_t consecutive_ok = 0;
  uint32_t consecutive_failed = 0;
  asio::steady_timer timer(io);
  while (generation == my_generation) {
    bool ok = false;
    auto [ec, connection] =
        co_await connect_upstream(*candidate->endpoint, candidate->state->id, tls, timeout);
    if (!ec) {
      connection->tcp().expires_after(timeout);
      ok = co_await std::visit(
          [&](auto& stream) { return get_ok(stream, *connection, *candidate->endpoint, target); },
          connection->stream);
    }
    if (generation != my_generation) break;
    record_health_check(candidate->state->health, ok, consecutive_ok, consecutive_failed,
                        config.healthy_threshold, config.unhealthy_threshold);
    timer.expires_after(milliseconds(config.interval_ms));
    co_await timer.async_wait(kNoThrow);
  }
}

void HealthChecker::Impl::on_snapshot(std::shared_ptr<const Snapshot> snapshot) {
  ++generation;
  // One loop per instance: candidates of several routes share an instance (same state).
  std::unordered_set<const InstanceState*> seen;
  for (const auto& provider_config : snapshot->config().providers) {
    if (provider_config.health_path.empty()) continue;
    const RoutePool* pin = snapshot->provider_pool(provider_config.name);
    if (pin == nullptr) continue;
    for (const auto& candidate : pin->candidates) {
      if (!seen.insert(candidate.state).second) continue;
      asio::co_spawn(io,
                     check_loop(generation, snapshot, &candidate, provider_config.health_path),
                     asio::detached);
    }
  }
  // Instances that lost their health check are no longer held out by an old verdict.
  for (const auto& provider : snapshot->config().providers) {
    if (!provider.health_path.empty()) continue;
    if (const RoutePool* pin = snapshot->provider_pool(provider.name)) {
      for (const auto& candidate : pin->candidates) {
        if (!seen.count(candidate.state)) candidate.state->health.healthy.store(true);
      }
    }
  }
}

HealthChecker::HealthChecker(SnapshotStore& store) : impl_(std::make_unique<Impl>(store)) {}

HealthChecker::~HealthChecker() { stop(); }

void HealthChecker::start() {
  impl_->store.subscribe([impl = impl_.get()](std::shared_ptr<const Snapshot> snapshot) {
    asio::post(impl->io, [impl, snapshot = std::move(snapshot)]() mutable {
      impl->on_snapshot(std::move(snapshot));
    });
  });
  thread_ = std::thread([impl = impl_.get()] { impl->io.run(); });
}

void HealthChecker::stop() {
  if (!thread_.joinable()) return;
  impl_->io.stop();
  thread_.join();
}

}  // namespace rolter
