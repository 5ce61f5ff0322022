// SnapshotFleetView: the fleet as one snapshot sees it, for Metrics::render() at GET /metrics.
//
// Endpoint and adaptive readings come from the underlying view (the LoadTracker); the routes are
// the snapshot's pools, each with its distinct endpoints and how many of them may take a request
// at `now` (fleet/availability.h): rolter_route_endpoints_available at 0 is a route whose every
// candidate is out.
//
//   SnapshotFleetView view(tracker, *snapshot, std::chrono::steady_clock::now());
//   std::string text = metrics.render(view);
//
// Thread-safety: as the underlying view; the snapshot is immutable. Both must outlive the view.
#pragma once

#include "common/clock.h"
#include "observe/fleet_view.h"
#include "snapshot/snapshot.h"

namespace rolter {

class SnapshotFleetView final : public FleetView {
 public:
  SnapshotFleetView(const FleetView& fleet, const Snapshot& snapshot, Clock::TimePoint now)
      : fleet_(fleet), snapshot_(snapshot), now_(now) {}

  void for_each_instance(FunctionRef<void(const InstanceReading&)> fn) const override {
    fleet_.for_each_instance(fn);
  }
  void for_each_adaptive_picks(FunctionRef<void(const AdaptivePicksReading&)> fn) const override {
    fleet_.for_each_adaptive_picks(fn);
  }
  void for_each_route(FunctionRef<void(const RouteReading&)> fn) const override;

 private:
  const FleetView& fleet_;
  const Snapshot& snapshot_;
  const Clock::TimePoint now_;
};

}  // namespace rolter
