// Small building blocks shared by the simple strategies: a rotating walk over a shared counter and
// an exact uniform draw among eligible candidates. Neither allocates.
//
// Thread-safety: rotate_to_eligible() may be called concurrently on the same counter (it only uses
// relaxed atomic adds). uniform_eligible() is as thread-safe as the Random it is given.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "balance/load_balancer.h"
#include "common/function_ref.h"
#include "common/random.h"

namespace rolter {

// Takes the next position from `counter` (modulo n) and walks forward to the first position p in
// [0, n) with ok(p), wrapping once. Returns that position, or nullopt when none is ok.
//
// When the walk skips k positions it also advances the counter by k, so the next caller starts
// after the position just returned: a candidate that stays ineligible for a while then does not
// hand a double share to its successor. Under concurrency the extra advance is best-effort (another
// thread may interleave), which only perturbs the order, never correctness.
// REQUIRES: n > 0.
std::optional<size_t> rotate_to_eligible(std::atomic<uint64_t>& counter, size_t n,
                                         FunctionRef<bool(size_t)> ok);

// Sentinel for "exclude nothing" in uniform_eligible().
inline constexpr size_t kNoIndex = static_cast<size_t>(-1);

// Returns an index drawn uniformly at random from {i in [0, n) : i != exclude && eligible(i)}, or
// nullopt when that set is empty.
//
// A few rejection draws first (cheap when most candidates are eligible, the common case), then one
// counting pass and one draw over the eligible set. Each stage is exactly uniform over the set, so
// the mixture is exactly uniform too; the cost is bounded by kRejectionDraws + 2n eligibility
// calls.
std::optional<size_t> uniform_eligible(Random& random, size_t n, Eligible eligible,
                                       size_t exclude = kNoIndex);

// Among the indexes i in [0, n) with in_set(i), the one with the smallest key(i) (any type with
// <, e.g. a std::pair for "by load, then by requests served"); exact ties uniformly at random
// (reservoir sampling: the k-th tie replaces the choice with probability 1/k). n when there is
// none. Allocates nothing.
template <typename InSet, typename Key>
size_t smallest_among(size_t n, InSet in_set, Key key, Random& random) {
  size_t chosen = n;
  size_t ties = 0;
  decltype(key(size_t{0})) smallest{};
  for (size_t i = 0; i < n; ++i) {
    if (!in_set(i)) continue;
    const auto k = key(i);
    if (chosen == n || k < smallest) {
      chosen = i;
      smallest = k;
      ties = 1;
    } else if (!(smallest < k) && random.uniform(++ties) == 0) {
      chosen = i;
    }
  }
  return chosen;
}

}  // namespace rolter
