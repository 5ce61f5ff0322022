#include "balance/stacks.h"

#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include "balance/scored_stack.h"
#include "balance/prefix/prefix_sharing.h"
#include "balance/scorer_registry.h"
#include "common/join.h"
#include "balance/strategy_names.h"

namespace rolter {
namespace {

// One scorer of a stack: its registered name and its weight.
struct Layer {
  std::string_view scorer;
  double weight;
};

constexpr Layer kPipelineDefault[] = {
    {"session_affinity", kPipelineDefaultWeight},
    {"static_weight", kPipelineDefaultWeight},
    {"least_load", kPipelineDefaultWeight},
    {"prefix_affinity", kPipelineDefaultWeight},
};
constexpr Layer kPredictedLatency[] = {
    {"predicted_latency", kPredictedLatencyWeight},
    {"least_load", kTieBreakLeastLoadWeight},
};
constexpr Layer kLoraAware[] = {
    {"adapter_residency", kAdapterResidencyWeight},
    {"prefix_affinity", kLoraPrefixAffinityWeight},
    {"least_load", kTieBreakLeastLoadWeight},
};
constexpr Layer kCheapest[] = {
    {"cheapest", kPriceWeight},
    {"least_load", kTieBreakLeastLoadWeight},
};
constexpr Layer kPreciseCacheAware[] = {
    {"kv_residency", kKvResidencyWeight},
    {"least_load", kTieBreakLeastLoadWeight},
};
constexpr Layer kFastest[] = {
    {"fastest", kLatencyWeight},
    {"least_load", kTieBreakLeastLoadWeight},
};
constexpr Layer kLeastKvUsage[] = {
    {"kv_headroom", kKvHeadroomWeight},
    {"least_load", kTieBreakLeastLoadWeight},
};
constexpr Layer kLmcacheAware[] = {
    {"lmcache_headroom", kLmcacheHeadroomWeight},
    {"least_load", kTieBreakLeastLoadWeight},
};

// The scorers that say what a candidate holds of a request: the affinity entries of even shares
// (balance/scored_stack.h).
constexpr std::string_view kAffinityScorers[] = {"session_affinity", "prefix_affinity",
                                                 "kv_residency", "adapter_residency"};

// Which stacks keep even shares, and by what: every candidate the same, or its weight (only the
// strategies that read weights, SPEC §4: the pipeline).
enum class Shares { kNone, kEqual, kWeighted };

ScoredStack::EvenShares even_shares_for(std::span<const Layer> layers,
                                        std::span<const CandidateSpec> candidates,
                                        const Clock* clock, Shares kind) {
  ScoredStack::EvenShares shares{.clock = clock};
  for (size_t e = 0; e < layers.size(); ++e) {
    for (std::string_view affinity : kAffinityScorers) {
      if (layers[e].scorer == affinity) shares.affinity |= ScoredStack::entry_bit(e);
    }
  }
  if (kind == Shares::kWeighted) {
    shares.weights.reserve(candidates.size());
    for (const CandidateSpec& c : candidates) shares.weights.push_back(c.weight);
  }
  return shares;
}

// The first problem with a stack's layers, or nullopt when it can be built.
std::optional<std::string> check_layers(std::span<const Layer> layers) {
  bool any_positive = false;
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& layer = layers[i];
    const std::string name(layer.scorer);
    if (!is_known_scorer(layer.scorer)) {
      return "unknown scorer \"" + name + "\"; known scorers: " + join(known_scorers());
    }
    for (size_t j = 0; j < i; ++j) {
      if (layers[j].scorer == layer.scorer) return "scorer \"" + name + "\" is listed twice";
    }
    if (!std::isfinite(layer.weight) || layer.weight < 0) {
      return "scorer \"" + name + "\" has weight " + std::to_string(layer.weight) +
             ": weights must be finite and >= 0";
    }
    any_positive = any_positive || layer.weight > 0;
  }
  if (!any_positive) return std::string("a score stack needs at least one scorer with weight > 0");
  return std::nullopt;
}

StackResult build_stack(std::string_view name, std::span<const CandidateSpec> candidates,
                        const BalancerDeps& deps, std::span<const Layer> layers,
                        ScoredStack::TieBreak tie_break = ScoredStack::TieBreak::kRandom,
                        LoadGuard guard = LoadGuard::kNone, Shares kind = Shares::kNone) {
  if (auto problem = check_layers(layers)) return tl::unexpected(std::move(*problem));
  Random& random = deps.random != nullptr ? *deps.random : default_random();
  const std::string shared_tree = shared_tree_name(deps.pool, name);
  const ScorerDeps scorer_deps{.candidates = candidates,
                               .random = &random,
                               .clock = deps.clock,
                               .sharing = deps.sharing,
                               .shared_tree = shared_tree};
  std::vector<ScoredStack::Entry> entries;
  entries.reserve(layers.size());
  for (const Layer& layer : layers) {
    auto scorer = make_scorer(layer.scorer, scorer_deps);
    // is_known_scorer() and make_scorer() read the same table; this only guards a broken entry.
    if (scorer == nullptr) {
      return tl::unexpected("scorer \"" + std::string(layer.scorer) + "\" could not be built");
    }
    entries.push_back({std::move(scorer), layer.weight});
  }
  std::optional<ScoredStack::EvenShares> shares;
  if (kind != Shares::kNone) shares = even_shares_for(layers, candidates, deps.clock, kind);
  return std::make_unique<ScoredStack>(std::string(name), candidates.size(), std::move(entries),
                                       random, tie_break, guard, std::move(shares));
}

}  // namespace

StackResult make_pipeline(std::span<const CandidateSpec> candidates, const BalancerDeps& deps,
                          std::span<const std::pair<std::string, double>> scorers) {
  std::vector<Layer> custom;
  custom.reserve(scorers.size());
  for (const auto& [scorer, weight] : scorers) custom.push_back({scorer, weight});
  const std::span<const Layer> layers = scorers.empty() ? std::span<const Layer>(kPipelineDefault)
                                                        : std::span<const Layer>(custom);
  // Like every stack that keeps requests where their prefix or session is, the pipeline keeps even
  // shares (balance/scored_stack.h), weighted as its static_weight scorer is.
  return build_stack(strategy::kPipeline, candidates, deps, layers, ScoredStack::TieBreak::kRandom,
                     LoadGuard::kNone, Shares::kWeighted);
}

StackResult make_predicted_latency(std::span<const CandidateSpec> candidates,
                                   const BalancerDeps& deps) {
  // Ranked by latency: the load guard keeps a model that has not yet seen a queue from building one
  // (SPEC §6.16).
  return build_stack(strategy::kPredictedLatency, candidates, deps, kPredictedLatency,
                     ScoredStack::TieBreak::kRandom, kLatencyGuard);
}

StackResult make_lora_aware(std::span<const CandidateSpec> candidates, const BalancerDeps& deps) {
  return build_stack(strategy::kLoraAware, candidates, deps, kLoraAware,
                     ScoredStack::TieBreak::kRandom, LoadGuard::kNone, Shares::kEqual);
}

StackResult make_cheapest(std::span<const CandidateSpec> candidates, const BalancerDeps& deps) {
  return build_stack(strategy::kCheapest, candidates, deps, kCheapest);
}

StackResult make_least_kv_usage(std::span<const CandidateSpec> candidates,
                                const BalancerDeps& deps) {
  return build_stack(strategy::kLeastKvUsage, candidates, deps, kLeastKvUsage);
}

StackResult make_fastest(std::span<const CandidateSpec> candidates, const BalancerDeps& deps) {
  return build_stack(strategy::kFastest, candidates, deps, kFastest, ScoredStack::TieBreak::kRandom,
                     kLatencyGuard);
}

StackResult make_precise_cache_aware(std::span<const CandidateSpec> candidates,
                                     const BalancerDeps& deps) {
  // Ties (a new conversation on an idle fleet) go to the engine that served the fewest, as in
  // cache_aware: random draws would let the engines' shares drift apart. And a request that loses
  // no KV residency by it goes to an engine below its share of the last minute's requests, as in
  // kv_cost (balance/scored_stack.h, "Even shares").
  return build_stack(strategy::kPreciseCacheAware, candidates, deps, kPreciseCacheAware,
                     ScoredStack::TieBreak::kFewestServed, LoadGuard::kNone, Shares::kEqual);
}

StackResult make_lmcache_aware(std::span<const CandidateSpec> candidates,
                               const BalancerDeps& deps) {
  return build_stack(strategy::kLmcacheAware, candidates, deps, kLmcacheAware);
}

}  // namespace rolter
