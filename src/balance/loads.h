// Loads: a read-only view of each candidate's current load on this node.
//
// The signals live in the LoadTracker (fleet/load_tracker.h) and are updated by workers and the
// engine-metrics scraper with relaxed atomics; a Loads view reads them on demand, so building one
// costs no allocation and no lock. Values may change between two reads of the same index:
// strategies read each once per pick when they need a consistent value.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

namespace rolter {

using InFlightCounter = std::atomic<uint32_t>;

// One instance's load signals (SPEC §5, §6.15).
//
// `in_flight` is what this gateway has outstanding on the instance. When the provider sets
// load_source = "engine_metrics", a background scrape stores the engine's own running + waiting
// count; while that scrape is fresh the load is that count plus what this gateway has sent since
// the scrape began (sent_total - sent_at_scrape), so several gateways, and traffic from outside
// the gateway, see one true load. A failed or stale scrape clears engine_fresh and the load falls
// back to local in-flight. The three engine fields may be read torn across one scrape; the worst
// case is one pick on a load one scrape old.
struct LoadSignals {
  InFlightCounter in_flight{0};
  std::atomic<uint64_t> sent_total{0};  // requests this gateway has sent the instance, ever
  std::atomic<bool> engine_fresh{false};
  std::atomic<uint32_t> engine_load{0};     // running + waiting at the last good scrape
  std::atomic<uint32_t> engine_waiting{0};  // of which waiting (flow control's saturation)
  std::atomic<uint64_t> sent_at_scrape{0};  // sent_total when that scrape was sent
  // Prompt tokens this gateway has sent the instance that it has not yet prefilled: each
  // request's uncached tokens (what the instance's KV index did not hold), from when it is sent
  // until its first token arrives. The prefill work queued there, which delays the next request's
  // first token more exactly than a count of requests, most of which may be decoding (kv_cost).
  std::atomic<uint64_t> prefill_tokens{0};
  // The engine's KV-cache usage at the last good scrape, in thousandths (vLLM's
  // kv_cache_usage_perc); kNoKvUsage when the engine exports none. Read only while engine_fresh.
  static constexpr uint16_t kNoKvUsage = 0xFFFF;
  std::atomic<uint16_t> engine_kv_permille{kNoKvUsage};

  // The load strategies compare.
  uint32_t current() const {
    if (!engine_fresh.load(std::memory_order_relaxed)) {
      return in_flight.load(std::memory_order_relaxed);
    }
    const uint64_t sent = sent_total.load(std::memory_order_relaxed);
    const uint64_t base = sent_at_scrape.load(std::memory_order_relaxed);
    const uint64_t since = sent > base ? sent - base : 0;
    const uint64_t total = engine_load.load(std::memory_order_relaxed) + since;
    return total > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(total);
  }
};

class Loads {
 public:
  Loads() = default;
  // signals[i] is candidate i's signals. The span and the signals must outlive this view.
  explicit Loads(std::span<const LoadSignals* const> signals) : signals_(signals) {}

  size_t size() const { return signals_.size(); }
  uint32_t operator[](size_t i) const { return signals_[i]->current(); }
  // Candidate i's queued prefill work, in thousands of tokens (LoadSignals::prefill_tokens).
  double prefill_ktokens(size_t i) const {
    return static_cast<double>(signals_[i]->prefill_tokens.load(std::memory_order_relaxed)) / 1000;
  }
  // Candidate i's engine-reported KV-cache usage in [0, 1], or a negative value when unknown (no
  // fresh scrape, or an engine that exports none).
  double kv_usage(size_t i) const {
    const LoadSignals& s = *signals_[i];
    if (!s.engine_fresh.load(std::memory_order_relaxed)) return -1;
    const uint16_t permille = s.engine_kv_permille.load(std::memory_order_relaxed);
    return permille == LoadSignals::kNoKvUsage ? -1 : static_cast<double>(permille) / 1000;
  }

 private:
  std::span<const LoadSignals* const> signals_;
};

}  // namespace rolter
