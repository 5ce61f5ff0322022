#include "fleet/load_tracker.h"

namespace rolter {

InstanceState& LoadTracker::instance(std::string_view provider, std::string_view base_url) {
  std::string identity;
  identity.reserve(provider.size() + 1 + base_url.size());
  identity.append(provider).append("@").append(base_url);
  std::lock_guard lock(mu_);
  if (auto it = by_identity_.find(identity); it != by_identity_.end()) return *it->second;
  auto& state = states_.emplace_back(identity, static_cast<uint32_t>(states_.size()));
  by_identity_.emplace(std::move(identity), &state);
  return state;
}

AdaptiveRouteState& LoadTracker::adaptive_route(std::string_view route) {
  std::lock_guard lock(mu_);
  // Few routes, looked up only while building a snapshot: a scan is enough.
  for (auto& state : adaptive_routes_) {
    if (state.route() == route) return state;
  }
  return adaptive_routes_.emplace_back(std::string(route));
}

size_t LoadTracker::size() const {
  std::lock_guard lock(mu_);
  return states_.size();
}

}  // namespace rolter
