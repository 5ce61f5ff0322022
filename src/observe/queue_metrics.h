// QueueMetrics: the series of the gateway's flow control (SPEC §19), kept beside Metrics on its
// registry.
//
//   queue_depth{route,band}              requests waiting in the route's queue, per band
//   queue_wait_seconds{route}            how long each dispatched request waited, histogram
//   shed_total{route,band,reason}        requests the queue refused: full, predicted_wait,
//                                        expired
//   queue_dispatches_total{route,tenant} with [metrics] per_key = true only: requests dispatched
//                                        from the queue per tenant (a key, or its team), the
//                                        share fairness gives each; tenants are configured keys
//                                        and teams, so the cardinality is the config's
//
// Every series is made on first use (a label lookup): the queue runs only when a route is
// saturated, never on the unsaturated path.
//
// Thread-safety: every method may be called from any thread (prometheus-cpp's families lock).
#pragma once

#include <cstdint>
#include <string_view>

namespace prometheus {
class Registry;
template <typename T>
class Family;
class Counter;
class Gauge;
class Histogram;
}  // namespace prometheus

namespace rolter {

class QueueMetrics {
 public:
  explicit QueueMetrics(prometheus::Registry& registry);

  void set_depth(std::string_view route, uint8_t band, double depth);
  void observe_wait(std::string_view route, double seconds);
  void count_shed(std::string_view route, uint8_t band, std::string_view reason);
  void count_dispatch(std::string_view route, std::string_view tenant);

 private:
  prometheus::Family<prometheus::Gauge>* depth_;
  prometheus::Family<prometheus::Histogram>* wait_;
  prometheus::Family<prometheus::Counter>* shed_;
  prometheus::Family<prometheus::Counter>* dispatches_;
};

}  // namespace rolter
