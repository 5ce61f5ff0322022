#include "balance/policy/policy_factory.h"

#include <utility>
#include <vector>

#include "balance/policy/decision_service.h"
#include "balance/policy/least_inflight.h"
#include "balance/policy/policy_balancer.h"
#include "balance/policy/policy_settings.h"
#include "balance/policy/rendezvous.h"
#include "balance/strategies/round_robin.h"
#include "balance/strategies/weighted.h"

namespace rolter {

std::unique_ptr<LoadBalancer> make_policy_balancer(std::span<const CandidateSpec> candidates,
                                                   const PolicySettings* settings,
                                                   const BalancerDeps& deps) {
  Random& random = deps.random != nullptr ? *deps.random : default_random();
  const PolicySettings none;
  const PolicySettings& policy = settings != nullptr ? *settings : none;

  std::vector<PolicyBalancer::Entry> entries;
  if (policy.decision_weight) {
    entries.push_back({std::make_unique<DecisionPlugin>(candidates), *policy.decision_weight});
  }
  if (policy.session_affinity_weight) {
    entries.push_back(
        {std::make_unique<RendezvousPlugin>(candidates), *policy.session_affinity_weight});
  }
  if (policy.least_inflight_weight) {
    entries.push_back({std::make_unique<LeastInflightPlugin>(), *policy.least_inflight_weight});
  }

  std::unique_ptr<LoadBalancer> no_opinion;
  if (!policy.any_plugin() && policy.target_weights) {
    no_opinion = std::make_unique<WeightedBalancer>(candidates);
  } else {
    no_opinion = std::make_unique<RoundRobinBalancer>(candidates.size());
  }
  return std::make_unique<PolicyBalancer>(candidates.size(), std::move(entries),
                                          std::move(no_opinion), random);
}

}  // namespace rolter
