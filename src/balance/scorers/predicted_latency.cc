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
    // The queue this request would join: the load and the queued prefill before its own
    // increment, as the model learned them.
    const auto predicted =
        evidence_[i]->predictor.predict(loads[i], ktokens, loads.prefill_ktokens(i));
    if (predicted) out[i] = *predicted;
  }
  // Min-max, unlike fastest's ratio to the best: the predictions already differ by each
  // candidate's queue, and on the replays (docs/benchmarks.md, "No herding") min-max kept
  // predicted_latency within round_robin's TTFT p99 where the ratio did not.
  score_lower_is_better(out, eligible);
}

}  // namespace rolter
