// TraceExporter: sends the spans of recorded requests to an OTLP collector (SPEC §17, `[tracing]
// otlp_endpoint`), on a thread of its own (collect/loop/background_loop.h), so that a slow or
// dead collector never holds a request: the request path only pushes finished spans into the
// bounded SpanQueue, and this loop takes them out.
//
// Every `poll` the loop moves what waits into the current batch (trace/span_batcher.h); a batch
// goes when it holds 512 spans or a second after the last one, as one OTLP/HTTP protobuf POST
// (`application/x-protobuf`) within `timeout`. A failed batch is dropped and counted, never
// retried. The endpoint follows the published config (a reload may change or remove it; without
// one, waiting spans are discarded). The series are in collect/trace_export/tracing_metrics.h.
//
//   TraceExporter exporter(store, queue, &metrics, {.service_version = "0.1.0"});
//   exporter.start();
//   ...
//   exporter.stop();  // one last flush of what waits, within `timeout`
//
// Thread-safety: start() and stop() from one thread (the owner's); the counters from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "snapshot/snapshot_store.h"
#include "trace/otlp_encoder.h"
#include "trace/span_batcher.h"
#include "trace/span_queue.h"

namespace rolter {

class Metrics;

class TraceExporter {
 public:
  struct Options {
    // How often the queue is looked at: well under the 1 s batch interval, so a full batch of
    // 512 leaves soon after it fills.
    std::chrono::milliseconds poll{50};
    // One export, from connecting to the collector's answer.
    std::chrono::milliseconds timeout{2000};
    SpanBatcher::Options batching;
  };

  // `store` and `queue` must outlive the exporter; `metrics` may be null.
  TraceExporter(const SnapshotStore& store, SpanQueue& queue, Metrics* metrics,
                TraceResource resource, Options options);
  TraceExporter(const SnapshotStore& store, SpanQueue& queue, Metrics* metrics,
                TraceResource resource);
  ~TraceExporter();
  TraceExporter(const TraceExporter&) = delete;
  TraceExporter& operator=(const TraceExporter&) = delete;

  void start();
  // Stops the thread, then sends what still waits once, within `timeout`. Idempotent.
  void stop();

  uint64_t exported_spans() const;
  uint64_t failed_exports() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The URL spans are posted to: `otlp_endpoint` as written, or with /v1/traces when it names no
// path (OTLP/HTTP's default).
std::string otlp_traces_url(std::string_view otlp_endpoint);

}  // namespace rolter
