#include "collect/trace_export/tracing_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "observe/metrics.h"
#include "trace/span_batcher.h"

namespace rolter {
namespace {

// Adds what `now` gained since `seen` to `counter`.
void advance(prometheus::Counter* counter, uint64_t now, uint64_t& seen) {
  if (counter != nullptr && now > seen) counter->Increment(static_cast<double>(now - seen));
  seen = now;
}

}  // namespace

TracingMetrics TracingMetrics::registered(Metrics& metrics) {
  auto& registry = metrics.registry();
  TracingMetrics out;
  out.exported_ = &prometheus::BuildCounter()
                       .Name("rolter_tracing_spans_exported_total")
                       .Help("Spans an OTLP collector accepted")
                       .Register(registry)
                       .Add({});
  auto& dropped = prometheus::BuildCounter()
                      .Name("rolter_tracing_spans_dropped_total")
                      .Help(
                          "Spans lost: the export queue was full (queue_full), or their batch "
                          "failed (export_failed)")
                      .Register(registry);
  out.dropped_queue_full_ = &dropped.Add({{"reason", "queue_full"}});
  out.dropped_export_failed_ = &dropped.Add({{"reason", "export_failed"}});
  out.export_failures_ = &prometheus::BuildCounter()
                              .Name("rolter_tracing_export_failures_total")
                              .Help("Export requests to the OTLP collector that failed")
                              .Register(registry)
                              .Add({});
  return out;
}

void TracingMetrics::sync(const SpanBatcher& batcher) {
  advance(exported_, batcher.exported_spans(), seen_exported_);
  advance(dropped_queue_full_, batcher.dropped_spans(), seen_queue_full_);
  advance(dropped_export_failed_, batcher.failed_spans(), seen_export_failed_);
  advance(export_failures_, batcher.failed_exports(), seen_failures_);
}

}  // namespace rolter
