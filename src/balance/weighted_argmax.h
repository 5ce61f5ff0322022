// weighted_argmax: the last step of every score-summing balancer (ScoredStack's pipelines, policy
// mode's PolicyBalancer): the eligible candidate with the highest total, ties broken uniformly at
// random.
//
//   size_t best = weighted_argmax(totals, eligible, /*tolerance=*/0, no_rank, random);
//
// One pass over the candidates. Two totals tie when they differ by at most `tolerance` times the
// larger magnitude (0 = exactly equal). Among tied totals, the lowest `rank(i)` wins first
// (ScoredStack's fewest-served rule; no_rank for none), and what is still tied is settled by
// reservoir sampling: the k-th tied candidate replaces the choice with probability 1/k, so each
// is chosen with probability 1/ties. Returns totals.size() when nothing is eligible.
//
// Header-only: it sits on the pick path, allocates nothing, and inlines into its callers.
// Thread-safety: pure, apart from the draws on `random`.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/random.h"

namespace rolter {

// No secondary rule: every tied total ranks alike.
inline constexpr auto no_rank = [](size_t) { return uint64_t{0}; };

inline bool same_total(double a, double b, double tolerance) {
  return std::abs(a - b) <= tolerance * std::max(std::abs(a), std::abs(b));
}

template <typename Eligible, typename Rank>
size_t weighted_argmax(std::span<const double> totals, const Eligible& eligible, double tolerance,
                       const Rank& rank, Random& random) {
  const size_t n = totals.size();
  size_t best = n;
  size_t ties = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!eligible(i)) continue;
    if (best == n) {
      best = i;
      ties = 1;
      continue;
    }
    const bool tied = same_total(totals[i], totals[best], tolerance);
    if ((!tied && totals[i] > totals[best]) || (tied && rank(i) < rank(best))) {
      best = i;
      ties = 1;
    } else if (tied && rank(i) == rank(best)) {
      ++ties;
      if (random.uniform(ties) == 0) best = i;
    }
  }
  return best;
}

}  // namespace rolter
