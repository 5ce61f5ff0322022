#include "balance/scorers/price.h"

#include <limits>

#include "balance/scorers/lower_is_better.h"

namespace rolter {

PriceScorer::PriceScorer(std::span<const CandidateSpec> candidates) {
  prices_.reserve(candidates.size());
  for (const CandidateSpec& c : candidates) {
    prices_.push_back(c.price.value_or(std::numeric_limits<double>::quiet_NaN()));
  }
}

void PriceScorer::score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                        std::span<double> out) {
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = i < prices_.size() ? prices_[i] : std::numeric_limits<double>::quiet_NaN();
  }
  score_lower_is_better(out, eligible);
}

}  // namespace rolter
