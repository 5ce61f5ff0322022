// RandomBalancer: SPEC §6.2. A uniform draw over the eligible candidates under the bounded load
// (kSpreadGuard, balance/load_guard.h, SPEC §6.16): draws alone pile requests on whichever engine
// the dice favour for a while, and a queue built that way costs more than round-robin's.
//
// Thread-safety: stateless apart from the injected Random, so it is exactly as thread-safe as that
// source (ThreadLocalRandom in production: safe from every worker). No allocation per pick.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "balance/load_balancer.h"
#include "common/random.h"
#include "balance/strategy_names.h"

namespace rolter {

class RandomBalancer final : public LoadBalancer {
 public:
  // `random` must outlive the balancer.
  RandomBalancer(size_t candidate_count, Random& random)
      : count_(candidate_count), random_(random) {}

  std::string_view name() const override { return strategy::kRandom; }
  std::optional<size_t> pick(const RouteContext& ctx, const Loads& loads) override;
  // Exactly uniform over the eligible candidates under the load guard (uniform_eligible()).
  std::optional<size_t> pick_eligible(const RouteContext& ctx, const Loads& loads,
                                      Eligible eligible) override;

 private:
  const size_t count_;
  Random& random_;
};

}  // namespace rolter
