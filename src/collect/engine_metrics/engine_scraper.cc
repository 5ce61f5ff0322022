#include "collect/engine_metrics/engine_scraper.h"

#include <spdlog/spdlog.h>
#include <tl/expected.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "collect/loop/background_loop.h"
#include "collect/loop/poll_loop.h"
#include "snapshot/snapshot_store.h"
#include "upstream/one_shot.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

namespace http = beast::http;
using std::chrono::milliseconds;

constexpr std::string_view kEngineMetrics = "engine_metrics";

// How often the loop looks at the snapshot when no engine asks for more: a reload that adds an
// engine_metrics provider is noticed within one default interval.
constexpr milliseconds kMaxTick{250};
// vLLM's /metrics with histograms for many models and adapters runs to a few hundred KiB.
constexpr size_t kMaxMetricsBytes = 4 * 1024 * 1024;

// The sample a scrape's answer holds, or why there is none.
tl::expected<EngineSample, std::string> sample_of(const OneShotResult& answer) {
  if (!answer) return tl::unexpected(answer.error().message);
  if (answer->result() != http::status::ok) return tl::unexpected(status_text(*answer));
  if (auto sample = read_engine_sample(answer->body())) return *sample;
  return tl::unexpected("no readable " + std::string(kEngineRunningMetric) + " and " +
                        std::string(kEngineWaitingMetric));
}

}  // namespace

// What to scrape, for the PollLoop: one target per engine (base_url).
struct EngineScraper::Impl {
  struct Target {
    Target(const Clock& clock, PollTiming timing) : engine(clock, timing) {}
    ScrapedEngine& polled() { return engine; }
    ScrapedEngine engine;
    Endpoint endpoint;  // a copy: a scrape may outlive the snapshot it came from
    uint32_t instance_id = 0;
    std::vector<Metrics::EngineInstruments> instruments;  // one per instance
    SeriesLease series;                                   // what `instruments` point to
  };
  // What the current snapshot asks of one engine.
  struct Wanted {
    const Endpoint* endpoint = nullptr;
    milliseconds interval = milliseconds::max();  // the shortest of the providers naming it
    std::vector<InstanceState*> states;
  };

  Impl(SnapshotStore& store, const Clock& c)
      : clock(c), loop(store, *this, kMaxTick) {}

  std::map<std::string, Wanted> wanted(const Snapshot& snapshot) const;
  std::shared_ptr<Target> make(const std::string& url, const Wanted& w) const;
  void update(Target& target, const Wanted& wanted, const Snapshot& snapshot) const;
  void forget(const std::string& url, Target&) const;
  void stale(const std::string& url, Target& target) const;
  Task<void> poll(std::shared_ptr<Target> target);

  const Clock& clock;
  ClientTls tls;  // the process's, made at the first https:// connection
  PollLoop<Impl> loop;
  BackgroundLoop background;  // last: its pending scrapes go before what they use
};

std::map<std::string, EngineScraper::Impl::Wanted> EngineScraper::Impl::wanted(
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

std::shared_ptr<EngineScraper::Impl::Target> EngineScraper::Impl::make(const std::string& url,
                                                                       const Wanted& w) const {
  spdlog::info("engine metrics: scraping {}/metrics every {} ms", url, w.interval.count());
  return std::make_shared<Target>(clock, scrape_timing(w.interval));
}

void EngineScraper::Impl::update(Target& target, const Wanted& wanted,
                                 const Snapshot& snapshot) const {
  target.engine.set_timing(scrape_timing(wanted.interval));
  target.endpoint = *wanted.endpoint;
  target.instance_id = wanted.states.front()->id;
  std::vector<LoadSignals*> signals;
  std::vector<Metrics::EngineInstruments> instruments;
  SeriesLease series;
  for (InstanceState* state : wanted.states) {
    signals.push_back(&state->load);
    if (Metrics* metrics = snapshot.metrics()) {
      instruments.push_back(metrics->engine(state->identity, series));
    }
  }
  target.instruments = std::move(instruments);
  // The new lease holds what stays before the old one lets go: only a series of an instance no
  // longer scraped leaves /metrics.
  target.series = std::move(series);
  target.engine.set_instances(std::move(signals));
}

void EngineScraper::Impl::forget(const std::string& url, Target&) const {
  spdlog::info("engine metrics: no longer scraping {}", url);
}

void EngineScraper::Impl::stale(const std::string& url, Target& target) const {
  spdlog::warn("engine metrics: {}: no good scrape for {} ms; falling back to local in-flight",
               url,
               std::chrono::duration_cast<milliseconds>(target.engine.timing().stale_after).count());
}

Task<void> EngineScraper::Impl::poll(std::shared_ptr<Target> target) {
  ScrapedEngine& engine = target->engine;
  OneShotRequest request =
      one_shot_request(http::verb::get, target->endpoint, "/metrics", "rolter-engine-metrics");
  // The classic text format: an engine that negotiates may otherwise answer in OpenMetrics.
  request.set(http::field::accept, "text/plain; version=0.0.4");
  const OneShotLimits limits{
      .timeout = std::chrono::duration_cast<milliseconds>(engine.timing().timeout),
      .max_body_bytes = kMaxMetricsBytes};
  // Each instance's sent_total at the moment the request goes out is what the engine's count
  // will already include.
  const auto sending = [&] { engine.sending(); };
  const OneShotResult answer = co_await one_shot(target->endpoint, target->instance_id, tls,
                                                 std::move(request), limits, sending);
  const tl::expected<EngineSample, std::string> sample = sample_of(answer);
  Metrics::EngineScrape scrape{.ok = sample.has_value()};
  if (sample) {
    const std::optional<EngineSample>& before = engine.last_sample();
    scrape.gpu_cache_usage = sample->gpu_cache_usage;
    if (before) {
      scrape.prefix_cache_queries =
          counter_increase(before->prefix_cache_queries, sample->prefix_cache_queries);
      scrape.prefix_cache_hits =
          counter_increase(before->prefix_cache_hits, sample->prefix_cache_hits);
    }
  }
  for (const auto& instruments : target->instruments) {
    Metrics::count_engine_scrape(instruments, scrape);
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

EngineScraper::EngineScraper(SnapshotStore& store, const Clock& clock)
    : impl_(std::make_unique<Impl>(store, clock)) {}

EngineScraper::~EngineScraper() { stop(); }

void EngineScraper::start() {
  impl_->background.start([impl = impl_.get()] { return impl->loop.run(impl->background.io()); });
}

void EngineScraper::stop() {
  if (!impl_->background.running()) return;
  impl_->background.stop();
  impl_->loop.retire_all();
}

}  // namespace rolter
