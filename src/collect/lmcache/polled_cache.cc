#include "collect/lmcache/polled_cache.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace rolter {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A poll must end before the next is due; a loopback or in-cluster endpoint answers in
// milliseconds, and 1 s keeps a long refresh from hiding a dead endpoint behind a long wait.
constexpr milliseconds kMaxPollTimeout{1000};

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

PollTiming lmcache_poll_timing(uint32_t refresh_secs, uint32_t stale_secs) {
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

bool PolledCache::succeed(const LmcacheReading& reading) {
  if (!schedule_.in_flight()) return false;  // retired while the poll ran
  last_reading_ = reading;
  // The reading describes the endpoint, not a moment of one instance: it applies to every
  // instance named now, including one that joined while the poll ran.
  for (LmcacheSignal* signal : instances_) {
    signal->occupancy.store(reading.occupancy, std::memory_order_relaxed);
    signal->available.store(reading.cache_available, std::memory_order_relaxed);
    signal->fresh.store(true, std::memory_order_relaxed);
  }
  return schedule_.succeed();
}

bool PolledCache::fail() {
  if (!schedule_.in_flight()) return false;
  clear_all();
  return schedule_.fail();
}

bool PolledCache::check_stale() {
  if (!schedule_.check_stale()) return false;
  clear_all();
  return true;
}

void PolledCache::retire() {
  clear_all();
  instances_.clear();
  schedule_.retire();
}

void PolledCache::clear_all() {
  for (LmcacheSignal* signal : instances_) signal->fresh.store(false, std::memory_order_relaxed);
}

}  // namespace rolter
