#include "collect/engine_metrics/scraped_engine.h"

#include <algorithm>
#include <cmath>

#include "collect/engine_metrics/prometheus_text.h"

namespace rolter {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view kGpuCacheUsage = "vllm:gpu_cache_usage_perc";
constexpr std::string_view kKvCacheUsage = "vllm:kv_cache_usage_perc";  // its name since vLLM 0.10
constexpr std::string_view kPrefixCacheQueries = "vllm:prefix_cache_queries_total";
constexpr std::string_view kPrefixCacheHits = "vllm:prefix_cache_hits_total";

// A scrape must end before the next is due, but a loopback engine answers in about a millisecond:
// 50 ms keeps a tiny interval from failing every scrape, 1 s keeps a long one from hiding a dead
// engine behind a long wait.
constexpr milliseconds kMinScrapeTimeout{50};
constexpr milliseconds kMaxScrapeTimeout{1000};
// Two scrapes in a row lost: one late answer is jitter, two are an engine that stopped answering.
constexpr int kStaleIntervals = 3;

}  // namespace

uint32_t EngineSample::load() const {
  const double total = std::round(running + waiting);
  if (!(total > 0)) return 0;  // also NaN, though read_engine_sample() lets none through
  if (total >= static_cast<double>(UINT32_MAX)) return UINT32_MAX;
  return static_cast<uint32_t>(total);
}

std::optional<EngineSample> read_engine_sample(std::string_view metrics_text) {
  const auto running = sum_samples(metrics_text, kEngineRunningMetric);
  const auto waiting = sum_samples(metrics_text, kEngineWaitingMetric);
  if (!running || !waiting || !std::isfinite(*running) || !std::isfinite(*waiting)) {
    return std::nullopt;
  }
  EngineSample sample{.running = *running, .waiting = *waiting};
  auto cache = sum_samples(metrics_text, kGpuCacheUsage);
  if (!cache) cache = sum_samples(metrics_text, kKvCacheUsage);
  if (cache && std::isfinite(*cache)) sample.gpu_cache_usage = *cache;
  const auto queries = sum_samples(metrics_text, kPrefixCacheQueries);
  const auto hits = sum_samples(metrics_text, kPrefixCacheHits);
  if (queries && hits && std::isfinite(*queries) && std::isfinite(*hits)) {
    sample.prefix_cache_queries = *queries;
    sample.prefix_cache_hits = *hits;
  }
  return sample;
}

double counter_increase(std::optional<double> before, std::optional<double> now) {
  if (!before || !now || *now < 0) return 0;
  // Lower than before: the engine restarted and counts from zero again.
  return *now >= *before ? *now - *before : *now;
}

PollTiming scrape_timing(milliseconds interval) {
  const milliseconds timeout = std::clamp(interval, kMinScrapeTimeout, kMaxScrapeTimeout);
  return PollTiming{
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

void ScrapedEngine::begin() {
  schedule_.begin();
  pending_.clear();
}

void ScrapedEngine::sending() {
  pending_.clear();
  for (LoadSignals* signals : instances_) {
    pending_.emplace_back(signals, signals->sent_total.load(std::memory_order_relaxed));
  }
}

bool ScrapedEngine::succeed(const EngineSample& sample) {
  if (!schedule_.in_flight()) return false;  // retired while the scrape ran
  last_sample_ = sample;
  const uint32_t load = sample.load();
  const uint32_t waiting = EngineSample{.waiting = sample.waiting}.load();
  const uint16_t kv_permille =
      sample.gpu_cache_usage
          ? static_cast<uint16_t>(std::lround(std::clamp(*sample.gpu_cache_usage, 0.0, 1.0) * 1000))
          : LoadSignals::kNoKvUsage;
  for (const auto& [signals, sent] : pending_) {
    // An instance that left while the scrape ran keeps the cleared flag set_instances() gave it.
    if (!named(signals)) continue;
    signals->engine_load.store(load, std::memory_order_relaxed);
    signals->engine_waiting.store(waiting, std::memory_order_relaxed);
    signals->engine_kv_permille.store(kv_permille, std::memory_order_relaxed);
    signals->sent_at_scrape.store(sent, std::memory_order_relaxed);
    signals->engine_fresh.store(true, std::memory_order_relaxed);
  }
  pending_.clear();
  return schedule_.succeed();
}

bool ScrapedEngine::fail() {
  if (!schedule_.in_flight()) return false;
  pending_.clear();
  clear_all();
  return schedule_.fail();
}

bool ScrapedEngine::check_stale() {
  if (!schedule_.check_stale()) return false;
  clear_all();
  return true;
}

void ScrapedEngine::retire() {
  clear_all();
  instances_.clear();
  pending_.clear();
  schedule_.retire();
}

void ScrapedEngine::clear_all() {
  for (LoadSignals* signals : instances_) {
    signals->engine_fresh.store(false, std::memory_order_relaxed);
  }
}

bool ScrapedEngine::named(const LoadSignals* signals) const {
  return std::find(instances_.begin(), instances_.end(), signals) != instances_.end();
}

}  // namespace rolter
