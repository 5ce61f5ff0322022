// LoadBalancer: the balancer contract (SPEC §5).
//
// Lifetime: one balancer per route (or provider group) per snapshot, built once by the snapshot
// builder from the route's candidate list, and destroyed with the snapshot. A reload builds new
// balancers; an index never carries over.
//
// Thread-safety: every method may be called concurrently from all worker threads. Selection state
// (counters, smooth weights, tries, affinity tables) lives inside the balancer and is protected by
// atomics or fine-grained internal locking chosen by each strategy; the simple strategies are
// lock-free.
//
// Allocation: the simple strategies (round_robin, random, power_of_two, weighted,
// consistent_hash) make zero heap allocations per pick (tested in balance/allocation_test.cc).
//
// Usage:
//   auto lb = make_balancer("round_robin", candidates, deps).value();
//   auto idx = lb->pick_eligible(ctx, loads, [&](size_t i) { return !tried[i]; });
//   ... serve on candidates[*idx] ...
//   lb->observe(*idx, ctx);
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "balance/loads.h"
#include "balance/route_context.h"
#include "common/function_ref.h"

namespace rolter {

// eligible(i) says whether candidate i may take this attempt: not already tried in this request,
// not parked, healthy, breaker not open, allowed to the key.
using Eligible = FunctionRef<bool(size_t)>;

class LoadBalancer {
 public:
  virtual ~LoadBalancer() = default;

  // The strategy name, as written in rolter.toml.
  virtual std::string_view name() const = 0;

  // Picks a candidate index in [0, loads.size()), or nullopt when there is none.
  // REQUIRES: loads.size() equals the number of candidates the balancer was built with.
  virtual std::optional<size_t> pick(const RouteContext& ctx, const Loads& loads) = 0;

  // Picks among candidates for which eligible(i) is true. The default ignores eligibility and
  // calls pick(); the gateway then skips an ineligible answer itself and asks again. Strategies
  // whose comparison an ineligible candidate would distort (power_of_two, score stacks, policy
  // mode, cache_aware) override it and never return an ineligible index.
  virtual std::optional<size_t> pick_eligible(const RouteContext& ctx, const Loads& loads,
                                              Eligible eligible) {
    return pick(ctx, loads);
  }

  // Records that candidate `index` served the request described by ctx. Learning strategies
  // (affinity tables, tries) update their state; the default does nothing.
  virtual void observe(size_t index, const RouteContext& ctx) {}
};

}  // namespace rolter
