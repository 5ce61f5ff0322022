#include "balance/strategies/random.h"

#include "balance/strategies/pick_helpers.h"

namespace rolter {

std::optional<size_t> RandomBalancer::pick(const RouteContext& ctx, const Loads& loads) {
  // A mismatched Loads belongs to another candidate list: any index would be meaningless.
  if (count_ == 0 || loads.size() != count_) return std::nullopt;
  return random_.uniform(count_);
}

std::optional<size_t> RandomBalancer::pick_eligible(const RouteContext& ctx, const Loads& loads,
                                                    Eligible eligible) {
  if (loads.size() != count_) return std::nullopt;
  return uniform_eligible(random_, count_, eligible);
}

}  // namespace rolter
