#include "balance/scorer_registry.h"

#include <array>
#include <cstddef>

#include "balance/scorers/adapter_residency.h"
#include "balance/scorers/fastest.h"
#include "balance/scorers/kv_headroom.h"
#include "balance/scorers/kv_residency.h"
#include "balance/scorers/least_load.h"
#include "balance/scorers/lmcache_headroom.h"
#include "balance/scorers/predicted_latency.h"
#include "balance/scorers/prefix_affinity.h"
#include "balance/scorers/price.h"
#include "balance/scorers/session_affinity.h"
#include "balance/scorers/static_weight.h"

namespace rolter {
namespace {

using Made = std::unique_ptr<Scorer>;

// How a scorer is built, by what its constructor takes. deps arrive with random and clock set.
template <typename T>
Made from_nothing(const ScorerDeps&) {
  return std::make_unique<T>();
}
template <typename T>
Made from_candidates(const ScorerDeps& deps) {
  return std::make_unique<T>(deps.candidates);
}
template <typename T>
Made from_candidate_count(const ScorerDeps& deps) {
  return std::make_unique<T>(deps.candidates.size());
}
Made shared_prefix_affinity(const ScorerDeps& deps) {
  return std::make_unique<PrefixAffinityScorer>(deps.candidates, deps.sharing,
                                                std::string(deps.shared_tree));
}
template <typename T>
Made from_clock(const ScorerDeps& deps) {
  return std::make_unique<T>(*deps.clock);
}

struct Registration {
  std::string_view name;
  Made (*make)(const ScorerDeps&);
};

// One line per scorer: its name in config, and how to build it.
constexpr Registration kScorers[] = {
    {"session_affinity", &from_clock<SessionAffinityScorer>},
    {"static_weight", &from_candidates<StaticWeightScorer>},
    {"least_load", &from_nothing<LeastLoadScorer>},
    {"prefix_affinity", &shared_prefix_affinity},
    {"predicted_latency", &from_candidates<PredictedLatencyScorer>},
    {"fastest", &from_candidates<LatencyScorer>},
    {"cheapest", &from_candidates<PriceScorer>},
    {"adapter_residency", &from_candidates<AdapterResidencyScorer>},
    {"kv_residency", &from_candidates<KvResidencyScorer>},
    {"kv_headroom", &from_nothing<KvHeadroomScorer>},
    {"lmcache_headroom", &from_candidates<LmcacheHeadroomScorer>},
};

constexpr auto kNames = [] {
  std::array<std::string_view, std::size(kScorers)> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kScorers[i].name;
  return names;
}();

}  // namespace

std::unique_ptr<Scorer> make_scorer(std::string_view name, const ScorerDeps& deps) {
  ScorerDeps resolved = deps;
  if (resolved.random == nullptr) resolved.random = &default_random();
  if (resolved.clock == nullptr) resolved.clock = &default_clock();
  for (const Registration& r : kScorers) {
    if (r.name == name) return r.make(resolved);
  }
  return nullptr;
}

std::span<const std::string_view> known_scorers() { return kNames; }

bool is_known_scorer(std::string_view name) {
  for (std::string_view known : kNames) {
    if (known == name) return true;
  }
  return false;
}

}  // namespace rolter
