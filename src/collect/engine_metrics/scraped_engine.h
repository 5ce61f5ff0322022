// ScrapedEngine: one engine's load as its /metrics reports it (SPEC §6.15), the I/O-free part of
// the engine scraper (engine_scraper.h): reading a /metrics body, the timing that follows from a
// scrape interval, and what each scrape's outcome, or its absence, does to the load signals of
// the instances the engine serves. Driven by an injected clock on a PollSchedule
// (collect/loop/), so its tests step time by hand.
//
// Thread-safety: ScrapedEngine is used by one thread (the scraper's); it writes the LoadSignals
// atomics that workers read.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "balance/loads.h"
#include "collect/loop/poll_schedule.h"
#include "common/clock.h"

namespace rolter {

// The two series a scrape needs (their sum is the engine's load).
inline constexpr std::string_view kEngineRunningMetric = "vllm:num_requests_running";
inline constexpr std::string_view kEngineWaitingMetric = "vllm:num_requests_waiting";

// What one scrape read from an engine.
struct EngineSample {
  double running = 0;
  double waiting = 0;
  std::optional<double> gpu_cache_usage;  // 0..1; absent when the engine does not export it
  // The engine's prefix-cache counters (vllm:prefix_cache_queries_total, _hits_total: prompt
  // tokens looked up, and found); absent unless it exports both.
  std::optional<double> prefix_cache_queries;
  std::optional<double> prefix_cache_hits;

  // running + waiting, rounded to the nearest request and clamped to [0, UINT32_MAX].
  uint32_t load() const;
};

// Reads an engine's /metrics body: every series of each metric summed. nullopt when running or
// waiting is missing, unreadable or not finite. vLLM 0.10 renamed the cache gauge to
// vllm:kv_cache_usage_perc; either is read.
std::optional<EngineSample> read_engine_sample(std::string_view metrics_text);

// What an engine's counter gained between two good scrapes: 0 when either reading is missing, the
// whole reading when it went down (the engine restarted).
double counter_increase(std::optional<double> before, std::optional<double> now);

// A scrape's timeout and staleness bound from its interval (the table above).
PollTiming scrape_timing(std::chrono::milliseconds interval);

// One scraped engine: when its next scrape is due, and what each outcome does to the load
// signals of the instances it serves.
//
//   ScrapedEngine engine(clock, scrape_timing(250ms));
//   engine.set_instances(signals);               // each tick, from the current snapshot
//   engine.check_stale();
//   if (engine.due()) {
//     engine.begin();
//     ...connect...; engine.sending(); ...request, response...
//     if (sample) engine.succeed(*sample); else engine.fail();
//   }
class ScrapedEngine {
 public:
  ScrapedEngine(const Clock& clock, PollTiming timing) : schedule_(clock, timing) {}
  ~ScrapedEngine() { retire(); }
  ScrapedEngine(const ScrapedEngine&) = delete;
  ScrapedEngine& operator=(const ScrapedEngine&) = delete;

  const PollTiming& timing() const { return schedule_.timing(); }
  void set_timing(PollTiming timing) { schedule_.set_timing(timing); }

  // The instances this engine serves, as the current snapshot names them. One no longer named
  // loses engine_fresh at once: the engine's count says nothing about where it points now.
  // REQUIRES: every signal outlives this object or its next set_instances() (the LoadTracker
  // keeps them for the process's life).
  void set_instances(std::vector<LoadSignals*> instances);
  size_t instance_count() const { return instances_.size(); }

  // True when no scrape is in flight and `interval` has passed since the last one began.
  bool due() const { return schedule_.due(); }
  // A scrape begins (before its connect).
  void begin();
  // Its request is about to be written: each instance's sent_total now is what the engine's
  // count will already include.
  void sending();
  // The outcome of the scrape begun last; ignored after retire(). Each returns true when it starts
  // a new run (the first good scrape after none or after a failure; the first failure after a
  // good scrape or at start), so the caller logs each change once.
  bool succeed(const EngineSample& sample);
  bool fail();
  // Clears engine_fresh when no scrape succeeded within stale_after. Returns true when it did.
  bool check_stale();
  // Clears engine_fresh on every instance and forgets them; later outcomes change nothing.
  void retire();

  bool fresh() const { return schedule_.fresh(); }
  const std::optional<EngineSample>& last_sample() const { return last_sample_; }

 private:
  void clear_all();
  bool named(const LoadSignals* signals) const;

  PollSchedule schedule_;
  std::vector<LoadSignals*> instances_;
  // The instances a scrape's request went out for, with their sent_total at that moment.
  std::vector<std::pair<LoadSignals*, uint64_t>> pending_;
  std::optional<EngineSample> last_sample_;
};

}  // namespace rolter
