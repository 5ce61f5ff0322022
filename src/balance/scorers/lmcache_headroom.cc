#include "balance/scorers/lmcache_headroom.h"

namespace rolter {

LmcacheHeadroomScorer::LmcacheHeadroomScorer(std::span<const CandidateSpec> candidates) {
  signals_.reserve(candidates.size());
  for (const CandidateSpec& c : candidates) signals_.push_back(c.lmcache);
}

double LmcacheHeadroomScorer::headroom(const LmcacheSignal* signal) {
  if (signal == nullptr) return 0;
  const auto occupancy = signal->usable_occupancy();
  // The comparisons also send a NaN to neutral, though the poller stores only finite values.
  if (!occupancy || !(*occupancy > 0) || !(*occupancy < 1)) return 0;
  return 1 - *occupancy;
}

void LmcacheHeadroomScorer::score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                                  std::span<double> out) {
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = headroom(i < signals_.size() ? signals_[i] : nullptr);
  }
}

}  // namespace rolter
