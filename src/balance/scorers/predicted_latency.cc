#include "balance/scorers/predicted_latency.h"

#include <limits>

#include "balance/evidence/instance_evidence.h"
#include "balance/scorers/lower_is_better.h"

namespace rolter {

PredictedLatencyScorer::PredictedLatencyScorer(std::span<const CandidateSpec> candidates) {
  evidence_.reserve(candidates.size());
  for (const CandidateSpec& c : candidates) evidence_.push_back(c.evidence);
}

double PredictedLatencyScorer::prompt_ktokens(const RouteContext& ctx) {
  // ~4 bytes per token: the usual rule of thumb for English text under BPE tokenizers.
  constexpr double kBytesPerToken = 4;
  if (ctx.token_ids) return static_cast<double>(ctx.token_ids->size()) / 1000;
  return static_cast<double>(ctx.prompt_len) / kBytesPerToken / 1000;
}

void PredictedLatencyScorer::score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                                   std::span<double> out) {
  const double ktokens = prompt_ktokens(ctx);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = std::numeric_limits<double>::quiet_NaN();
    if (i >= evidence_.size() || evidence_[i] == nullptr || !eligible(i)) continue;
    // The queue this request would join: the load before its own increment, as the model learned.
    const auto predicted = evidence_[i]->predictor.predict(loads[i], ktokens);
    if (predicted) out[i] = *predicted;
  }
  score_lower_is_better(out, eligible);
}

}  // namespace rolter
