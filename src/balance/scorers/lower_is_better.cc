#include "balance/scorers/lower_is_better.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace rolter {
namespace {

// Markers the first pass leaves in place of values it will not rank. Both are non-finite, so no
// real cost can be mistaken for them.
constexpr double kIneligible = -std::numeric_limits<double>::infinity();
constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

}  // namespace

void score_lower_is_better(std::span<double> values, Eligible eligible, Scale scale) {
  size_t known = 0;
  double low = 0;
  double high = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!eligible(i)) {
      values[i] = kIneligible;
    } else if (!std::isfinite(values[i])) {
      values[i] = kUnknown;
    } else {
      if (known == 0 || values[i] < low) low = values[i];
      if (known == 0 || values[i] > high) high = values[i];
      ++known;
    }
  }
  if (known < 2) {
    for (double& v : values) v = 0;
    return;
  }

  const double range = high - low;
  double sum = 0;
  for (double& v : values) {
    if (!std::isfinite(v)) continue;
    if (scale == Scale::kRatioToBest) {
      // +1 keeps a zero cost finite; a negative one (never expected) counts as zero.
      v = (std::max(low, 0.0) + 1) / (std::max(v, 0.0) + 1);
    } else {
      v = range > 0 ? (high - v) / range : 1.0;
    }
    sum += v;
  }
  const double unknown_score = sum / static_cast<double>(known);
  for (double& v : values) {
    if (v == kIneligible) {
      v = 0;
    } else if (std::isnan(v)) {
      v = unknown_score;
    }
  }
}

}  // namespace rolter
