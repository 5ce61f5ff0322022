#include "balance/scorers/fastest.h"

#include <limits>

#include "balance/evidence/instance_evidence.h"
#include "balance/scorers/lower_is_better.h"

namespace rolter {

LatencyScorer::LatencyScorer(std::span<const CandidateSpec> candidates) {
  evidence_.reserve(candidates.size());
  for (const CandidateSpec& c : candidates) evidence_.push_back(c.evidence);
}

void LatencyScorer::score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                          std::span<double> out) {
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = std::numeric_limits<double>::quiet_NaN();
    if (i >= evidence_.size() || evidence_[i] == nullptr) continue;
    if (const auto average = evidence_[i]->latency.value()) out[i] = *average;
  }
  score_lower_is_better(out, eligible);
}

}  // namespace rolter
