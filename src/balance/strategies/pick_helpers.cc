#include "balance/strategies/pick_helpers.h"

namespace rolter {
namespace {

// 4 draws: with half the candidates ineligible all four miss only 1 time in 16, and with most
// eligible the first draw nearly always succeeds; beyond that the counting pass is cheaper.
constexpr int kRejectionDraws = 4;

}  // namespace

std::optional<size_t> rotate_to_eligible(std::atomic<uint64_t>& counter, size_t n,
                                         FunctionRef<bool(size_t)> ok) {
  const size_t start = static_cast<size_t>(counter.fetch_add(1, std::memory_order_relaxed) % n);
  size_t position = start;
  for (size_t skipped = 0; skipped < n; ++skipped) {
    if (ok(position)) {
      if (skipped > 0) counter.fetch_add(skipped, std::memory_order_relaxed);
      return position;
    }
    if (++position == n) position = 0;
  }
  return std::nullopt;
}

std::optional<size_t> uniform_eligible(Random& random, size_t n, Eligible eligible,
                                       size_t exclude) {
  if (n == 0) return std::nullopt;
  for (int draw = 0; draw < kRejectionDraws; ++draw) {
    const size_t i = random.uniform(n);
    if (i != exclude && eligible(i)) return i;
  }
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i != exclude && eligible(i)) ++count;
  }
  if (count == 0) return std::nullopt;
  size_t target = random.uniform(count);
  for (size_t i = 0; i < n; ++i) {
    if (i != exclude && eligible(i)) {
      if (target == 0) return i;
      --target;
    }
  }
  // Unreachable while eligible() answers the same way twice; a predicate that changes its mind
  // mid-pick gets no candidate rather than a wrong one.
  return std::nullopt;
}

}  // namespace rolter
