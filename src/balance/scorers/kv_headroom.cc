#include "balance/scorers/kv_headroom.h"

namespace rolter {

void KvHeadroomScorer::score(const RouteContext&, const Loads& loads, Eligible eligible,
                             std::span<double> out) {
  bool all_known = true;
  for (size_t i = 0; i < out.size(); ++i) {
    const double usage = loads.kv_usage(i);
    out[i] = usage < 0 ? 0.0 : 1.0 - usage;
    all_known = all_known && (usage >= 0 || !eligible(i));
  }
  if (all_known) return;
  for (double& score : out) score = 0;
}

}  // namespace rolter
