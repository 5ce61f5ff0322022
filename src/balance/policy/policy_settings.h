// PolicySettings: how one policy-mode route (SPEC §7) combines its plugins, as its balancer needs
// it. Built by the snapshot builder from [routes.policy] and the route's targets.
//
// A plugin is enabled when its table is present in [routes.policy]; its weight then defaults to
// SPEC §7's (least_inflight 1, session_affinity 1, decision_service 10). Where the session key and
// the decision service's verdict come from is the request path's business (RouteContext): the
// balancer only scores them.
//
// Thread-safety: a value type.
#pragma once

#include <optional>

namespace rolter {

struct PolicySettings {
  std::optional<double> least_inflight_weight;    // set = enabled; > 0
  std::optional<double> session_affinity_weight;  // set = enabled; > 0
  std::optional<double> decision_weight;          // set = enabled; > 0
  // Every target of the route sets `weight`: with no plugin enabled, traffic is split by target
  // weight (each instance's share is its CandidateSpec::weight, SPEC §4).
  bool target_weights = false;

  bool any_plugin() const {
    return least_inflight_weight || session_affinity_weight || decision_weight;
  }
};

}  // namespace rolter
