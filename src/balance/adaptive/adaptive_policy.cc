#include "balance/adaptive/adaptive_policy.h"

#include <cmath>

namespace rolter {
namespace {

double sanitize_weight(double weight) { return std::isfinite(weight) && weight > 0 ? weight : 0; }

double sanitize_ratio(double ratio) {
  if (!(ratio > 0)) return 0;  // also NaN
  return ratio > kMaxExplorationRatio ? kMaxExplorationRatio : ratio;
}

}  // namespace

AdaptivePolicy sanitize_adaptive_policy(const AdaptivePolicy& raw) {
  AdaptivePolicy out = raw;
  out.latency_weight = sanitize_weight(raw.latency_weight);
  out.cost_weight = sanitize_weight(raw.cost_weight);
  out.load_weight = sanitize_weight(raw.load_weight);
  out.exploration_ratio = sanitize_ratio(raw.exploration_ratio);
  return out;
}

}  // namespace rolter
