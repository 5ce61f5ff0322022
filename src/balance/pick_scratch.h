// PickScratch: one thread's working buffers for one pick of a balancer that scores every
// candidate (score stacks, policy mode, adaptive): which candidates are eligible, and kColumns
// columns of doubles (scores, totals, ...), one value per candidate.
//
// Buffers only grow: a thread pays one allocation the first time it sees a larger candidate list
// and none afterwards, so steady-state picks allocate nothing.
//
// Thread-safety: none; each balancer keeps its own `thread_local` instance. A balancer that calls
// another during its pick (adaptive asks its fallback stack) must not share an instance with it:
// the inner pick would overwrite the outer one's buffers.
//
//   thread_local PickScratch<2> scratch;
//   const size_t eligible_count = scratch.begin(count_, eligible);
//   if (eligible_count == 0) return std::nullopt;
//   std::span<double> totals = scratch.column(1, count_);
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "balance/load_balancer.h"

namespace rolter {

template <size_t kColumns>
class PickScratch {
 public:
  // Sizes the buffers for n candidates and asks `eligible` once per candidate, so every step of
  // the pick sees one eligible set even if the caller's answer would change mid-pick. Returns how
  // many are eligible. Column values are left as they were: each pick writes what it reads.
  size_t begin(size_t n, Eligible eligible) {
    ensure(n);
    size_t count = 0;
    for (size_t i = 0; i < n; ++i) {
      eligible_[i] = eligible(i) ? 1 : 0;
      count += eligible_[i];
    }
    return count;
  }

  // Sizes the buffers for n candidates without touching the eligible set.
  void ensure(size_t n) {
    if (eligible_.size() >= n) return;
    eligible_.resize(n);
    for (auto& column : columns_) column.resize(n);
  }

  bool eligible(size_t i) const { return eligible_[i] != 0; }
  // The eligible set of the last begin(), 1 = eligible (char, not bool: std::vector<bool> packs
  // bits and is slower to read).
  std::span<const char> mask(size_t n) const { return {eligible_.data(), n}; }
  // The same set, to narrow it (balance/load_guard.h) before scoring.
  std::span<char> mutable_mask(size_t n) { return {eligible_.data(), n}; }
  // An Eligible predicate over that set; valid while this scratch is.
  auto predicate() const {
    return [this](size_t i) { return eligible_[i] != 0; };
  }
  std::span<double> column(size_t c, size_t n) { return {columns_[c].data(), n}; }

 private:
  std::vector<char> eligible_;
  std::array<std::vector<double>, kColumns> columns_;
};

}  // namespace rolter
