// FlowGate: what a snapshot's pool knows of its flow control (SPEC §19): the route's queue (kept
// by the LoadTracker, outside every snapshot), the capacity view the queue and the request path
// read, and the route's default priority.
//
// A pool gets one only when it can saturate: when every one of its candidates' providers sets
// max_in_flight_per_instance or max_waiting_per_instance. Every other pool pays one pointer test.
//
// Thread-safety: immutable once built; the queue is internally synchronised.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "config/config.h"
#include "fleet/availability.h"
#include "fleet/load_tracker.h"
#include "flow/route_queue.h"

namespace rolter {

class Metrics;
class QueueSeries;
struct RoutePool;

struct FlowGate {
  RouteQueue* queue = nullptr;                      // owned by the LoadTracker
  std::shared_ptr<const FlowCapacity> capacity;     // shared with the queue
  std::optional<uint8_t> priority;                  // the route's `priority`
  uint64_t default_output_tokens = 1024;            // the cost estimate's output cap (SPEC §15)
  // Per band, [[queue.bands]] max_ttft_ms (0 = unset): admission by cost.
  std::array<uint64_t, kQueueBands> max_ttft_ms{};
  // Some band has `preempt`, or [queue] fair_preempt or fair_reserve: every request of the route
  // passes the queue's gate, which registers the ones it counts or may displace (a lock and an
  // allocation each, on such routes only).
  bool preempts = false;
  // [queue] fair_reserve: the unsaturated path is open only while more slots than these are free
  // (the queue decides who may take the last ones).
  uint32_t reserve = 0;
  // The route's queue series, held while this snapshot lives (null without metrics).
  std::shared_ptr<QueueSeries> series;

  // The unsaturated path (SPEC §19: one check, no lock, no allocation): nobody waits, and some
  // candidate has room (beyond the reserve).
  bool open(Clock::TimePoint now) const {
    return !queue->busy() && capacity->room(now).free > reserve;
  }
};

// The pool's gate, or null when it cannot saturate. `series` names the queue and its metrics (the
// pool's metrics series name); `route_priority` is the route's `priority`, if any.
std::unique_ptr<const FlowGate> make_flow_gate(const RoutePool& pool, const std::string& series,
                                               const Config& config,
                                               std::optional<uint32_t> route_priority,
                                               const BreakerParams& breaker, LoadTracker& tracker,
                                               Metrics* metrics);

}  // namespace rolter
