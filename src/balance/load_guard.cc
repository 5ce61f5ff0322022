#include "balance/load_guard.h"

#include <algorithm>
#include <cmath>

namespace rolter {

EligibleLoads eligible_loads(size_t n, const Loads& loads, Eligible eligible) {
  EligibleLoads set;
  for (size_t i = 0; i < n; ++i) {
    if (!eligible(i)) continue;
    const uint32_t load = loads[i];
    if (set.count == 0 || load < set.least) {
      set.least = load;
      set.least_at = i;
    }
    set.total += load;
    ++set.count;
  }
  return set;
}

std::optional<uint64_t> load_ceiling(LoadGuard guard, const EligibleLoads& set) {
  if (set.count == 0) return std::nullopt;
  switch (guard) {
    case LoadGuard::kNone:
      return std::nullopt;
    case LoadGuard::kOverload: {
      // overloaded(load, least) <=> load > max(least + slack, factor x least).
      const auto relative = static_cast<uint64_t>(std::floor(kOverloadFactor * set.least));
      return std::max(uint64_t{set.least} + kOverloadSlack, relative);
    }
    case LoadGuard::kBoundedLoad: {
      // load < ceil((1 + eps)(m + 1) / n) <=> load <= that - 1; at least 1 since m + 1 >= 1.
      const double bound = std::ceil((1 + kBoundedLoadEpsilon) * static_cast<double>(set.total + 1) /
                                     static_cast<double>(set.count));
      return static_cast<uint64_t>(bound) - 1;
    }
  }
  return std::nullopt;
}

size_t clear_guarded(LoadGuard guard, std::span<char> mask, const Loads& loads) {
  const EligibleLoads set =
      eligible_loads(mask.size(), loads, [mask](size_t i) { return mask[i] != 0; });
  const std::optional<uint64_t> ceiling = load_ceiling(guard, set);
  if (!ceiling) return 0;
  size_t cleared = 0;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i] != 0 && i != set.least_at && loads[i] > *ceiling) {
      mask[i] = 0;
      ++cleared;
    }
  }
  return cleared;
}

const char* guard_reason(LoadGuard guard) {
  switch (guard) {
    case LoadGuard::kNone:
      return "";
    case LoadGuard::kOverload:
      return "overloaded (load > least + 2 and > 1.5 x least)";
    case LoadGuard::kBoundedLoad:
      return "above the bounded load (load >= ceil(1.25 x (in flight + 1) / candidates))";
  }
  return "";
}

}  // namespace rolter
