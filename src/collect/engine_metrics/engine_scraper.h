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
// The pieces: scraped_engine.h reads a /metrics body and holds the pure decision logic for one
// engine (what an outcome or its absence does to the signals), driven by an injected clock;
// EngineScraper is a PollLoop policy on a BackgroundLoop, and one_shot() (upstream/) does each
// scrape's I/O. Each tick the loop reads the
// current snapshot: only instances it names are scraped, and an instance that leaves stops being
// scraped and loses engine_fresh. An engine (base_url) named by several providers or routes is
// scraped once, and the result applied to each instance.
//
// Thread-safety: start() and stop() from one thread.
#pragma once

#include <memory>

#include "collect/engine_metrics/scraped_engine.h"
#include "common/clock.h"

namespace rolter {

class SnapshotStore;

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
