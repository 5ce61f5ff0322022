#include "fleet/load_tracker.h"

#include <map>
#include <utility>

namespace rolter {

InstanceState& LoadTracker::instance(std::string_view provider, std::string_view base_url) {
  std::string identity;
  identity.reserve(provider.size() + 1 + base_url.size());
  identity.append(provider).append("@").append(base_url);
  MutexLock lock(mu_);
  if (auto it = by_identity_.find(identity); it != by_identity_.end()) return *it->second;
  auto& state = states_.emplace_back(identity, static_cast<uint32_t>(states_.size()));
  by_identity_.emplace(std::move(identity), &state);
  return state;
}

AdaptiveRouteState& LoadTracker::adaptive_route(std::string_view route) {
  MutexLock lock(mu_);
  // Few routes, looked up only while building a snapshot: a scan is enough.
  for (auto& state : adaptive_routes_) {
    if (state.route() == route) return state;
  }
  return adaptive_routes_.emplace_back(std::string(route));
}

size_t LoadTracker::size() const {
  MutexLock lock(mu_);
  return states_.size();
}

void LoadTracker::for_each_instance(FunctionRef<void(const InstanceReading&)> fn) const {
  const int64_t now = default_clock().now().time_since_epoch().count();
  for_each([&](const InstanceState& state) {
    fn(InstanceReading{
        .instance = state.identity,
        .in_flight = state.load.in_flight.load(std::memory_order_relaxed),
        .breaker = state.health.breaker.load(std::memory_order_relaxed),
        .healthy = state.health.healthy.load(std::memory_order_relaxed),
        .parked = state.health.parked_until.load(std::memory_order_relaxed) > now,
        .engine_load = state.load.engine_load.load(std::memory_order_relaxed),
        .engine_fresh = state.load.engine_fresh.load(std::memory_order_relaxed),
        .lmcache_occupancy = state.lmcache.usable_occupancy(),
    });
  });
}

void LoadTracker::for_each_adaptive_picks(
    FunctionRef<void(const AdaptivePicksReading&)> fn) const {
  for_each_adaptive_route([&](const AdaptiveRouteState& route) {
    const AdaptiveSplit split = route.split();
    // Candidates that share a label (instances of one provider) are summed under it.
    std::map<std::pair<std::string, size_t>, uint64_t> by_target;
    route.for_each_candidate([&](const AdaptiveCandidateCounters& c) {
      const AdaptiveSplit s = c.split();
      for (size_t k = 0; k < kAdaptiveDecisionCount; ++k) by_target[{c.label(), k}] += s[k];
    });
    for (size_t k = 0; k < kAdaptiveDecisionCount; ++k) {
      fn({.route = route.route(),
          .decision = adaptive_decision_name(static_cast<AdaptiveDecision>(k)),
          .total = split[k]});
    }
    for (const auto& [key, total] : by_target) {
      fn({.route = route.route(),
          .target = key.first,
          .decision = adaptive_decision_name(static_cast<AdaptiveDecision>(key.second)),
          .total = total});
    }
  });
}

}  // namespace rolter
