#include "fleet/instance_capacity.h"

#include <algorithm>

namespace rolter {
namespace {

// The room of an instance bounded only by its engine's waiting count: as good as unbounded, and
// small enough that a route's sum cannot overflow.
constexpr uint32_t kUnboundedRoom = 1u << 16;

}  // namespace

uint32_t InstanceCapacity::room_of(const InstanceBound& bound) {
  const InstanceState& state = *bound.state;
  if (bound.max_waiting && state.load.engine_fresh.load(std::memory_order_relaxed) &&
      state.load.engine_waiting.load(std::memory_order_relaxed) > *bound.max_waiting) {
    return 0;
  }
  if (!bound.max_in_flight) return kUnboundedRoom;
  const uint32_t load = state.load.current();
  return load < *bound.max_in_flight ? *bound.max_in_flight - load : 0;
}

QueueRoom InstanceCapacity::room(Clock::TimePoint now) const {
  QueueRoom room;
  for (const InstanceBound& bound : bounds_) {
    if (availability(bound.state->health, now, breaker_) != OutReason::kNone) continue;
    room.any_available = true;
    room.free += room_of(bound);
  }
  return room;
}

bool InstanceCapacity::has_room(size_t i, Clock::TimePoint now) const {
  if (i >= bounds_.size()) return false;
  const InstanceBound& bound = bounds_[i];
  return availability(bound.state->health, now, breaker_) == OutReason::kNone && room_of(bound) > 0;
}

}  // namespace rolter
