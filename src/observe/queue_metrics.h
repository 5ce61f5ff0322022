// QueueMetrics: the series of the gateway's flow control (SPEC §19), kept beside Metrics on its
// registry.
//
//   queue_depth{route,band}              requests waiting in the route's queue, per band
//   queue_wait_seconds{route}            how long each dispatched request waited, histogram
//   shed_total{route,band,reason}        requests the queue refused: full, predicted_wait,
//                                        expired, max_ttft
//   queue_preemptions_total{route,band} dispatched requests displaced, before their answer began,
//                                        by a higher band's (their band)
//   queue_dispatches_total{route,tenant} with [metrics] per_key = true only: requests dispatched
//                                        from the queue per tenant (a key, or its team), the
//                                        share fairness gives each; tenants are configured keys
//                                        and teams, so the cardinality is the config's
//
// A route's series are a QueueSeries, which leases each one on its first use (a route that never
// queues shows none) and follows the reload rule of every route series (observe/series_lease.h):
// each snapshot's gate for the route holds the QueueSeries it made, which adopts the series of
// the one before, so counts carry over a reload that keeps the route, and the series leave
// /metrics once no snapshot with the route is left.
//
//   QueueMetrics families(metrics.registry(), metrics.series_table());  // once per process
//   auto series = families.series("chat");  // per snapshot and route
//   series->adopt(*earlier);                 // the same route's, from the snapshot before
//   series->set_depth(4, 12);
//
// Thread-safety: QueueMetrics may be used from any thread. A QueueSeries is used by one thread at
// a time (its queue's lock); it may be destroyed on any thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "observe/series_lease.h"

namespace prometheus {
class Registry;
template <typename T>
class Family;
class Counter;
class Gauge;
class Histogram;
}  // namespace prometheus

namespace rolter {

class SeriesTable;
class QueueSeries;

class QueueMetrics {
 public:
  QueueMetrics(prometheus::Registry& registry, std::shared_ptr<SeriesTable> table);

  // A new, empty set of `route`'s series.
  std::shared_ptr<QueueSeries> series(std::string_view route) const;

 private:
  friend class QueueSeries;
  std::shared_ptr<SeriesTable> table_;
  prometheus::Family<prometheus::Gauge>* depth_;
  prometheus::Family<prometheus::Histogram>* wait_;
  prometheus::Family<prometheus::Counter>* shed_;
  prometheus::Family<prometheus::Counter>* dispatches_;
  prometheus::Family<prometheus::Counter>* preemptions_;
};

class QueueSeries {
 public:
  QueueSeries(const QueueMetrics& families, std::string route);

  // Leases every series `earlier` leased (the same route's), so that they outlive it.
  void adopt(const QueueSeries& earlier);

  void set_depth(uint8_t band, double depth);
  void observe_wait(double seconds);
  // `reason`: "full", "predicted_wait", "expired" or "max_ttft"; any other is not counted.
  void count_shed(uint8_t band, std::string_view reason);
  void count_dispatch(std::string_view tenant);
  // A dispatched request of `band` was displaced by a higher band's.
  void count_preemption(uint8_t band);

  static constexpr size_t kBands = 8;
  static constexpr std::array<std::string_view, 4> kShedReasons = {"full", "predicted_wait",
                                                                   "expired", "max_ttft"};

 private:
  prometheus::Gauge& depth(uint8_t band);
  prometheus::Counter& shed(uint8_t band, size_t reason);
  prometheus::Histogram& wait();
  prometheus::Counter& dispatches(std::string_view tenant);
  prometheus::Counter& preemptions(uint8_t band);

  QueueMetrics families_;  // a copy: the lease keeps the registry, and so the families, alive
  std::string route_;
  SeriesLease lease_;
  std::array<prometheus::Gauge*, kBands> depth_{};
  std::array<std::array<prometheus::Counter*, kShedReasons.size()>, kBands> shed_{};
  std::array<prometheus::Counter*, kBands> preemptions_{};
  prometheus::Histogram* wait_ = nullptr;
  std::map<std::string, prometheus::Counter*, std::less<>> dispatches_;
};

}  // namespace rolter
