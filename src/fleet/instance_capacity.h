// InstanceCapacity: how much more a route can take now, read from its instances' load and
// availability (SPEC §19's saturation), for the route's queue (flow/route_queue.h).
//
// An instance is saturated when its load (local in-flight, or the engine-reported load while
// fresh: LoadSignals::current()) reaches its provider's max_in_flight_per_instance, or when the
// engine reports more than max_waiting_per_instance requests waiting. One that cannot take traffic
// at all (parked, breaker open, unhealthy) counts neither as room nor as available. A route is
// saturated when no instance has room.
//
// Built by the snapshot for a route whose every candidate's provider sets a bound; immutable.
//
// Thread-safety: room() may be called from any thread; it reads atomics, takes no lock and
// allocates nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fleet/availability.h"
#include "fleet/load_tracker.h"
#include "flow/route_queue.h"

namespace rolter {

struct InstanceBound {
  const InstanceState* state = nullptr;  // owned by the LoadTracker; outlives this
  std::optional<uint32_t> max_in_flight;
  std::optional<uint32_t> max_waiting;  // read only while the engine's scrape is fresh
};

class InstanceCapacity final : public FlowCapacity {
 public:
  InstanceCapacity(std::vector<InstanceBound> bounds, const BreakerParams& breaker)
      : bounds_(std::move(bounds)), breaker_(breaker) {}

  QueueRoom room(Clock::TimePoint now) const override;
  bool has_room(size_t i, Clock::TimePoint now) const override;

 private:
  // Room of one available instance.
  static uint32_t room_of(const InstanceBound& bound);

  const std::vector<InstanceBound> bounds_;  // in the route's candidate order
  const BreakerParams breaker_;
};

}  // namespace rolter
