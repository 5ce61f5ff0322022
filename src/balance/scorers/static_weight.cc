#include "balance/scorers/static_weight.h"

namespace rolter {

StaticWeightScorer::StaticWeightScorer(std::span<const CandidateSpec> candidates) {
  weights_.reserve(candidates.size());
  for (const CandidateSpec& c : candidates) weights_.push_back(c.weight);
}

void StaticWeightScorer::score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                               std::span<double> out) {
  double max_weight = 0;
  for (size_t i = 0; i < out.size() && i < weights_.size(); ++i) {
    if (weights_[i] > max_weight && eligible(i)) max_weight = weights_[i];
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (i >= weights_.size() || max_weight == 0) {
      out[i] = 0;
    } else {
      // An ineligible candidate heavier than every eligible one is capped: its score is ignored.
      out[i] = weights_[i] >= max_weight ? 1.0 : weights_[i] / max_weight;
    }
  }
}

}  // namespace rolter
