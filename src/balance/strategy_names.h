// The strategies' names (SPEC §6, §7), spelt once. Code that must treat one strategy apart (the
// config's default, the deployment-wide adaptive policy, policy mode's own table) names it by
// these constants; everything else reads the strategy registry (strategy_registry.h).
#pragma once

#include <string_view>

namespace rolter::strategy {

inline constexpr std::string_view kRoundRobin = "round_robin";
inline constexpr std::string_view kRandom = "random";
inline constexpr std::string_view kPowerOfTwo = "power_of_two";
inline constexpr std::string_view kWeighted = "weighted";
inline constexpr std::string_view kConsistentHash = "consistent_hash";
inline constexpr std::string_view kCacheAware = "cache_aware";
inline constexpr std::string_view kPipeline = "pipeline";
inline constexpr std::string_view kCheapest = "cheapest";
inline constexpr std::string_view kFastest = "fastest";
inline constexpr std::string_view kPredictedLatency = "predicted_latency";
inline constexpr std::string_view kLoraAware = "lora_aware";
inline constexpr std::string_view kPreciseCacheAware = "precise_cache_aware";
inline constexpr std::string_view kKvCost = "kv_cost";
inline constexpr std::string_view kLmcacheAware = "lmcache_aware";
inline constexpr std::string_view kAdaptive = "adaptive";
inline constexpr std::string_view kPolicy = "policy";
inline constexpr std::string_view kLeastKvUsage = "least_kv_usage";

// A route or provider group that names no strategy.
inline constexpr std::string_view kDefault = kRoundRobin;

}  // namespace rolter::strategy
