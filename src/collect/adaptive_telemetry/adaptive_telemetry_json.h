// What a node tells the control plane about its adaptive routes (SPEC §6.10): a sample of each
// route read from a snapshot, and the JSON document that carries them.
//
// Thread-safety: free functions; collect_adaptive_samples() reads only atomics and the route
// states' locks.
#pragma once

#include <string>
#include <vector>

#include "balance/adaptive/adaptive_balancer.h"
#include "common/clock.h"

namespace rolter {

class Snapshot;

// The samples of every adaptive pool (routes and groups) of `snapshot`, in pool order, at `now`.
std::vector<AdaptiveRouteSample> collect_adaptive_samples(const Snapshot& snapshot,
                                                          Clock::TimePoint now);

// The document posted to the control plane:
//   {"node_id": "...", "routes": [{"route": "m", "engaged": true, "served": 120,
//     "decisions": {"blend": 100, "exploration": 4, "probe": 3, "fallback": 13},
//     "policy": {"enabled": true, "latency_weight": 1, ...},
//     "targets": [{"target": "a/m", "score": 1.5,
//                  "components": {"latency": 1, "cost": 0.5, "load": 1},
//                  "signals": {"latency_ms": 12.5, "price": 0.8, "in_flight": 0},
//                  "picks": 60, "picks_by_decision": {...}, "seconds_since_last_pick": 0.4}]}]}
// Unknown values (no latency sample, no price, never picked) are null.
std::string adaptive_telemetry_json(const std::string& node_id,
                                    const std::vector<AdaptiveRouteSample>& routes);

}  // namespace rolter
