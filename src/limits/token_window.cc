#include "limits/token_window.h"

namespace rolter {
namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

}  // namespace

TokenWindow::Summary TokenWindow::summary(int64_t now_ms) const {
  Summary s;
  const int64_t now_s = second_of(now_ms);
  // Oldest first, so the first bucket holding tokens is the oldest. The slot steps with the
  // second instead of being recomputed: a division per bucket would cost more than the walk.
  size_t slot = slot_of(now_s + 1);
  for (int64_t second = now_s - (kBuckets - 1); second <= now_s; ++second, slot = next(slot)) {
    const Bucket& b = buckets_[slot];
    if (b.second != second || b.tokens == 0) continue;
    if (s.used == 0) s.oldest_second = second;
    s.used = saturating_add(s.used, b.tokens);
  }
  return s;
}

int64_t TokenWindow::retry_after_ms(uint64_t tpm, uint64_t estimate, int64_t now_ms) const {
  if (estimate > tpm) return kEstimateTooLargeRetryMs;
  const Summary s = summary(now_ms);
  if (s.used <= tpm - estimate) return 0;
  const uint64_t excess = s.used - (tpm - estimate);
  const int64_t now_s = second_of(now_ms);
  uint64_t freed = 0;
  size_t slot = slot_of(now_s + 1);
  for (int64_t second = now_s - (kBuckets - 1); second <= now_s; ++second, slot = next(slot)) {
    const Bucket& b = buckets_[slot];
    if (b.second != second) continue;
    freed = saturating_add(freed, b.tokens);
    if (freed >= excess) return (second + kBuckets) * kBucketMs - now_ms;
  }
  return kWindowMs;  // unreachable: the buckets sum to used >= excess
}

void TokenWindow::reserve(uint64_t tokens, int64_t now_ms) {
  const int64_t now_s = second_of(now_ms);
  Bucket& b = buckets_[slot_of(now_s)];
  // The only second of the window in this slot is now_s: any other tag is out of the window.
  if (b.second != now_s) b = Bucket{now_s, 0};
  b.tokens = saturating_add(b.tokens, tokens);
}

void TokenWindow::settle(int64_t at_ms, uint64_t reserved, uint64_t actual, int64_t now_ms) {
  const int64_t at_s = second_of(at_ms);
  if (at_s <= second_of(now_ms) - kBuckets) return;  // left the window: nothing to correct
  Bucket& b = buckets_[slot_of(at_s)];
  if (b.second != at_s) return;
  if (actual >= reserved) {
    b.tokens = saturating_add(b.tokens, actual - reserved);
  } else {
    const uint64_t refund = reserved - actual;
    b.tokens = b.tokens > refund ? b.tokens - refund : 0;
  }
}

TokenWindow::Summary TokenWindow::after_reserve(Summary s, uint64_t tokens, int64_t now_ms) {
  if (tokens == 0) return s;
  if (s.used == 0) s.oldest_second = second_of(now_ms);
  s.used = saturating_add(s.used, tokens);
  return s;
}

}  // namespace rolter
