#include "observe/queue_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>

namespace rolter {
namespace {

// Seconds: a dispatch within a slot's turnover (milliseconds) up to the default max wait (30 s).
const prometheus::Histogram::BucketBoundaries& wait_buckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  return kBuckets;
}

std::string band_label(uint8_t band) { return std::to_string(band); }

}  // namespace

QueueMetrics::QueueMetrics(prometheus::Registry& registry)
    : depth_(&prometheus::BuildGauge()
                  .Name("rolter_queue_depth")
                  .Help("Requests waiting in a route's queue, per priority band")
                  .Register(registry)),
      wait_(&prometheus::BuildHistogram()
                 .Name("rolter_queue_wait_seconds")
                 .Help("Time a dispatched request waited in its route's queue")
                 .Register(registry)),
      shed_(&prometheus::BuildCounter()
                 .Name("rolter_shed_total")
                 .Help("Requests the queue refused, by band and reason")
                 .Register(registry)),
      dispatches_(&prometheus::BuildCounter()
                       .Name("rolter_queue_dispatches_total")
                       .Help("Requests dispatched from a route's queue, per tenant")
                       .Register(registry)) {}

void QueueMetrics::set_depth(std::string_view route, uint8_t band, double depth) {
  depth_->Add({{"route", std::string(route)}, {"band", band_label(band)}}).Set(depth);
}

void QueueMetrics::observe_wait(std::string_view route, double seconds) {
  wait_->Add({{"route", std::string(route)}}, wait_buckets()).Observe(seconds);
}

void QueueMetrics::count_shed(std::string_view route, uint8_t band, std::string_view reason) {
  shed_->Add({{"route", std::string(route)}, {"band", band_label(band)},
              {"reason", std::string(reason)}})
      .Increment();
}

void QueueMetrics::count_dispatch(std::string_view route, std::string_view tenant) {
  dispatches_->Add({{"route", std::string(route)}, {"tenant", std::string(tenant)}}).Increment();
}

}  // namespace rolter
