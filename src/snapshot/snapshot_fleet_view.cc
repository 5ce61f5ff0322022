#include "snapshot/snapshot_fleet_view.h"

#include <algorithm>
#include <vector>

#include "fleet/availability.h"

namespace rolter {

void SnapshotFleetView::for_each_route(FunctionRef<void(const RouteReading&)> fn) const {
  std::vector<const InstanceState*> seen;
  for (const auto& pool : snapshot_.pools()) {
    // Candidates of several targets share an endpoint: each counts once.
    seen.clear();
    RouteReading reading{.route = pool->series};
    for (const Candidate& c : pool->candidates) {
      if (std::find(seen.begin(), seen.end(), c.state) != seen.end()) continue;
      seen.push_back(c.state);
      ++reading.endpoints;
      if (availability(c.state->health, now_, snapshot_.breaker()) == OutReason::kNone) {
        ++reading.available;
      }
    }
    fn(reading);
  }
}

}  // namespace rolter
