#include "observe/queue_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <utility>

#include "observe/series_table.h"

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

QueueMetrics::QueueMetrics(prometheus::Registry& registry, std::shared_ptr<SeriesTable> table)
    : table_(std::move(table)),
      depth_(&prometheus::BuildGauge()
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
                       .Register(registry)),
      preemptions_(&prometheus::BuildCounter()
                        .Name("rolter_queue_preemptions_total")
                        .Help("Dispatched requests displaced by a higher band's before their "
                              "answer began, by their band")
                        .Register(registry)) {}

std::shared_ptr<QueueSeries> QueueMetrics::series(std::string_view route) const {
  return std::make_shared<QueueSeries>(*this, std::string(route));
}

QueueSeries::QueueSeries(const QueueMetrics& families, std::string route)
    : families_(families), route_(std::move(route)) {}

void QueueSeries::adopt(const QueueSeries& earlier) {
  for (uint8_t b = 0; b < kBands; ++b) {
    if (earlier.depth_[b] != nullptr) depth(b);
    if (earlier.preemptions_[b] != nullptr) preemptions(b);
    for (size_t r = 0; r < kShedReasons.size(); ++r) {
      if (earlier.shed_[b][r] != nullptr) shed(b, r);
    }
  }
  if (earlier.wait_ != nullptr) wait();
  for (const auto& [tenant, counter] : earlier.dispatches_) dispatches(tenant);
}

void QueueSeries::set_depth(uint8_t band, double value) {
  if (band < kBands) depth(band).Set(value);
}

void QueueSeries::observe_wait(double seconds) { wait().Observe(seconds); }

void QueueSeries::count_shed(uint8_t band, std::string_view reason) {
  if (band >= kBands) return;
  for (size_t r = 0; r < kShedReasons.size(); ++r) {
    if (kShedReasons[r] == reason) shed(band, r).Increment();
  }
}

void QueueSeries::count_dispatch(std::string_view tenant) { dispatches(tenant).Increment(); }

void QueueSeries::count_preemption(uint8_t band) {
  if (band < kBands) preemptions(band).Increment();
}

prometheus::Counter& QueueSeries::preemptions(uint8_t band) {
  if (preemptions_[band] == nullptr) {
    preemptions_[band] = &families_.table_->lease(
        *families_.preemptions_, {{"route", route_}, {"band", band_label(band)}}, lease_);
  }
  return *preemptions_[band];
}

prometheus::Gauge& QueueSeries::depth(uint8_t band) {
  if (depth_[band] == nullptr) {
    depth_[band] = &families_.table_->lease(
        *families_.depth_, {{"route", route_}, {"band", band_label(band)}}, lease_);
  }
  return *depth_[band];
}

prometheus::Counter& QueueSeries::shed(uint8_t band, size_t reason) {
  if (shed_[band][reason] == nullptr) {
    shed_[band][reason] = &families_.table_->lease(
        *families_.shed_,
        {{"route", route_}, {"band", band_label(band)}, {"reason", std::string(kShedReasons[reason])}},
        lease_);
  }
  return *shed_[band][reason];
}

prometheus::Histogram& QueueSeries::wait() {
  if (wait_ == nullptr) {
    wait_ = &families_.table_->lease(*families_.wait_, {{"route", route_}}, lease_, wait_buckets());
  }
  return *wait_;
}

prometheus::Counter& QueueSeries::dispatches(std::string_view tenant) {
  auto it = dispatches_.find(tenant);
  if (it == dispatches_.end()) {
    prometheus::Counter& c = families_.table_->lease(
        *families_.dispatches_, {{"route", route_}, {"tenant", std::string(tenant)}}, lease_);
    it = dispatches_.emplace(std::string(tenant), &c).first;
  }
  return *it->second;
}

}  // namespace rolter
