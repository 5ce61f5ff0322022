// SpanBatcher: the exporter's decisions, without I/O (SPEC §17): spans leave the queue in batches
// of at most `max_batch` (512), a batch goes when that many wait or `interval` (1 s) after the
// last one went, and each batch's fate is counted. The background service (collect/trace_export/)
// calls next() on every turn of its loop and posts what it returns; tests drive it with a
// ManualClock and no network.
//
//   SpanBatcher batcher(queue, resource, clock, {});
//   if (auto batch = batcher.next()) batcher.sent(*batch, post(batch->body));
//
// Spans wait in the queue until their batch goes, so `[tracing] max_queue` bounds them all; only
// the batch being sent is held outside it. A batch that fails is not retried: its spans are
// counted as failed and dropped, so a dead collector never grows memory, the queue fills and
// further spans are dropped (and counted) at the push, and the next batch carries fresh spans.
//
// Thread-safety: next(), sent() and discard() from one thread (the exporter's); the counters
// from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "trace/otlp_encoder.h"
#include "trace/span_queue.h"

namespace rolter {

class SpanBatcher {
 public:
  struct Options {
    size_t max_batch = 512;
    std::chrono::milliseconds interval{1000};
  };
  // An encoded ExportTraceServiceRequest and how many spans it carries.
  struct Batch {
    std::string body;
    size_t spans = 0;
  };

  // `queue` and `clock` must outlive the batcher.
  SpanBatcher(SpanQueue& queue, TraceResource resource, const Clock& clock, Options options);

  // The next batch, encoded, of up to max_batch spans taken from the queue: when max_batch spans
  // wait, when `interval` has passed since the last batch went (or since the start) and a span
  // waits, or with `flush` whenever one waits. Otherwise nullopt, and the spans stay queued.
  std::optional<Batch> next(bool flush = false);
  // Counts what became of a batch next() returned: its spans exported, or failed.
  void sent(const Batch& batch, bool ok);
  // Drops every span waiting as failed (no collector to send to).
  void discard();

  uint64_t exported_spans() const { return exported_.load(std::memory_order_relaxed); }
  uint64_t failed_spans() const { return failed_spans_.load(std::memory_order_relaxed); }
  uint64_t failed_exports() const { return failed_exports_.load(std::memory_order_relaxed); }
  // Spans the queue refused because it was full.
  uint64_t dropped_spans() const { return queue_.dropped(); }

 private:
  SpanQueue& queue_;
  const TraceResource resource_;
  const Clock& clock_;
  const Options options_;
  std::vector<Span> batch_;  // the batch being encoded; empty between calls
  Clock::TimePoint last_batch_;
  std::atomic<uint64_t> exported_{0};
  std::atomic<uint64_t> failed_spans_{0};
  std::atomic<uint64_t> failed_exports_{0};
};

}  // namespace rolter
