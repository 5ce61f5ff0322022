#include "balance/strategies/round_robin.h"

#include "balance/strategies/pick_helpers.h"

namespace rolter {

std::optional<size_t> RoundRobinBalancer::pick(const RouteContext& ctx, const Loads& loads) {
  // A mismatched Loads belongs to another candidate list: any index would be meaningless.
  if (count_ == 0 || loads.size() != count_) return std::nullopt;
  return static_cast<size_t>(next_.fetch_add(1, std::memory_order_relaxed) % count_);
}

std::optional<size_t> RoundRobinBalancer::pick_eligible(const RouteContext& ctx, const Loads& loads,
                                                        Eligible eligible) {
  if (count_ == 0 || loads.size() != count_) return std::nullopt;
  return rotate_to_eligible(next_, count_, eligible);
}

}  // namespace rolter
