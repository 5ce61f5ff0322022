#include "balance/scorers/adapter_residency.h"

#include <algorithm>
#include <iterator>

#include "common/hash.h"

namespace rolter {

AdapterResidencyScorer::AdapterResidencyScorer(std::span<const CandidateSpec> candidates)
    : count_(candidates.size()), residents_(std::make_unique<Residents[]>(candidates.size())) {
  for (size_t i = 0; i < count_; ++i) residents_[i].capacity = candidates[i].max_loras;
}

bool AdapterResidencyScorer::holds_key(size_t index, uint64_t key) const {
  const Residents& r = residents_[index];
  MutexLock lock(r.mu);
  return std::find(r.adapters.begin(), r.adapters.end(), key) != r.adapters.end();
}

bool AdapterResidencyScorer::holds(size_t index, std::string_view adapter) const {
  return index < count_ && !adapter.empty() && holds_key(index, hash64(adapter));
}

void AdapterResidencyScorer::score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                                   std::span<double> out) {
  for (double& v : out) v = 0;
  if (ctx.adapter.empty()) return;
  const uint64_t key = hash64(ctx.adapter);
  const size_t n = std::min(count_, out.size());
  for (size_t i = 0; i < n; ++i) {
    if (eligible(i) && holds_key(i, key)) out[i] = 1.0;
  }
}

void AdapterResidencyScorer::observe(size_t index, const RouteContext& ctx) {
  if (ctx.adapter.empty() || index >= count_) return;
  const uint64_t key = hash64(ctx.adapter);
  Residents& r = residents_[index];
  MutexLock lock(r.mu);
  if (r.capacity == 0) return;
  auto found = std::find(r.adapters.begin(), r.adapters.end(), key);
  if (found == r.adapters.end()) {
    // New: take a fresh slot while there is room, else the least recently served one's.
    if (r.adapters.size() < r.capacity) {
      r.adapters.push_back(key);
    } else {
      r.adapters.back() = key;
    }
    found = std::prev(r.adapters.end());
  }
  // Move it to the front, keeping the others' order.
  std::rotate(r.adapters.begin(), found, std::next(found));
}

}  // namespace rolter
