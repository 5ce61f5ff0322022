// EngineScraper: the engines' own load, read from their /metrics (SPEC §6.15, load_source =
// "engine_metrics"), so that several gateway nodes, and traffic that bypasses the gateway, see one
// true load.
//
// For every instance of a provider with load_source = "engine_metrics", a background thread sends
// `GET {base_url}/metrics` every metrics_interval_ms and reads vllm:num_requests_running and
// vllm:num_requests_waiting (and vllm:gpu_cache_usage_perc, for the metrics). A good scrape stores
// running + waiting in the instance's LoadSignals and marks it fresh; the load strategies then
// compare that plus what this gateway sent since the scrape (balance/loads.h). A failed scrape
// (connect error, timeout, non-200, a metric missing or unreadable) clears engine_fresh at once,
// and so does a stale one, so the load falls back to local in-flight.
//
// Timing per engine, from the interval I (scrape_timing()):
//   timeout       min(I, 1 s), at least 50 ms: one scrape ends before the next is due (a loopback
//                 engine answers in a millisecond; 50 ms keeps a tiny I from failing every scrape)
//   stale after   max(3 I, I + timeout) without a good scrape: two scrapes in a row were lost
// The timeout covers connect, request and response; a host name is resolved by the system
// resolver without it, and a scrape stuck there is caught by the stale bound instead. A scrape
// never overlaps the next: one still running when the next is due delays it.
//
// The pieces: read_engine_sample() reads a /metrics body; ScrapedEngine is the pure decision logic
// for one engine (what an outcome or its absence does to the signals) on a PollSchedule
// (collect/loop/), driven by an injected clock; EngineScraper is a PollLoop policy on a
// BackgroundLoop, and one_shot() (upstream/) does each scrape's I/O. Each tick the loop reads the
// current snapshot: only instances it names are scraped, and an instance that leaves stops being
// scraped and loses engine_fresh. An engine (base_url) named by several providers or routes is
// scraped once, and the result applied to each instance.
//
// Thread-safety: ScrapedEngine is used by one thread (the scraper's); it writes the LoadSignals
// atomics that workers read. EngineScraper: start() and stop() from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "balance/loads.h"
#include "collect/loop/poll_schedule.h"
#include "common/clock.h"

namespace rolter {

class SnapshotStore;

// What one scrape read from an engine.
struct EngineSample {
  double running = 0;
  double waiting = 0;
  std::optional<double> gpu_cache_usage;  // 0..1; absent when the engine does not export it

  // running + waiting, rounded to the nearest request and clamped to [0, UINT32_MAX].
  uint32_t load() const;
};

// Reads an engine's /metrics body: every series of each metric summed. nullopt when running or
// waiting is missing, unreadable or not finite. vLLM 0.10 renamed the cache gauge to
// vllm:kv_cache_usage_perc; either is read.
std::optional<EngineSample> read_engine_sample(std::string_view metrics_text);

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

class EngineScraper {
 public:
  // `store` and `clock` must outlive the scraper.
  explicit EngineScraper(SnapshotStore& store, const Clock& clock = default_clock());
  ~EngineScraper();
  EngineScraper(const EngineScraper&) = delete;
  EngineScraper& operator=(const EngineScraper&) = delete;

  // Starts the scraper's thread. The first tick reads the current snapshot at once.
  void start();
  // Stops the thread; every scraped instance loses engine_fresh. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rolter
