#include "balance/strategy_registry.h"

#include <array>
#include <string>
#include <vector>

#include "balance/adaptive/adaptive_balancer.h"
#include "balance/policy/policy_factory.h"
#include "balance/prefix/prefix_sharing.h"
#include "balance/stacks.h"
#include "balance/strategies/cache_aware.h"
#include "balance/strategies/consistent_hash.h"
#include "balance/strategies/kv_cost.h"
#include "balance/strategies/power_of_two.h"
#include "balance/strategies/random.h"
#include "balance/strategies/round_robin.h"
#include "balance/strategies/weighted.h"
#include "balance/strategy_names.h"
#include "common/join.h"

namespace rolter {
namespace {

using Specs = std::span<const CandidateSpec>;
using Made = tl::expected<std::unique_ptr<LoadBalancer>, std::string>;

Random& random_of(const BalancerDeps& deps) {
  return deps.random != nullptr ? *deps.random : default_random();
}

const Clock& clock_of(const BalancerDeps& deps) {
  return deps.clock != nullptr ? *deps.clock : default_clock();
}

Made make_adaptive(Specs candidates, const BalancerDeps& deps, const RouteSettings& settings) {
  // SPEC §6.10: the default pipeline stack is the fallback, whatever [routes.pipeline] says.
  auto fallback = make_pipeline(candidates, deps, {});
  if (!fallback) return tl::unexpected(std::move(fallback.error()));
  return std::make_unique<AdaptiveBalancer>(candidates, std::move(*fallback), settings.adaptive,
                                            settings.adaptive_state, random_of(deps),
                                            clock_of(deps));
}

using T = StrategyTelemetry;

const std::array<StrategyInfo, 17> kRegistry = {{
    {.name = strategy::kRoundRobin,
     .summary = "Each candidate in turn.",
     .make = [](Specs c, const BalancerDeps&, const RouteSettings&) -> Made {
       return std::make_unique<RoundRobinBalancer>(c.size());
     }},
    {.name = strategy::kRandom,
     .summary = "A candidate at random.",
     .make = [](Specs c, const BalancerDeps& d, const RouteSettings&) -> Made {
       return std::make_unique<RandomBalancer>(c.size(), random_of(d));
     }},
    {.name = strategy::kPowerOfTwo,
     .summary = "Two candidates at random; the less loaded wins.",
     .make = [](Specs c, const BalancerDeps& d, const RouteSettings&) -> Made {
       return std::make_unique<PowerOfTwoBalancer>(c.size(), random_of(d));
     }},
    {.name = strategy::kWeighted,
     .summary = "Smooth weighted round robin over the targets' weights.",
     .reads_weights = true,
     .make = [](Specs c, const BalancerDeps&, const RouteSettings&) -> Made {
       return std::make_unique<WeightedBalancer>(c);
     }},
    {.name = strategy::kConsistentHash,
     .summary = "The same session or prompt prefix goes to the same candidate.",
     .make = [](Specs c, const BalancerDeps&, const RouteSettings&) -> Made {
       return std::make_unique<ConsistentHashBalancer>(c);
     }},
    {.name = strategy::kCacheAware,
     .summary = "Approximate prefix affinity, with a load guard.",
     .make = [](Specs c, const BalancerDeps& d, const RouteSettings&) -> Made {
       auto balancer = std::make_unique<CacheAwareBalancer>(c.size(), random_of(d),
                                                           PrefixTree::Options{}, clock_of(d));
       balancer->share(d.sharing, shared_tree_name(d.pool, strategy::kCacheAware), c);
       return balancer;
     }},
    {.name = strategy::kPipeline,
     .summary = "A weighted stack of scorers; the best total wins.",
     .reads_weights = true,
     .table = StrategyTable::kPipeline,
     .make = [](Specs c, const BalancerDeps& d, const RouteSettings& s) -> Made {
       return make_pipeline(c, d, s.pipeline);
     }},
    {.name = strategy::kCheapest,
     .summary = "The lowest catalog price, then the least load.",
     .make = [](Specs c, const BalancerDeps& d, const RouteSettings&) -> Made {
       return make_cheapest(c, d);
     }},
    {.name = strategy::kFastest,
     .summary = "The lowest smoothed latency, then the least load.",
     .make = [](Specs c, const BalancerDeps& d, const RouteSettings&) -> Made {
       return make_fastest(c, d);
     }},
    {.name = strategy::kPredictedLatency,
     .summary = "The lowest latency predicted from queue depth and prompt size.",
     .make = [](Specs c, const BalancerDeps& d, const RouteSettings&) -> Made {
       return make_predicted_latency(c, d);
     }},
    {.name = strategy::kLoraAware,
     .summary = "Where the requested adapter is resident, then prefix and load.",
     .make = [](Specs c, const BalancerDeps& d, const RouteSettings&) -> Made {
       return make_lora_aware(c, d);
     }},
    {.name = strategy::kPreciseCacheAware,
     .summary = "Exact KV-cache residency from each engine's KV-event stream.",
     .reads_token_ids = true,
     .telemetry = T::kKvEvents,
     .make = [](Specs c, const BalancerDeps& d, const RouteSettings&) -> Made {
       return make_precise_cache_aware(c, d);
     }},
    {.name = strategy::kKvCost,
     .summary = "The lowest estimated time to first token, from KV residency.",
     .reads_token_ids = true,
     .telemetry = T::kKvEvents,
     .make = [](Specs c, const BalancerDeps& d, const RouteSettings&) -> Made {
       return std::make_unique<KvCostBalancer>(c, random_of(d), clock_of(d));
     }},
    {.name = strategy::kLmcacheAware,
     .summary = "The most LMCache headroom, from each instance's occupancy.",
     .telemetry = T::kLmcache,
     .replayed_by_default = false,
     .make = [](Specs c, const BalancerDeps& d, const RouteSettings&) -> Made {
       return make_lmcache_aware(c, d);
     }},
    {.name = strategy::kLeastKvUsage,
     .summary = "The most KV-cache room the engines report, then the least load.",
     .make = [](Specs c, const BalancerDeps& d, const RouteSettings&) -> Made {
       return make_least_kv_usage(c, d);
     }},
    {.name = strategy::kAdaptive,
     .summary = "Latency, cost and load blended under the deployment-wide policy (its own screen).",
     .reads_weights = true,
     .per_route = false,
     .replayed_by_default = false,
     .make = make_adaptive},
    {.name = strategy::kPolicy,
     .summary = "Plugins (session affinity, least in-flight, a decision service) combined.",
     .reads_weights = true,
     .table = StrategyTable::kPolicy,
     .listed = false,
     .replayed_by_default = false,
     .make = [](Specs c, const BalancerDeps& d, const RouteSettings& s) -> Made {
       return make_policy_balancer(c, s.policy, d);
     }},
}};

// The names `strategy = ` takes, for messages and --help.
const std::vector<std::string_view>& listed_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const StrategyInfo& info : kRegistry) {
      if (info.listed) out.push_back(info.name);
    }
    return out;
  }();
  return names;
}

}  // namespace

std::string_view telemetry_name(StrategyTelemetry telemetry) {
  switch (telemetry) {
    case StrategyTelemetry::kKvEvents:
      return "kv_events";
    case StrategyTelemetry::kLmcache:
      return "lmcache";
    case StrategyTelemetry::kNone:
      break;
  }
  return "";
}

std::span<const StrategyInfo> strategy_registry() { return kRegistry; }

const StrategyInfo* find_strategy(std::string_view name) {
  for (const StrategyInfo& info : kRegistry) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

bool is_known_strategy(std::string_view name) {
  const StrategyInfo* info = find_strategy(name);
  return info != nullptr && info->listed;
}

bool strategy_reads_weights(std::string_view name) {
  const StrategyInfo* info = find_strategy(name);
  return info != nullptr && info->reads_weights;
}

bool strategy_reads_token_ids(std::string_view name) {
  const StrategyInfo* info = find_strategy(name);
  return info != nullptr && info->reads_token_ids;
}

std::span<const std::string_view> known_strategies() { return listed_names(); }

std::string unknown_strategy_message(std::string_view name) {
  return "unknown strategy \"" + std::string(name) + "\"; known strategies: " +
         join(known_strategies());
}

}  // namespace rolter
