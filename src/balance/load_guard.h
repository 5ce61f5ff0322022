// Load guards: a strategy that prefers a candidate for a reason other than its load (prefix
// affinity, measured or predicted latency, a hash, a draw) passes over a candidate whose load is
// above a ceiling computed over the eligible set. No signal that lags the queue (an average that
// only learns once the queue has drained, a model that has not yet seen this depth) can then pile
// requests onto one engine (SPEC §6.16). Two rules:
//
//   - kOverload, SPEC §6.6: a candidate is overloaded when its load > least + kOverloadSlack and
//     > kOverloadFactor x least (least over the eligible candidates). Loose on purpose: cache_aware
//     keeps a warm replica until it is clearly overloaded, as its hit ratio needs.
//   - kBoundedLoad, consistent hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam,
//     2018): with m requests in flight over n eligible candidates, a candidate may take the next
//     one only while its load < ceil((1 + kBoundedLoadEpsilon) x (m + 1) / n). Tight: no
//     candidate runs more than 25% above the mean, whatever its latency or hash says.
//
// Either way the least-loaded eligible candidate is under the ceiling, so guarding never empties a
// non-empty eligible set.
//
// Thread-safety: pure functions. No allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "balance/load_balancer.h"
#include "balance/loads.h"

namespace rolter {

enum class LoadGuard { kNone, kOverload, kBoundedLoad };

// +2 and 1.5x: a preferred replica keeps its requests until clearly overloaded; the absolute part
// keeps near-idle replicas (2 vs 0) preferred, the relative part keeps busy ones (40 vs 30).
inline constexpr uint32_t kOverloadSlack = 2;
inline constexpr double kOverloadFactor = 1.5;
// 0.25: measured on the public traces (docs/benchmarks.md, "No herding").
inline constexpr double kBoundedLoadEpsilon = 0.25;

// The guard of the strategies that rank by latency (fastest, predicted_latency, adaptive's blend)
// and of those that choose with no regard to load (random, consistent_hash).
inline constexpr LoadGuard kLatencyGuard = LoadGuard::kBoundedLoad;
inline constexpr LoadGuard kSpreadGuard = LoadGuard::kBoundedLoad;

// The kOverload rule for one candidate.
inline bool overloaded(uint32_t load, uint32_t min_load) {
  return load > uint64_t{min_load} + kOverloadSlack && load > kOverloadFactor * min_load;
}

// cache_aware's guard: the same slack and factor over the eligible candidates' mean load, not
// their least. The least is the most fragile reading of a fleet's load: with several gateway nodes
// reading the engines' scraped load, an engine that other nodes have just sent work to still
// reads 0 until the next scrape, and against a least of 0 every warm engine with 3 requests is
// "overloaded", so conversations were spread off their cache (3 nodes kept 0.89x one node's hit
// ratio). The mean moves by 1/n when one engine's reading is stale. Measured in-process too: the
// share of the pooled bound rose on three of four replays (conversation 4x 84.9% -> 94.9%,
// synthetic 4x 74.2% -> 89.5%) and TTFT p99 fell with it (docs/benchmarks.md).
inline bool overloaded_against_mean(uint32_t load, double mean_load) {
  return load > mean_load + kOverloadSlack && load > kOverloadFactor * mean_load;
}

// The eligible set's loads, read once each.
struct EligibleLoads {
  size_t count = 0;     // eligible candidates
  uint64_t total = 0;   // their loads summed
  uint32_t least = 0;   // the least of them (0 when count == 0)
  size_t least_at = 0;  // which candidate has it (the first such)
};
EligibleLoads eligible_loads(size_t n, const Loads& loads, Eligible eligible);

// The highest load a candidate may carry and still be picked under `guard`; nullopt for kNone or
// an empty set (no ceiling).
std::optional<uint64_t> load_ceiling(LoadGuard guard, const EligibleLoads& set);

// Clears mask[i] (1 = eligible) for every eligible candidate above the ceiling of `guard` over the
// set mask describes. Returns how many it cleared; the one that had the least load always stays,
// even if its load has grown since. REQUIRES: mask.size() <= loads.size().
size_t clear_guarded(LoadGuard guard, std::span<char> mask, const Loads& loads);

// The guard's one-line explanation, for explain output.
const char* guard_reason(LoadGuard guard);

}  // namespace rolter
