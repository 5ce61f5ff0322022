#include "bench/overhead/rate_search.h"

#include <algorithm>
#include <cmath>

namespace rolter::bench::overhead {

RateSearchResult search_max_rate(const RateSearchOptions& o, const ProbeFn& probe) {
  RateSearchResult result;
  auto run = [&](double rps) {
    ProbeRecord r{rps, probe(rps), false};
    r.passed = r.outcome.errors == 0 && r.outcome.p99_ms <= o.p99_bound_ms;
    result.probes.push_back(r);
    if (r.passed) result.max_rps = std::max(result.max_rps, rps);
    return r.passed;
  };
  const double growth = std::max(o.growth, 1.01);
  double low = 0;   // highest passing rate seen
  double high = 0;  // lowest failing rate seen; 0 = none yet
  double rps = std::clamp(o.start_rps, o.min_rps, o.max_rps);

  // Bracket: walk up from a pass, down from a failure.
  while (static_cast<int>(result.probes.size()) < o.max_probes) {
    if (run(rps)) {
      low = rps;
      if (high > 0 || rps >= o.max_rps) break;
      rps = std::min(rps * growth, o.max_rps);
    } else {
      high = rps;
      if (low > 0) break;
      if (rps / growth < o.min_rps) return result;  // nothing sustainable above the floor
      rps /= growth;
    }
  }
  if (low == 0 || high == 0) return result;

  // Bisect (geometrically: the bracket spans a ratio, not a difference).
  while (static_cast<int>(result.probes.size()) < o.max_probes && high / low > 1 + o.precision) {
    const double mid = std::sqrt(low * high);
    if (run(mid)) {
      low = mid;
    } else {
      high = mid;
    }
  }
  return result;
}

}  // namespace rolter::bench::overhead
