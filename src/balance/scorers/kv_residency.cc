#include "balance/scorers/kv_residency.h"

#include <algorithm>

#include "balance/kv_match.h"

namespace rolter {

KvResidencyScorer::KvResidencyScorer(std::span<const CandidateSpec> candidates) {
  kv_.reserve(candidates.size());
  for (const CandidateSpec& c : candidates) kv_.push_back(c.kv);
}

void KvResidencyScorer::score(const RouteContext& ctx, const Loads& /*loads*/,
                              Eligible eligible, std::span<double> out) {
  std::fill(out.begin(), out.end(), 0.0);
  if (!ctx.token_ids || ctx.token_ids->empty()) return;
  RequestBlockKeys keys(ctx);
  for (size_t i = 0; i < out.size() && i < kv_.size(); ++i) {
    if (!eligible(i)) continue;
    if (auto match = match_kv(kv_[i], keys)) out[i] = match->fraction();
  }
}

}  // namespace rolter
