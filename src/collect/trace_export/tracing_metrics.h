// The exporter's Prometheus series (SPEC §17), registered beside the others in Metrics' registry:
//   rolter_tracing_spans_exported_total          spans a collector accepted
//   rolter_tracing_spans_dropped_total{reason}   spans lost: queue_full (the request path found
//                                                [tracing] max_queue spans waiting) or
//                                                export_failed (their batch was refused or timed
//                                                out, or no endpoint was left to send it to)
//   rolter_tracing_export_failures_total         export requests that failed (connect, timeout,
//                                                a non-2xx answer)
//
//   TracingMetrics metrics = TracingMetrics::registered(gateway_metrics);  // once, at start-up
//   metrics.sync(batcher);  // the exporter's thread, after each turn
//
// Thread-safety: registered() once; sync() from one thread (the exporter's). A default-constructed
// value counts nothing.
#pragma once

#include <cstdint>

namespace prometheus {
class Counter;
}  // namespace prometheus

namespace rolter {

class Metrics;
class SpanBatcher;

class TracingMetrics {
 public:
  TracingMetrics() = default;
  // Adds the families to the metrics' registry, every series at 0.
  static TracingMetrics registered(Metrics& metrics);

  // Brings the series up to the batcher's counts (counters only grow).
  void sync(const SpanBatcher& batcher);

 private:
  prometheus::Counter* exported_ = nullptr;
  prometheus::Counter* dropped_queue_full_ = nullptr;
  prometheus::Counter* dropped_export_failed_ = nullptr;
  prometheus::Counter* export_failures_ = nullptr;
  uint64_t seen_exported_ = 0;
  uint64_t seen_queue_full_ = 0;
  uint64_t seen_export_failed_ = 0;
  uint64_t seen_failures_ = 0;
};

}  // namespace rolter
