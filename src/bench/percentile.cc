#include "bench/percentile.h"

#include <algorithm>
#include <cmath>

namespace rolter::bench {

double percentile(std::vector<double>& samples, double p) {
  if (samples.empty()) return 0;
  if (!std::is_sorted(samples.begin(), samples.end())) std::sort(samples.begin(), samples.end());
  p = std::clamp(p, 0.0, 100.0);
  const double rank = p / 100.0 * static_cast<double>(samples.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, samples.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return samples[lo] + (samples[hi] - samples[lo]) * frac;
}

}  // namespace rolter::bench
