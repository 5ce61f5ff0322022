// UsageFlusher: moves a node's usage ledger (usage/usage_ledger.h) to the store every interval
// (SPEC §15: `usage.flush_secs`, default 10) and once more at stop, so the store receives at most
// one write per node per interval and never one per request.
//
// Each flush drains the ledger, merges in the rows a failed flush kept, and hands the batch to a
// sink: `rolter serve` writes it to its own store (Store::add_usage); a `rolter gateway` node
// posts it to the control plane (usage_post_sink.h). A sink that fails leaves the batch with the
// flusher, to be retried with the next one; past `max_pending_rows` the oldest hours' rows are
// dropped and counted.
//
//   UsageFlusher flusher(ledger, [store](std::vector<UsageRow>&& rows) {
//     return store->add_usage(rows).has_value();
//   }, {.interval = std::chrono::seconds(10)});
//   flusher.start();
//   ...
//   flusher.stop();  // the final flush
//
// Thread-safety: start() and stop() from one thread (the owner's). flush() and the counters from
// any thread; flushes never overlap. The sink runs on the flusher's thread, or on the thread
// calling flush() or stop(); it may block (a post has its own deadline).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "usage/usage_json.h"
#include "usage/usage_ledger.h"

namespace rolter {

class UsageFlusher {
 public:
  // Takes a batch; returns true once it is stored. On false it must leave `rows` as it got them
  // (not moved from): the flusher keeps them for the next flush.
  using Sink = std::function<bool(std::vector<UsageRow>&& rows)>;

  struct Options {
    std::chrono::milliseconds interval{10'000};
    // Rows kept across failed flushes: one batch, as the control plane takes it.
    size_t max_pending_rows = kMaxUsageRows;
  };

  // `ledger` must outlive the flusher.
  UsageFlusher(UsageLedger& ledger, Sink sink, Options options);
  // Stops (with the final flush) if still running.
  ~UsageFlusher();
  UsageFlusher(const UsageFlusher&) = delete;
  UsageFlusher& operator=(const UsageFlusher&) = delete;

  // Starts the thread; the first flush is one interval after the start. Once.
  void start();
  // Stops the thread (waiting for a flush in progress), then flushes once more on this thread.
  // Idempotent: later calls only flush.
  void stop();

  // Flushes now: true when there was nothing to write or the sink took it.
  bool flush();

  uint64_t flushes_ok() const;      // batches the sink took
  uint64_t flushes_failed() const;  // batches it refused (kept for the next flush)
  uint64_t rows_dropped() const;    // rows given up past max_pending_rows
  size_t rows_pending() const;      // rows kept from a failed flush

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rolter
