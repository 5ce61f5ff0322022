// FleetView: what Metrics reads from the fleet's learned state when it is scraped, as plain
// numbers and names.
//
// observe/ sits on the lowest floor and knows nothing of the gateway's types, so the per-endpoint
// gauges, the adaptive routes' pick counters and the routes' endpoint counts reach it through this
// interface. The LoadTracker (fleet/load_tracker.h) implements it; the server's /metrics endpoint
// passes a SnapshotFleetView (snapshot/snapshot_fleet_view.h), the tracker seen through the
// snapshot it serves, and a node's stats reporter passes the tracker.
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
  std::string_view instance;  // its stable identity, "<provider>@<base_url>" (its endpoint label)
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
  std::string_view route;     // the route (or group address)
  std::string_view target;    // the target label, or empty for the whole route
  std::string_view decision;  // "blend", "exploration", "probe", "fallback"
  uint64_t total = 0;
};

// A route's (or group's, or provider pin's) endpoints, and how many may take a request now: not
// parked, healthy, breaker not open.
struct RouteReading {
  std::string_view route;  // its route label
  uint32_t endpoints = 0;
  uint32_t available = 0;
};

class FleetView {
 public:
  // Calls fn once per instance ever seen.
  virtual void for_each_instance(FunctionRef<void(const InstanceReading&)> fn) const = 0;
  // Calls fn for every adaptive route's totals, per decision kind: the route's, then its targets'.
  virtual void for_each_adaptive_picks(FunctionRef<void(const AdaptivePicksReading&)> fn) const = 0;
  // Calls fn once per route of the current snapshot. The LoadTracker knows no routes: only a view
  // that holds a snapshot (snapshot/snapshot_fleet_view.h) has any.
  virtual void for_each_route(FunctionRef<void(const RouteReading&)> /*fn*/) const {}

 protected:
  ~FleetView() = default;
};

}  // namespace rolter
