#include "balance/balancer_factory.h"

#include <cmath>
#include <string>

#include "balance/policy/policy_factory.h"
#include "balance/adaptive/adaptive_balancer.h"
#include "balance/stacks.h"
#include "balance/strategies/cache_aware.h"
#include "balance/strategies/consistent_hash.h"
#include "balance/strategies/kv_cost.h"
#include "balance/strategies/power_of_two.h"
#include "balance/strategies/random.h"
#include "balance/strategies/round_robin.h"
#include "balance/strategies/weighted.h"
#include "common/join.h"

namespace rolter {
namespace {

// Weights are checked for every strategy, not only those that read them: a bad weight is a config
// error wherever it appears, and a strategy change must not turn it into a silent one.
std::optional<std::string> check_weights(std::span<const CandidateSpec> candidates) {
  for (size_t i = 0; i < candidates.size(); ++i) {
    const double weight = candidates[i].weight;
    if (!std::isfinite(weight) || weight < 0) {
      return "candidate " + std::to_string(i) + " (" + candidates[i].identity + ") has weight " +
             std::to_string(weight) + ": weights must be finite and >= 0";
    }
  }
  return std::nullopt;
}

}  // namespace

tl::expected<std::unique_ptr<LoadBalancer>, std::string> make_balancer(
    std::string_view strategy, std::span<const CandidateSpec> candidates, const BalancerDeps& deps,
    const RouteSettings& settings) {
  if (auto problem = check_weights(candidates)) return tl::unexpected(std::move(*problem));
  Random& random = deps.random != nullptr ? *deps.random : default_random();
  const size_t n = candidates.size();

  if (strategy == "round_robin") return std::make_unique<RoundRobinBalancer>(n);
  if (strategy == "random") return std::make_unique<RandomBalancer>(n, random);
  if (strategy == "power_of_two") return std::make_unique<PowerOfTwoBalancer>(n, random);
  if (strategy == "weighted") return std::make_unique<WeightedBalancer>(candidates);
  if (strategy == "consistent_hash") return std::make_unique<ConsistentHashBalancer>(candidates);
  if (strategy == "cache_aware") return std::make_unique<CacheAwareBalancer>(n, random);
  if (strategy == "pipeline") return make_pipeline(candidates, deps, settings.pipeline);
  if (strategy == "predicted_latency") return make_predicted_latency(candidates, deps);
  if (strategy == "lora_aware") return make_lora_aware(candidates, deps);
  if (strategy == "cheapest") return make_cheapest(candidates, deps);
  if (strategy == "fastest") return make_fastest(candidates, deps);
  if (strategy == "precise_cache_aware") return make_precise_cache_aware(candidates, deps);
  if (strategy == "kv_cost") return std::make_unique<KvCostBalancer>(candidates, random);
  if (strategy == "lmcache_aware") return make_lmcache_aware(candidates, deps);
  // Not in known_strategies(): a policy route is checked by the config validator as such, with
  // its [routes.policy] table, rather than as one more strategy name.
  if (strategy == "policy") return make_policy_balancer(candidates, settings.policy, deps);
  if (strategy == "adaptive") {
    // SPEC §6.10: the default pipeline stack is the fallback, whatever [routes.pipeline] says.
    auto fallback = make_pipeline(candidates, deps, {});
    if (!fallback) return tl::unexpected(std::move(fallback.error()));
    const Clock& clock = deps.clock != nullptr ? *deps.clock : default_clock();
    return std::make_unique<AdaptiveBalancer>(candidates, std::move(*fallback), settings.adaptive,
                                              settings.adaptive_state, random, clock);
  }
  return tl::unexpected("unknown strategy \"" + std::string(strategy) +
                        "\"; known strategies: " + join(known_strategies()));
}

}  // namespace rolter
