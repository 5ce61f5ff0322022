#include "collect/lmcache/lmcache_poller.h"

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <nlohmann/json.hpp>
#include <tl/expected.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "config/url.h"
#include "snapshot/snapshot_store.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

namespace http = beast::http;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A poll must end before the next is due; a loopback or in-cluster endpoint answers in
// milliseconds, and 1 s keeps a long refresh from hiding a dead endpoint behind a long wait.
constexpr milliseconds kMaxPollTimeout{1000};
// How often the loop looks at the snapshot when no endpoint asks for more: a reload that adds an
// lmcache table is noticed within a quarter second.
constexpr milliseconds kMaxTick{250};
// The answer is one small JSON object; anything larger is not an LMCache occupancy endpoint.
constexpr size_t kMaxBodyBytes = 64 * 1024;

}  // namespace

std::optional<LmcacheReading> read_lmcache_reading(std::string_view body) {
  // allow_exceptions = false: a parse error yields a discarded value instead of throwing.
  const nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;  // also the discarded value
  const auto occupancy = json.find("occupancy");
  const auto available = json.find("cache_available");
  if (occupancy == json.end() || !occupancy->is_number()) return std::nullopt;
  if (available == json.end() || !available->is_boolean()) return std::nullopt;
  const double value = occupancy->get<double>();
  if (!std::isfinite(value)) return std::nullopt;
  return LmcacheReading{.occupancy = value, .cache_available = available->get<bool>()};
}

PollTiming PollTiming::for_config(uint32_t refresh_secs, uint32_t stale_secs) {
  const Clock::Duration interval = seconds(refresh_secs);
  return PollTiming{
      .interval = interval,
      .timeout = std::min<Clock::Duration>(interval, kMaxPollTimeout),
      .stale_after = seconds(stale_secs),
  };
}

void PolledCache::set_instances(std::vector<LmcacheSignal*> instances) {
  for (LmcacheSignal* old : instances_) {
    if (std::find(instances.begin(), instances.end(), old) == instances.end()) {
      old->fresh.store(false, std::memory_order_relaxed);
    }
  }
  instances_ = std::move(instances);
}

bool PolledCache::due() const {
  return !in_flight_ && (!last_begin_ || clock_.now() - *last_begin_ >= timing_.interval);
}

void PolledCache::begin() {
  in_flight_ = true;
  last_begin_ = clock_.now();
}

bool PolledCache::succeed(const LmcacheReading& reading) {
  if (!in_flight_) return false;  // retired while the poll ran
  in_flight_ = false;
  last_success_ = clock_.now();
  last_reading_ = reading;
  // The reading describes the endpoint, not a moment of one instance: it applies to every
  // instance named now, including one that joined while the poll ran.
  for (LmcacheSignal* signal : instances_) {
    signal->occupancy.store(reading.occupancy, std::memory_order_relaxed);
    signal->available.store(reading.cache_available, std::memory_order_relaxed);
    signal->fresh.store(true, std::memory_order_relaxed);
  }
  failing_ = false;
  return !std::exchange(fresh_, true);
}

bool PolledCache::fail() {
  if (!in_flight_) return false;
  in_flight_ = false;
  clear_all();
  fresh_ = false;
  return !std::exchange(failing_, true);
}

bool PolledCache::check_stale() {
  if (!fresh_ || clock_.now() - last_success_ < timing_.stale_after) return false;
  clear_all();
  fresh_ = false;
  return true;
}

void PolledCache::retire() {
  clear_all();
  instances_.clear();
  in_flight_ = false;
  fresh_ = false;
}

void PolledCache::clear_all() {
  for (LmcacheSignal* signal : instances_) signal->fresh.store(false, std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------------------------
// The I/O loop.

namespace {

using Body = tl::expected<std::string, std::string>;  // the body, or why there is none

template <typename Stream>
Task<Body> get_body(Stream& stream, UpstreamConnection& connection, const Endpoint& endpoint) {
  const std::string target = endpoint.base_path.empty() ? "/" : endpoint.base_path;
  http::request<http::empty_body> request{http::verb::get, target, 11};
  request.set(http::field::host, endpoint.host_header);
  request.set(http::field::user_agent, "rolter-lmcache");
  request.set(http::field::accept, "application/json");
  request.keep_alive(false);
  auto [write_ec, written] = co_await http::async_write(stream, request, kNoThrow);
  if (write_ec) co_return tl::unexpected("sending the request: " + write_ec.message());
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxBodyBytes);
  auto [read_ec, read] = co_await http::async_read(stream, connection.buffer, parser, kNoThrow);
  if (read_ec) co_return tl::unexpected("reading the response: " + read_ec.message());
  if (parser.get().result() != http::status::ok) {
    co_return tl::unexpected("status " + std::to_string(parser.get().result_int()));
  }
  co_return std::move(parser.get().body());
}

// GET the endpoint on a fresh connection, all of it within `timeout`.
Task<Body> fetch(const Endpoint& endpoint, uint32_t instance_id, asio::ssl::context& tls,
                 milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto [ec, connection] = co_await connect_upstream(endpoint, instance_id, tls, timeout);
  if (ec) co_return tl::unexpected("connecting: " + ec.message());
  connection->tcp().expires_at(deadline);
  co_return co_await std::visit(
      [&](auto& stream) { return get_body(stream, *connection, endpoint); }, connection->stream);
}

// The reading a poll's answer holds, or why there is none.
tl::expected<LmcacheReading, std::string> reading_of(const Body& body) {
  if (!body) return tl::unexpected(body.error());
  if (auto reading = read_lmcache_reading(*body)) return *reading;
  return tl::unexpected(
      std::string("the body is not {\"occupancy\": <number>, \"cache_available\": <bool>}"));
}

}  // namespace

struct LmcachePoller::Impl {
  // One endpoint the current snapshot names, and the instances that name it.
  struct Target {
    Target(const Clock& clock, PollTiming timing) : cache(clock, timing) {}
    PolledCache cache;
    Endpoint endpoint;  // a copy: a poll may outlive the snapshot it came from
    uint32_t instance_id = 0;
    std::vector<Metrics::LmcacheInstruments> instruments;  // one per instance
  };
  // What the current snapshot asks of one endpoint.
  struct Wanted {
    Endpoint endpoint;
    uint32_t refresh_secs = UINT32_MAX;  // the shortest of the instances naming it
    uint32_t stale_secs = UINT32_MAX;
    std::vector<InstanceState*> states;
  };

  Impl(SnapshotStore& s, const Clock& c) : store(s), clock(c), tls(make_client_tls_context()) {}

  SnapshotStore& store;
  const Clock& clock;
  asio::ssl::context tls;
  std::map<std::string, std::shared_ptr<Target>> targets;  // by endpoint URL
  std::shared_ptr<const Snapshot> seen;  // the snapshot `targets` were last built from
  asio::io_context io{1};                // last: its pending polls go before what they use

  Task<void> run();
  void refresh();
  static std::map<std::string, Wanted> wanted_by(const Snapshot& snapshot);
  static void update(Target& target, Wanted& wanted, Metrics* metrics);
  milliseconds tick() const;
  // Runs the poll begun on `target`, and applies its outcome.
  Task<void> poll(std::shared_ptr<Target> target);
  void retire_all();
};

std::map<std::string, LmcachePoller::Impl::Wanted> LmcachePoller::Impl::wanted_by(
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

void LmcachePoller::Impl::update(Target& target, Wanted& wanted, Metrics* metrics) {
  target.cache.set_timing(PollTiming::for_config(wanted.refresh_secs, wanted.stale_secs));
  target.endpoint = std::move(wanted.endpoint);
  target.instance_id = wanted.states.front()->id;
  std::vector<LmcacheSignal*> signals;
  target.instruments.clear();
  for (InstanceState* state : wanted.states) {
    signals.push_back(&state->lmcache);
    if (metrics != nullptr) target.instruments.push_back(metrics->lmcache(state->identity));
  }
  target.cache.set_instances(std::move(signals));
}

void LmcachePoller::Impl::refresh() {
  std::shared_ptr<const Snapshot> snapshot = store.current();
  if (snapshot == seen) return;
  seen = snapshot;
  std::map<std::string, Wanted> wanted;
  if (snapshot) wanted = wanted_by(*snapshot);
  for (auto it = targets.begin(); it != targets.end();) {
    if (wanted.count(it->first) == 0) {
      spdlog::info("lmcache: no longer polling {}", it->first);
      it->second->cache.retire();
      it = targets.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [url, w] : wanted) {
    auto& target = targets[url];
    if (!target) {
      target =
          std::make_shared<Target>(clock, PollTiming::for_config(w.refresh_secs, w.stale_secs));
      spdlog::info("lmcache: polling {} every {} s", url, w.refresh_secs);
    }
    update(*target, w, snapshot->metrics());
  }
}

milliseconds LmcachePoller::Impl::tick() const {
  Clock::Duration shortest = kMaxTick;
  for (const auto& [url, target] : targets) {
    shortest = std::min(shortest, target->cache.timing().interval);
  }
  return std::chrono::duration_cast<milliseconds>(shortest);
}

Task<void> LmcachePoller::Impl::run() {
  asio::steady_timer timer(io);
  for (;;) {
    refresh();
    for (const auto& [url, target] : targets) {
      if (target->cache.check_stale()) {
        spdlog::warn(
            "lmcache: {}: no good poll for {} s; its occupancy is not used", url,
            std::chrono::duration_cast<seconds>(target->cache.timing().stale_after).count());
      }
      if (target->cache.due()) {
        target->cache.begin();  // here, not in the coroutine: it is due no more from now on
        asio::co_spawn(io, poll(target), asio::detached);
      }
    }
    timer.expires_after(tick());
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
  }
}

Task<void> LmcachePoller::Impl::poll(std::shared_ptr<Target> target) {
  PolledCache& cache = target->cache;
  const auto timeout = std::chrono::duration_cast<milliseconds>(cache.timing().timeout);
  const Body body = co_await fetch(target->endpoint, target->instance_id, tls, timeout);
  const tl::expected<LmcacheReading, std::string> reading = reading_of(body);
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

void LmcachePoller::Impl::retire_all() {
  for (auto& [url, target] : targets) target->cache.retire();
  targets.clear();
  seen.reset();
}

LmcachePoller::LmcachePoller(SnapshotStore& store, const Clock& clock)
    : impl_(std::make_unique<Impl>(store, clock)) {}

LmcachePoller::~LmcachePoller() { stop(); }

void LmcachePoller::start() {
  asio::co_spawn(impl_->io, impl_->run(), asio::detached);
  thread_ = std::thread([impl = impl_.get()] { impl->io.run(); });
}

void LmcachePoller::stop() {
  if (!thread_.joinable()) return;
  impl_->io.stop();
  thread_.join();
  impl_->retire_all();
}

}  // namespace rolter
