// Builders for the strategies that are weighted score stacks (SPEC §6.7, §6.9, §6.11-§6.13): each
// returns a ScoredStack (balance/scored_stack.h) whose scorers come from the scorer registry
// (balance/scorer_registry.h) by name.
//
// Called by the snapshot builder, once per route and once per provider group per snapshot.
// Thread-safety: pure; may be called from any thread. The balancers they build follow the
// LoadBalancer contract (every method callable concurrently).
//
//   auto lb = make_pipeline(candidates, deps, {});         // SPEC §6.7's default stack
//   auto lb = make_pipeline(candidates, deps, weights);    // e.g. {{"least_load", 1}, ...}
//   if (!lb) ... lb.error() names the unknown scorer or the bad weight ...
#pragma once

#include <tl/expected.hpp>

#include <memory>
#include <span>
#include <string>
#include <utility>

#include "balance/balancer_factory.h"
#include "balance/candidate.h"
#include "balance/load_balancer.h"

namespace rolter {

// Weights of the fixed stacks. A primary signal weighs 1.0; least load 0.25 only settles near
// ties and keeps traffic moving while the primary signal is neutral.
// SPEC §6.7: every scorer of the default pipeline weighs the same.
inline constexpr double kPipelineDefaultWeight = 1.0;
// SPEC §6.11: predictor 1.0 + least load 0.25.
inline constexpr double kPredictedLatencyWeight = 1.0;
// SPEC §6.12: adapter resident 1.0 + prefix affinity 0.5 + least load 0.25.
inline constexpr double kAdapterResidencyWeight = 1.0;
inline constexpr double kLoraPrefixAffinityWeight = 0.5;
// SPEC §6.13: price (cheapest) or latency EWMA (fastest) 1.0 + least load 0.25.
inline constexpr double kPriceWeight = 1.0;
inline constexpr double kKvHeadroomWeight = 1.0;
inline constexpr double kLatencyWeight = 1.0;
// SPEC §6.8: KV residency 1.0 + least load 0.25.
inline constexpr double kKvResidencyWeight = 1.0;
// SPEC §6.9: LMCache headroom 1.0 + least load 0.25.
inline constexpr double kLmcacheHeadroomWeight = 1.0;
// SPEC §6.8, §6.9, §6.11-§6.13: the least load share of every stack but the pipeline.
inline constexpr double kTieBreakLeastLoadWeight = 0.25;

using StackResult = tl::expected<std::unique_ptr<LoadBalancer>, std::string>;

// `pipeline`: a stack of registered scorers with their weights, in order. An empty list is SPEC
// §6.7's default stack: session_affinity, static_weight, least_load, prefix_affinity, each 1.0.
// Errors: an unknown scorer, a scorer listed twice, a weight that is not finite and >= 0, or no
// weight > 0.
StackResult make_pipeline(std::span<const CandidateSpec> candidates, const BalancerDeps& deps,
                          std::span<const std::pair<std::string, double>> scorers);

// `predicted_latency` (SPEC §6.11): predicted_latency 1.0 + least_load 0.25.
StackResult make_predicted_latency(std::span<const CandidateSpec> candidates,
                                   const BalancerDeps& deps);
// `lora_aware` (SPEC §6.12): adapter_residency 1.0 + prefix_affinity 0.5 + least_load 0.25.
StackResult make_lora_aware(std::span<const CandidateSpec> candidates, const BalancerDeps& deps);
// `cheapest` (SPEC §6.13): cheapest 1.0 + least_load 0.25.
StackResult make_cheapest(std::span<const CandidateSpec> candidates, const BalancerDeps& deps);
// `least_kv_usage` (SPEC §18, the decode step's default): kv_headroom 1.0 + least_load 0.25.
StackResult make_least_kv_usage(std::span<const CandidateSpec> candidates,
                                const BalancerDeps& deps);
// `fastest` (SPEC §6.13): fastest 1.0 + least_load 0.25.
StackResult make_fastest(std::span<const CandidateSpec> candidates, const BalancerDeps& deps);
// `precise_cache_aware` (SPEC §6.8): kv_residency 1.0 + least_load 0.25; exact ties go to the
// candidate that served the fewest requests, then at random.
StackResult make_precise_cache_aware(std::span<const CandidateSpec> candidates,
                                     const BalancerDeps& deps);
// `lmcache_aware` (SPEC §6.9): lmcache_headroom 1.0 + least_load 0.25.
StackResult make_lmcache_aware(std::span<const CandidateSpec> candidates, const BalancerDeps& deps);

}  // namespace rolter
