#include "collect/lmcache/lmcache_poller.h"

#include <spdlog/spdlog.h>
#include <tl/expected.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "collect/loop/background_loop.h"
#include "collect/loop/poll_loop.h"
#include "config/url.h"
#include "snapshot/snapshot_store.h"
#include "upstream/one_shot.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

namespace http = beast::http;
using std::chrono::milliseconds;
using std::chrono::seconds;

// How often the loop looks at the snapshot when no endpoint asks for more: a reload that adds an
// lmcache table is noticed within a quarter second.
constexpr milliseconds kMaxTick{250};
// The answer is one small JSON object; anything larger is not an LMCache occupancy endpoint.
constexpr size_t kMaxBodyBytes = 64 * 1024;

// The reading a poll's answer holds, or why there is none.
tl::expected<LmcacheReading, std::string> reading_of(const OneShotResult& answer) {
  if (!answer) return tl::unexpected(answer.error().message);
  if (answer->result() != http::status::ok) return tl::unexpected(status_text(*answer));
  if (auto reading = read_lmcache_reading(answer->body())) return *reading;
  return tl::unexpected(
      std::string("the body is not {\"occupancy\": <number>, \"cache_available\": <bool>}"));
}

}  // namespace

// What to poll, for the PollLoop: one target per endpoint URL.
struct LmcachePoller::Impl {
  struct Target {
    Target(const Clock& clock, PollTiming timing) : cache(clock, timing) {}
    PolledCache& polled() { return cache; }
    PolledCache cache;
    Endpoint endpoint;  // a copy: a poll may outlive the snapshot it came from
    uint32_t instance_id = 0;
    std::vector<Metrics::LmcacheInstruments> instruments;  // one per instance
    SeriesLease series;                                    // what `instruments` point to
  };
  // What the current snapshot asks of one endpoint.
  struct Wanted {
    Endpoint endpoint;
    uint32_t refresh_secs = UINT32_MAX;  // the shortest of the instances naming it
    uint32_t stale_secs = UINT32_MAX;
    std::vector<InstanceState*> states;
  };

  Impl(SnapshotStore& store, const Clock& c)
      : clock(c), loop(store, *this, kMaxTick) {}

  static std::map<std::string, Wanted> wanted(const Snapshot& snapshot);
  std::shared_ptr<Target> make(const std::string& url, const Wanted& w) const;
  static void update(Target& target, Wanted& wanted, const Snapshot& snapshot);
  static void forget(const std::string& url, Target&);
  static void stale(const std::string& url, Target& target);
  Task<void> poll(std::shared_ptr<Target> target);

  const Clock& clock;
  ClientTls tls;  // the process's, made at the first https:// connection
  PollLoop<Impl> loop;
  BackgroundLoop background;  // last: its pending polls go before what they use
};

std::map<std::string, LmcachePoller::Impl::Wanted> LmcachePoller::Impl::wanted(
    const Snapshot& snapshot) {
  std::map<std::string, Wanted> wanted;
  for (const auto& provider : snapshot.config().providers) {
    // The pin pool lists every instance of the provider once, whichever routes use it.
    const RoutePool* pin = snapshot.provider_pool(provider.name);
    if (pin == nullptr) continue;
    for (const auto& instance : provider.instances) {
      if (!instance.lmcache) continue;
      const auto base = parse_url(instance.base_url);
      auto endpoint = parse_endpoint(instance.lmcache->endpoint);
      if (!base || !endpoint) continue;
      const std::string base_url = base->to_string();
      const auto candidate =
          std::find_if(pin->candidates.begin(), pin->candidates.end(),
                       [&](const Candidate& c) { return c.endpoint->base_url == base_url; });
      if (candidate == pin->candidates.end()) continue;
      Wanted& w = wanted[endpoint->base_url];
      w.endpoint = std::move(*endpoint);
      w.refresh_secs = std::min(w.refresh_secs, instance.lmcache->refresh_secs);
      w.stale_secs = std::min(w.stale_secs, instance.lmcache->stale_secs);
      if (std::find(w.states.begin(), w.states.end(), candidate->state) == w.states.end()) {
        w.states.push_back(candidate->state);
      }
    }
  }
  return wanted;
}

std::shared_ptr<LmcachePoller::Impl::Target> LmcachePoller::Impl::make(const std::string& url,
                                                                       const Wanted& w) const {
  spdlog::info("lmcache: polling {} every {} s", url, w.refresh_secs);
  return std::make_shared<Target>(clock, lmcache_poll_timing(w.refresh_secs, w.stale_secs));
}

void LmcachePoller::Impl::update(Target& target, Wanted& wanted, const Snapshot& snapshot) {
  target.cache.set_timing(lmcache_poll_timing(wanted.refresh_secs, wanted.stale_secs));
  target.endpoint = std::move(wanted.endpoint);
  target.instance_id = wanted.states.front()->id;
  std::vector<LmcacheSignal*> signals;
  std::vector<Metrics::LmcacheInstruments> instruments;
  SeriesLease series;
  for (InstanceState* state : wanted.states) {
    signals.push_back(&state->lmcache);
    if (Metrics* metrics = snapshot.metrics()) {
      instruments.push_back(metrics->lmcache(state->identity, series));
    }
  }
  target.instruments = std::move(instruments);
  // The new lease holds what stays before the old one lets go (see the engine scraper).
  target.series = std::move(series);
  target.cache.set_instances(std::move(signals));
}

void LmcachePoller::Impl::forget(const std::string& url, Target&) {
  spdlog::info("lmcache: no longer polling {}", url);
}

void LmcachePoller::Impl::stale(const std::string& url, Target& target) {
  spdlog::warn("lmcache: {}: no good poll for {} s; its occupancy is not used", url,
               std::chrono::duration_cast<seconds>(target.cache.timing().stale_after).count());
}

Task<void> LmcachePoller::Impl::poll(std::shared_ptr<Target> target) {
  PolledCache& cache = target->cache;
  // The endpoint is a full URL: its path is the whole request target.
  OneShotRequest request = one_shot_request(http::verb::get, target->endpoint,
                                            target->endpoint.base_path.empty() ? "/" : "",
                                            "rolter-lmcache");
  request.set(http::field::accept, "application/json");
  const OneShotLimits limits{
      .timeout = std::chrono::duration_cast<milliseconds>(cache.timing().timeout),
      .max_body_bytes = kMaxBodyBytes};
  const OneShotResult answer =
      co_await one_shot(target->endpoint, target->instance_id, tls, std::move(request), limits);
  const tl::expected<LmcacheReading, std::string> reading = reading_of(answer);
  if (!reading) {
    for (const auto& instruments : target->instruments) Metrics::count_lmcache_failure(instruments);
  }
  const std::string& url = target->endpoint.base_url;
  if (reading && cache.succeed(*reading)) {
    spdlog::info("lmcache: {}: reading the cache's occupancy ({}, {})", url, reading->occupancy,
                 reading->cache_available ? "available" : "unavailable");
  } else if (!reading && cache.fail()) {
    spdlog::warn("lmcache: {}: {}; its occupancy is not used", url, reading.error());
  }
}

LmcachePoller::LmcachePoller(SnapshotStore& store, const Clock& clock)
    : impl_(std::make_unique<Impl>(store, clock)) {}

LmcachePoller::~LmcachePoller() { stop(); }

void LmcachePoller::start() {
  impl_->background.start([impl = impl_.get()] { return impl->loop.run(impl->background.io()); });
}

void LmcachePoller::stop() {
  if (!impl_->background.running()) return;
  impl_->background.stop();
  impl_->loop.retire_all();
}

}  // namespace rolter
