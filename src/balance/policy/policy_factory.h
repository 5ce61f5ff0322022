// make_policy_balancer: builds a policy-mode route's balancer (SPEC §7) from its PolicySettings.
//
// Enabled plugins, in a fixed order (decision_service, session_affinity, least_inflight), go to a
// PolicyBalancer. When no plugin has an opinion on a request, or none is enabled at all, the pick
// is round-robin over the eligible candidates; in target weight mode (no plugin enabled and every
// target weighted) it is smooth weighted round-robin over the per-instance weights instead, so
// traffic splits by target weight whatever each target's instance count (SPEC §4).
//
// Thread-safety: pure; may be called from any thread.
#pragma once

#include <memory>
#include <span>

#include "balance/balancer_factory.h"
#include "balance/candidate.h"
#include "balance/load_balancer.h"

namespace rolter {

struct PolicySettings;

// `settings` null = no plugin enabled and no target weights. The balancer is named "policy".
// REQUIRES: candidate weights are finite and >= 0; enabled plugin weights are finite and > 0 (the
// config validator checks both).
std::unique_ptr<LoadBalancer> make_policy_balancer(std::span<const CandidateSpec> candidates,
                                                   const PolicySettings* settings,
                                                   const BalancerDeps& deps);

}  // namespace rolter
