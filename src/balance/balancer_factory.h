// Builds a balancer for a strategy name (SPEC §6) over a candidate list.
//
// Called by the snapshot builder, once per route and once per provider group per snapshot.
// Thread-safety: pure; may be called from any thread.
#pragma once

#include <tl/expected.hpp>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "balance/candidate.h"
#include "balance/load_balancer.h"
#include "common/clock.h"
#include "common/random.h"

namespace rolter {

class PrefixSharing;

// What strategies may depend on. Both must outlive every balancer built with them.
struct BalancerDeps {
  Random* random = &default_random();
  const Clock* clock = &default_clock();
  // Where prefix trees share what they learn with the other gateway nodes (SPEC §6.17); null =
  // not shared. Must outlive every balancer built with it.
  PrefixSharing* sharing = nullptr;
  // The pool being built (its route, group or pinned provider), naming its shared trees.
  std::string_view pool;
};

// A pipeline route's scorers and weights ([routes.pipeline]); empty = the default stack.
using PipelineScorers = std::span<const std::pair<std::string, double>>;

struct PolicySettings;
struct AdaptivePolicy;
class AdaptiveRouteState;

// What a route's config adds to its strategy name. Each field is read only by the strategy named;
// pointers must outlive the balancer.
struct RouteSettings {
  PipelineScorers pipeline;               // "pipeline"; empty = the default stack
  const PolicySettings* policy = nullptr;  // "policy"; null = no plugin enabled
  // "adaptive": the deployment-wide policy ([adaptive_routing], sanitised), and the route's
  // learned state, which outlives reloads (owned by the LoadTracker). Null policy = disabled.
  const AdaptivePolicy* adaptive = nullptr;
  AdaptiveRouteState* adaptive_state = nullptr;
};

// Returns the balancer, or a message naming the problem (unknown strategy or scorer, bad weights).
tl::expected<std::unique_ptr<LoadBalancer>, std::string> make_balancer(
    std::string_view strategy, std::span<const CandidateSpec> candidates,
    const BalancerDeps& deps, const RouteSettings& settings = {});

// The strategy registry's answers (strategy_registry.h), for callers that need only one.
// Whether `strategy = ` takes this name (policy mode is checked as a mode of its own).
bool is_known_strategy(std::string_view strategy);

// Whether the strategy reads candidate weights (SPEC §6: weighted, pipeline, adaptive, policy).
bool strategy_reads_weights(std::string_view strategy);

// Whether the strategy scores the request's token ids (SPEC §6.8, §6.14: precise_cache_aware,
// kv_cost), so a request without them is worth tokenising first (SPEC §6.15, tokenize = "engine").
bool strategy_reads_token_ids(std::string_view strategy);

// The known strategy names, for error messages and --help.
std::span<const std::string_view> known_strategies();

}  // namespace rolter
