// FleetView: what Metrics reads from the fleet's learned state when it is scraped, as plain
// numbers and names.
//
// observe/ sits on the lowest floor and knows nothing of the gateway's types, so the per-instance
// gauges and the adaptive routes' pick counters reach it through this interface. The LoadTracker
// (fleet/load_tracker.h) implements it; whoever holds both the tracker and the Metrics (the
// server's /metrics endpoint, a node's stats reporter) passes the one to the other.
//
// Thread-safety: an implementation may be read from any thread, concurrently; the readings it
// hands out are valid only during the callback.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/function_ref.h"

namespace rolter {

// One instance's state at the time of the reading.
struct InstanceReading {
  std::string_view instance;  // its stable identity, "<provider>@<base_url>"
  uint32_t in_flight = 0;  // requests this gateway has outstanding on it
  uint8_t breaker = 0;  // 0 closed, 1 open, 2 half-open
  bool healthy = true;
  bool parked = false;
  uint32_t engine_load = 0;  // running + waiting at the engine's last good scrape
  bool engine_fresh = false;
  std::optional<double> lmcache_occupancy;  // while lmcache_aware may use it
};

// An adaptive route's picks of one decision kind so far: the whole route's (target empty), or
// those of one target summed over its instances.
struct AdaptivePicksReading {
  std::string_view model;     // the route (or group address)
  std::string_view target;    // the target label, or empty for the whole route
  std::string_view decision;  // "blend", "exploration", "probe", "fallback"
  uint64_t total = 0;
};

class FleetView {
 public:
  // Calls fn once per instance ever seen.
  virtual void for_each_instance(FunctionRef<void(const InstanceReading&)> fn) const = 0;
  // Calls fn for every adaptive route's totals, per decision kind: the route's, then its targets'.
  virtual void for_each_adaptive_picks(FunctionRef<void(const AdaptivePicksReading&)> fn) const = 0;

 protected:
  ~FleetView() = default;
};

}  // namespace rolter
