#include "balance/scorers/predicted_latency.h"

#include <limits>

#include "balance/evidence/instance_evidence.h"
#include "balance/scorers/lower_is_better.h"

namespace rolter {

PredictedLatencyScorer::PredictedLatencyScorer(std::span<const CandidateSpec> candidates) {
  evidence_.reserve(candidates.size());
  for (const CandidateSpec& c : candidates) evidence_.push_back(c.evidence);
}

void PredictedLatencyScorer::score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                                   std::span<double> out) {
  const double ktokens = ctx.prompt_ktokens();
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = std::numeric_limits<double>::quiet_NaN();
    if (i >= evidence_.size() || evidence_[i] == nullptr || !eligible(i)) continue;
    // The queue this request would join: the load before its own increment, as the model learned.
    const auto predicted = evidence_[i]->predictor.predict(loads[i], ktokens);
    if (predicted) out[i] = *predicted;
  }
  score_lower_is_better(out, eligible, Scale::kRatioToBest);
}

}  // namespace rolter
