#include "collect/engine_metrics/engine_scraper.h"

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <tl/expected.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>

#include "collect/engine_metrics/prometheus_text.h"
#include "common/function_ref.h"
#include "snapshot/snapshot_store.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

namespace http = beast::http;
using std::chrono::milliseconds;

constexpr std::string_view kRunning = "vllm:num_requests_running";
constexpr std::string_view kWaiting = "vllm:num_requests_waiting";
constexpr std::string_view kGpuCacheUsage = "vllm:gpu_cache_usage_perc";
constexpr std::string_view kKvCacheUsage = "vllm:kv_cache_usage_perc";  // its name since vLLM 0.10
constexpr std::string_view kEngineMetrics = "engine_metrics";

// A scrape must end before the next is due, but a loopback engine answers in about a millisecond:
// 50 ms keeps a tiny interval from failing every scrape, 1 s keeps a long one from hiding a dead
// engine behind a long wait.
constexpr milliseconds kMinScrapeTimeout{50};
constexpr milliseconds kMaxScrapeTimeout{1000};
// Two scrapes in a row lost: one late answer is jitter, two are an engine that stopped answering.
constexpr int kStaleIntervals = 3;
// How often the loop looks at the snapshot when no engine asks for more: a reload that adds an
// engine_metrics provider is noticed within one default interval.
constexpr milliseconds kMaxTick{250};
// vLLM's /metrics with histograms for many models and adapters runs to a few hundred KiB.
constexpr size_t kMaxMetricsBytes = 4 * 1024 * 1024;

}  // namespace

uint32_t EngineSample::load() const {
  const double total = std::round(running + waiting);
  if (!(total > 0)) return 0;  // also NaN, though read_engine_sample() lets none through
  if (total >= static_cast<double>(UINT32_MAX)) return UINT32_MAX;
  return static_cast<uint32_t>(total);
}

std::optional<EngineSample> read_engine_sample(std::string_view metrics_text) {
  const auto running = sum_samples(metrics_text, kRunning);
  const auto waiting = sum_samples(metrics_text, kWaiting);
  if (!running || !waiting || !std::isfinite(*running) || !std::isfinite(*waiting)) {
    return std::nullopt;
  }
  EngineSample sample{.running = *running, .waiting = *waiting};
  auto cache = sum_samples(metrics_text, kGpuCacheUsage);
  if (!cache) cache = sum_samples(metrics_text, kKvCacheUsage);
  if (cache && std::isfinite(*cache)) sample.gpu_cache_usage = *cache;
  return sample;
}

ScrapeTiming ScrapeTiming::for_interval(milliseconds interval) {
  const milliseconds timeout = std::clamp(interval, kMinScrapeTimeout, kMaxScrapeTimeout);
  return ScrapeTiming{
      .interval = interval,
      .timeout = timeout,
      .stale_after = std::max<Clock::Duration>(kStaleIntervals * interval, interval + timeout),
  };
}

void ScrapedEngine::set_instances(std::vector<LoadSignals*> instances) {
  for (LoadSignals* old : instances_) {
    if (std::find(instances.begin(), instances.end(), old) == instances.end()) {
      old->engine_fresh.store(false, std::memory_order_relaxed);
    }
  }
  instances_ = std::move(instances);
}

bool ScrapedEngine::due() const {
  return !in_flight_ && (!last_begin_ || clock_.now() - *last_begin_ >= timing_.interval);
}

void ScrapedEngine::begin() {
  in_flight_ = true;
  last_begin_ = clock_.now();
  pending_.clear();
}

void ScrapedEngine::sending() {
  pending_.clear();
  for (LoadSignals* signals : instances_) {
    pending_.emplace_back(signals, signals->sent_total.load(std::memory_order_relaxed));
  }
}

bool ScrapedEngine::succeed(const EngineSample& sample) {
  if (!in_flight_) return false;  // retired while the scrape ran
  in_flight_ = false;
  last_success_ = clock_.now();
  last_sample_ = sample;
  const uint32_t load = sample.load();
  for (const auto& [signals, sent] : pending_) {
    // An instance that left while the scrape ran keeps the cleared flag set_instances() gave it.
    if (!named(signals)) continue;
    signals->engine_load.store(load, std::memory_order_relaxed);
    signals->sent_at_scrape.store(sent, std::memory_order_relaxed);
    signals->engine_fresh.store(true, std::memory_order_relaxed);
  }
  pending_.clear();
  failing_ = false;
  return !std::exchange(fresh_, true);
}

bool ScrapedEngine::fail() {
  if (!in_flight_) return false;
  in_flight_ = false;
  pending_.clear();
  clear_all();
  fresh_ = false;
  return !std::exchange(failing_, true);
}

bool ScrapedEngine::check_stale() {
  if (!fresh_ || clock_.now() - last_success_ < timing_.stale_after) return false;
  clear_all();
  fresh_ = false;
  return true;
}

void ScrapedEngine::retire() {
  clear_all();
  instances_.clear();
  pending_.clear();
  in_flight_ = false;
  fresh_ = false;
}

void ScrapedEngine::clear_all() {
  for (LoadSignals* signals : instances_) {
    signals->engine_fresh.store(false, std::memory_order_relaxed);
  }
}

bool ScrapedEngine::named(const LoadSignals* signals) const {
  return std::find(instances_.begin(), instances_.end(), signals) != instances_.end();
}

// ---------------------------------------------------------------------------------------------
// The I/O loop.

namespace {

using MetricsText = tl::expected<std::string, std::string>;  // the body, or why there is none

template <typename Stream>
Task<MetricsText> get_metrics(Stream& stream, UpstreamConnection& connection,
                              const Endpoint& endpoint) {
  http::request<http::empty_body> request{http::verb::get, endpoint.base_path + "/metrics", 11};
  request.set(http::field::host, endpoint.host_header);
  request.set(http::field::user_agent, "rolter-engine-metrics");
  // The classic text format: an engine that negotiates may otherwise answer in OpenMetrics.
  request.set(http::field::accept, "text/plain; version=0.0.4");
  request.keep_alive(false);
  auto [write_ec, written] = co_await http::async_write(stream, request, kNoThrow);
  if (write_ec) co_return tl::unexpected("sending the request: " + write_ec.message());
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxMetricsBytes);
  auto [read_ec, read] = co_await http::async_read(stream, connection.buffer, parser, kNoThrow);
  if (read_ec) co_return tl::unexpected("reading the response: " + read_ec.message());
  if (parser.get().result() != http::status::ok) {
    co_return tl::unexpected("status " + std::to_string(parser.get().result_int()));
  }
  co_return std::move(parser.get().body());
}

// GET {base_url}/metrics on a fresh connection, all of it within `timeout`. `sending` is called
// once connected, just before the request is written.
Task<MetricsText> fetch_metrics(const Endpoint& endpoint, uint32_t instance_id,
                                asio::ssl::context& tls, milliseconds timeout,
                                FunctionRef<void()> sending) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto [ec, connection] = co_await connect_upstream(endpoint, instance_id, tls, timeout);
  if (ec) co_return tl::unexpected("connecting: " + ec.message());
  connection->tcp().expires_at(deadline);
  sending();
  co_return co_await std::visit(
      [&](auto& stream) { return get_metrics(stream, *connection, endpoint); }, connection->stream);
}

// The sample a scrape's answer holds, or why there is none.
tl::expected<EngineSample, std::string> sample_of(const MetricsText& text) {
  if (!text) return tl::unexpected(text.error());
  if (auto sample = read_engine_sample(*text)) return *sample;
  return tl::unexpected("no readable " + std::string(kRunning) + " and " + std::string(kWaiting));
}

}  // namespace

struct EngineScraper::Impl {
  // One engine (base_url) the current snapshot names, and the instances that point at it.
  struct Target {
    Target(const Clock& clock, ScrapeTiming timing) : engine(clock, timing) {}
    ScrapedEngine engine;
    Endpoint endpoint;  // a copy: a scrape may outlive the snapshot it came from
    uint32_t instance_id = 0;
    std::vector<Metrics::EngineInstruments> instruments;  // one per instance
  };
  // What the current snapshot asks of one engine.
  struct Wanted {
    const Endpoint* endpoint = nullptr;
    milliseconds interval = milliseconds::max();  // the shortest of the providers naming it
    std::vector<InstanceState*> states;
  };

  Impl(SnapshotStore& s, const Clock& c) : store(s), clock(c), tls(make_client_tls_context()) {}

  SnapshotStore& store;
  const Clock& clock;
  asio::ssl::context tls;
  std::map<std::string, std::shared_ptr<Target>> targets;  // by base_url
  std::shared_ptr<const Snapshot> seen;  // the snapshot `targets` were last built from
  asio::io_context io{1};                // last: its pending scrapes go before what they use

  Task<void> run();
  void refresh();
  std::map<std::string, Wanted> wanted_by(const Snapshot& snapshot) const;
  void update(Target& target, const Wanted& wanted, Metrics* metrics) const;
  milliseconds tick() const;
  // Runs the scrape begun on `target`, and applies its outcome.
  Task<void> scrape(std::shared_ptr<Target> target);
  void retire_all();
};

std::map<std::string, EngineScraper::Impl::Wanted> EngineScraper::Impl::wanted_by(
    const Snapshot& snapshot) const {
  std::map<std::string, Wanted> wanted;
  for (const auto& provider : snapshot.config().providers) {
    if (provider.load_source != kEngineMetrics) continue;
    // The pin pool lists every instance of the provider once, whichever routes use it.
    const RoutePool* pin = snapshot.provider_pool(provider.name);
    if (pin == nullptr) continue;
    for (const auto& candidate : pin->candidates) {
      Wanted& w = wanted[candidate.endpoint->base_url];
      w.endpoint = candidate.endpoint;
      w.interval = std::min(w.interval, milliseconds(provider.metrics_interval_ms));
      w.states.push_back(candidate.state);
    }
  }
  return wanted;
}

void EngineScraper::Impl::update(Target& target, const Wanted& wanted, Metrics* metrics) const {
  target.engine.set_timing(ScrapeTiming::for_interval(wanted.interval));
  target.endpoint = *wanted.endpoint;
  target.instance_id = wanted.states.front()->id;
  std::vector<LoadSignals*> signals;
  target.instruments.clear();
  for (InstanceState* state : wanted.states) {
    signals.push_back(&state->load);
    if (metrics != nullptr) target.instruments.push_back(metrics->engine(state->identity));
  }
  target.engine.set_instances(std::move(signals));
}

void EngineScraper::Impl::refresh() {
  std::shared_ptr<const Snapshot> snapshot = store.current();
  if (snapshot == seen) return;
  seen = snapshot;
  std::map<std::string, Wanted> wanted;
  if (snapshot) wanted = wanted_by(*snapshot);
  for (auto it = targets.begin(); it != targets.end();) {
    if (wanted.count(it->first) == 0) {
      spdlog::info("engine metrics: no longer scraping {}", it->first);
      it->second->engine.retire();
      it = targets.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [url, w] : wanted) {
    auto& target = targets[url];
    if (!target) {
      target = std::make_shared<Target>(clock, ScrapeTiming::for_interval(w.interval));
      spdlog::info("engine metrics: scraping {}/metrics every {} ms", url, w.interval.count());
    }
    update(*target, w, snapshot->metrics());
  }
}

milliseconds EngineScraper::Impl::tick() const {
  Clock::Duration shortest = kMaxTick;
  for (const auto& [url, target] : targets) {
    shortest = std::min(shortest, target->engine.timing().interval);
  }
  return std::chrono::duration_cast<milliseconds>(shortest);
}

Task<void> EngineScraper::Impl::run() {
  asio::steady_timer timer(io);
  for (;;) {
    refresh();
    for (const auto& [url, target] : targets) {
      if (target->engine.check_stale()) {
        spdlog::warn(
            "engine metrics: {}: no good scrape for {} ms; falling back to local in-flight", url,
            std::chrono::duration_cast<milliseconds>(target->engine.timing().stale_after).count());
      }
      if (target->engine.due()) {
        target->engine.begin();  // here, not in the coroutine: it is due no more from now on
        asio::co_spawn(io, scrape(target), asio::detached);
      }
    }
    timer.expires_after(tick());
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
  }
}

Task<void> EngineScraper::Impl::scrape(std::shared_ptr<Target> target) {
  ScrapedEngine& engine = target->engine;
  const auto timeout = std::chrono::duration_cast<milliseconds>(engine.timing().timeout);
  const MetricsText text = co_await fetch_metrics(target->endpoint, target->instance_id, tls,
                                                  timeout, [&] { engine.sending(); });
  const tl::expected<EngineSample, std::string> sample = sample_of(text);
  for (const auto& instruments : target->instruments) {
    Metrics::count_engine_scrape(instruments, sample.has_value(),
                                 sample ? sample->gpu_cache_usage : std::nullopt);
  }
  const std::string& url = target->endpoint.base_url;
  if (sample && engine.succeed(*sample)) {
    spdlog::info("engine metrics: {}: reading the engine's load ({} running, {} waiting)", url,
                 sample->running, sample->waiting);
  } else if (!sample && engine.fail()) {
    spdlog::warn("engine metrics: {}/metrics: {}; falling back to local in-flight", url,
                 sample.error());
  }
}

void EngineScraper::Impl::retire_all() {
  for (auto& [url, target] : targets) target->engine.retire();
  targets.clear();
  seen.reset();
}

EngineScraper::EngineScraper(SnapshotStore& store, const Clock& clock)
    : impl_(std::make_unique<Impl>(store, clock)) {}

EngineScraper::~EngineScraper() { stop(); }

void EngineScraper::start() {
  asio::co_spawn(impl_->io, impl_->run(), asio::detached);
  thread_ = std::thread([impl = impl_.get()] { impl->io.run(); });
}

void EngineScraper::stop() {
  if (!thread_.joinable()) return;
  impl_->io.stop();
  thread_.join();
  impl_->retire_all();
}

}  // namespace rolter
