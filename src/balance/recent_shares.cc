#include "balance/recent_shares.h"

#include <algorithm>

namespace rolter {

RecentShares::RecentShares(size_t candidate_count, const Clock& clock)
    : count_(candidate_count),
      clock_(clock),
      origin_(clock.now()),
      buckets_(candidate_count * kBuckets, 0),
      totals_(candidate_count, 0) {}

void RecentShares::advance(Clock::TimePoint now) {
  const int64_t second =
      std::chrono::duration_cast<std::chrono::seconds>(now - origin_).count();
  if (second <= second_) return;
  if (second - second_ >= static_cast<int64_t>(kBuckets)) {
    std::fill(buckets_.begin(), buckets_.end(), 0);
    std::fill(totals_.begin(), totals_.end(), 0);
    second_ = second;
    return;
  }
  while (second_ < second) {
    ++second_;
    const size_t b = static_cast<size_t>(second_ % static_cast<int64_t>(kBuckets));
    for (size_t i = 0; i < count_; ++i) {
      totals_[i] -= buckets_[i * kBuckets + b];
      buckets_[i * kBuckets + b] = 0;
    }
  }
}

void RecentShares::add(size_t i) {
  if (i >= count_) return;
  MutexLock lock(mutex_);
  advance(clock_.now());
  ++buckets_[i * kBuckets + static_cast<size_t>(second_ % static_cast<int64_t>(kBuckets))];
  ++totals_[i];
}

void RecentShares::read(std::span<uint32_t> out) {
  MutexLock lock(mutex_);
  advance(clock_.now());
  const size_t n = std::min(out.size(), count_);
  std::copy_n(totals_.begin(), n, out.begin());
}

size_t clear_above_share(std::span<char> mask, std::span<const uint32_t> recent,
                         std::span<const double> weights, FunctionRef<bool(size_t)> loses_nothing) {
  uint64_t total = 0;
  double weight_total = 0;
  size_t eligible = 0;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i] == 0) continue;
    total += recent[i];
    if (!weights.empty()) weight_total += weights[i];
    ++eligible;
  }
  if (eligible < 2) return 0;
  const bool weighted = weight_total > 0;
  const auto weight = [&](size_t i) { return weighted ? weights[i] : 1.0; };
  // Each candidate's ceiling is `scale` x its weight.
  const double scale = (1 + kEvenShareSlack) * static_cast<double>(total + 1) /
                       (weighted ? weight_total : static_cast<double>(eligible));
  const auto below = [&](size_t i) { return static_cast<double>(recent[i]) < scale * weight(i); };
  bool free_to_place = false;
  for (size_t i = 0; i < mask.size() && !free_to_place; ++i) {
    free_to_place = mask[i] != 0 && below(i) && loses_nothing(i);
  }
  if (!free_to_place) return 0;
  size_t cleared = 0;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i] != 0 && !below(i)) {
      mask[i] = 0;
      ++cleared;
    }
  }
  return cleared;
}

}  // namespace rolter
