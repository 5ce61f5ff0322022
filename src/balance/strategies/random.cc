#include "balance/strategies/random.h"

#include "balance/load_guard.h"
#include "balance/strategies/pick_helpers.h"

namespace rolter {

std::optional<size_t> RandomBalancer::pick(const RouteContext& ctx, const Loads& loads) {
  return pick_eligible(ctx, loads, [](size_t) { return true; });
}

std::optional<size_t> RandomBalancer::pick_eligible(const RouteContext& ctx, const Loads& loads,
                                                    Eligible eligible) {
  // A mismatched Loads belongs to another candidate list: any index would be meaningless.
  if (count_ == 0 || loads.size() != count_) return std::nullopt;
  const std::optional<uint64_t> ceiling =
      load_ceiling(kSpreadGuard, eligible_loads(count_, loads, eligible));
  if (!ceiling) return std::nullopt;
  const auto guarded = uniform_eligible(
      random_, count_, [&](size_t i) { return eligible(i) && loads[i] <= *ceiling; });
  // Loads move between reads: should every one have grown past the guard meanwhile, any eligible.
  return guarded ? guarded : uniform_eligible(random_, count_, eligible);
}

}  // namespace rolter
