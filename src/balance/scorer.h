// Scorer: one signal in a score stack (SPEC §6.7). A scorer is one small class.
//
// A ScoredStack (balance/scored_stack.h) asks each of its scorers for one value in [0, 1] per
// candidate, multiplies by the scorer's weight, sums, and takes the argmax among eligible
// candidates. The stack strategies (balance/stacks.h: pipeline, predicted_latency, lora_aware,
// cheapest, fastest, precise_cache_aware, lmcache_aware, and adaptive's fallback) are stacks of
// scorers; scorer_registry.h names the scorers a [routes.pipeline] table may use.
//
// Thread-safety: like LoadBalancer, score() and observe() are called concurrently from all worker
// threads. Allocation: score() must not allocate on the simple scorers.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "balance/load_balancer.h"

namespace rolter {

class Scorer {
 public:
  virtual ~Scorer() = default;
  virtual std::string_view name() const = 0;

  // Writes out[i] in [0, 1] for every candidate i (higher is better). out.size() == loads.size().
  // Values written for ineligible candidates are ignored, but scorers that normalise over the
  // candidates (least load) normalise over eligible ones only.
  virtual void score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                     std::span<double> out) = 0;

  // Records that candidate `index` served ctx (session tables, tries). Default: nothing.
  virtual void observe(size_t index, const RouteContext& ctx) {}
};

}  // namespace rolter
