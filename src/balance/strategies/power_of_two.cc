#include "balance/strategies/power_of_two.h"

#include "balance/strategies/pick_helpers.h"

namespace rolter {

size_t PowerOfTwoBalancer::lower_load(const Loads& loads, size_t a, size_t b) {
  const uint32_t load_a = loads[a];
  const uint32_t load_b = loads[b];
  if (load_a != load_b) return load_a < load_b ? a : b;
  return random_.uniform(2) == 0 ? a : b;
}

std::optional<size_t> PowerOfTwoBalancer::pick(const RouteContext& ctx, const Loads& loads) {
  // A mismatched Loads belongs to another candidate list: any index would be meaningless.
  if (count_ == 0 || loads.size() != count_) return std::nullopt;
  if (count_ == 1) return 0;
  const size_t a = random_.uniform(count_);
  size_t b = random_.uniform(count_ - 1);
  if (b >= a) ++b;  // uniform over the count_ - 1 others
  return lower_load(loads, a, b);
}

std::optional<size_t> PowerOfTwoBalancer::pick_eligible(const RouteContext& ctx, const Loads& loads,
                                                        Eligible eligible) {
  if (loads.size() != count_) return std::nullopt;
  const std::optional<size_t> a = uniform_eligible(random_, count_, eligible);
  if (!a) return std::nullopt;
  const std::optional<size_t> b = uniform_eligible(random_, count_, eligible, *a);
  if (!b) return a;
  return lower_load(loads, *a, *b);
}

}  // namespace rolter
