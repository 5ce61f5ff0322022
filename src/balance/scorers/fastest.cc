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
    // What this request would meet now: the latency per place in the queue at the candidate's
    // current load, which counts every pick not yet completed (SPEC §6.16).
    if (const auto now = evidence_[i]->latency.at_queue(loads[i])) out[i] = *now;
  }
  score_lower_is_better(out, eligible, Scale::kRatioToBest);
}

}  // namespace rolter
