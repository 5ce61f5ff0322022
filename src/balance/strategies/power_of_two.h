// PowerOfTwoBalancer: SPEC §6.3. Draws two distinct eligible candidates uniformly at random and
// returns the one with fewer requests in flight; equal loads are settled by a coin flip.
//
// Honours eligibility (an ineligible candidate would otherwise win or lose comparisons it can
// take no traffic from): never returns an ineligible index; one eligible candidate is returned
// as is; none gives nullopt.
//
// Thread-safety: stateless apart from the injected Random (ThreadLocalRandom in production), and
// each load is read once per pick. No allocation per pick.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "balance/load_balancer.h"
#include "common/random.h"
#include "balance/strategy_names.h"

namespace rolter {

class PowerOfTwoBalancer final : public LoadBalancer {
 public:
  // `random` must outlive the balancer.
  PowerOfTwoBalancer(size_t candidate_count, Random& random)
      : count_(candidate_count), random_(random) {}

  std::string_view name() const override { return strategy::kPowerOfTwo; }
  std::optional<size_t> pick(const RouteContext& ctx, const Loads& loads) override;
  std::optional<size_t> pick_eligible(const RouteContext& ctx, const Loads& loads,
                                      Eligible eligible) override;

 private:
  size_t lower_load(const Loads& loads, size_t a, size_t b);

  const size_t count_;
  Random& random_;
};

}  // namespace rolter
