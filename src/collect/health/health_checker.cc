#include "collect/health/health_checker.h"

#include <spdlog/spdlog.h>

#include <map>
#include <string>

#include "collect/health/health_probe.h"
#include "collect/loop/background_loop.h"
#include "collect/loop/poll_loop.h"
#include "snapshot/snapshot_store.h"
#include "upstream/one_shot.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

namespace http = beast::http;
using std::chrono::milliseconds;

// How often the loop looks at the snapshot when no check asks for more.
constexpr milliseconds kMaxTick{250};
// A health answer is a status; its body is read only to keep the connection's end clean.
constexpr size_t kMaxBodyBytes = 64 * 1024;

HealthSettings settings_of(const HealthConfig& config) {
  return HealthSettings{.interval = milliseconds(config.interval_ms),
                        .timeout = milliseconds(config.timeout_ms),
                        .unhealthy_threshold = config.unhealthy_threshold,
                        .healthy_threshold = config.healthy_threshold};
}

}  // namespace

// What to check, for the PollLoop: one target per instance (by its identity).
struct HealthChecker::Impl {
  struct Target {
    Target(const Clock& clock, HealthSettings settings) : probe(clock, settings) {}
    HealthProbe& polled() { return probe; }
    HealthProbe probe;
    Endpoint endpoint;  // a copy: a check may outlive the snapshot it came from
    uint32_t instance_id = 0;
    std::string path;  // the provider's health_path
  };
  struct Wanted {
    const Candidate* candidate = nullptr;
    std::string path;
  };

  Impl(SnapshotStore& store, const Clock& c)
      : clock(c), loop(store, *this, kMaxTick) {}

  static std::map<std::string, Wanted> wanted(const Snapshot& snapshot);
  std::shared_ptr<Target> make(const std::string& identity, const Wanted& w) const;
  static void update(Target& target, const Wanted& wanted, const Snapshot& snapshot);
  static void forget(const std::string& identity, Target&);
  static void stale(const std::string&, Target&) {}
  Task<void> poll(std::shared_ptr<Target> target);

  const Clock& clock;
  ClientTls tls;  // the process's, made at the first https:// connection
  PollLoop<Impl> loop;
  BackgroundLoop background;  // last: its pending checks go before what they use
};

std::map<std::string, HealthChecker::Impl::Wanted> HealthChecker::Impl::wanted(
    const Snapshot& snapshot) {
  std::map<std::string, Wanted> wanted;
  for (const auto& provider : snapshot.config().providers) {
    if (provider.health_path.empty()) continue;
    // The pin pool lists every instance of the provider once, whichever routes use it.
    const RoutePool* pin = snapshot.provider_pool(provider.name);
    if (pin == nullptr) continue;
    for (const auto& candidate : pin->candidates) {
      wanted.try_emplace(candidate.state->identity, Wanted{&candidate, provider.health_path});
    }
  }
  return wanted;
}

std::shared_ptr<HealthChecker::Impl::Target> HealthChecker::Impl::make(
    const std::string& identity, const Wanted& w) const {
  // update() gives it the snapshot's settings before its first check.
  spdlog::debug("health: checking {} at {}{}", identity, w.candidate->endpoint->base_url, w.path);
  return std::make_shared<Target>(clock, HealthSettings{});
}

void HealthChecker::Impl::update(Target& target, const Wanted& wanted, const Snapshot& snapshot) {
  target.probe.set_settings(settings_of(snapshot.config().health));
  target.probe.set_instance(&wanted.candidate->state->health);
  target.endpoint = *wanted.candidate->endpoint;
  target.instance_id = wanted.candidate->state->id;
  target.path = wanted.path;
}

void HealthChecker::Impl::forget(const std::string& identity, Target&) {
  spdlog::debug("health: no longer checking {}", identity);
}

Task<void> HealthChecker::Impl::poll(std::shared_ptr<Target> target) {
  HealthProbe& probe = target->probe;
  OneShotRequest request =
      one_shot_request(http::verb::get, target->endpoint, target->path, "rolter-health");
  const OneShotLimits limits{.timeout = probe.settings().timeout, .max_body_bytes = kMaxBodyBytes};
  const OneShotResult answer =
      co_await one_shot(target->endpoint, target->instance_id, tls, std::move(request), limits);
  const bool ok = answer && answer->result_int() >= 200 && answer->result_int() < 300;
  const std::string& url = target->endpoint.base_url;
  switch (probe.record(ok)) {
    case HealthProbe::Change::kBecameUnhealthy:
      spdlog::warn("health: {}{}: {} failed checks in a row ({}); taking it out of rotation", url,
                   target->path, probe.consecutive_failed(),
                   answer ? status_text(*answer) : answer.error().message);
      break;
    case HealthProbe::Change::kBecameHealthy:
      spdlog::info("health: {}{}: {} good checks in a row; back in rotation", url, target->path,
                   probe.consecutive_ok());
      break;
    case HealthProbe::Change::kNone:
      break;
  }
}

HealthChecker::HealthChecker(SnapshotStore& store, const Clock& clock)
    : impl_(std::make_unique<Impl>(store, clock)) {}

HealthChecker::~HealthChecker() { stop(); }

void HealthChecker::start() {
  impl_->background.start([impl = impl_.get()] { return impl->loop.run(impl->background.io()); });
}

void HealthChecker::stop() {
  if (!impl_->background.running()) return;
  impl_->background.stop();
  impl_->loop.retire_all();
}

}  // namespace rolter
