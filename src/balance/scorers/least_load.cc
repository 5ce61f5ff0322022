#include "balance/scorers/least_load.h"

namespace rolter {

void LeastLoadScorer::score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                            std::span<double> out) {
  // Snapshot each counter once into out: workers keep changing them, and the normalisation below
  // must use the same values it compared.
  double max_load = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<double>(loads[i]);
    if (out[i] > max_load && eligible(i)) max_load = out[i];
  }
  for (size_t i = 0; i < out.size(); ++i) {
    // All idle: every candidate is equally good. An ineligible candidate busier than every
    // eligible one may go below 0; its score is ignored anyway, but keep the [0, 1] promise.
    out[i] = max_load == 0 ? 1.0 : (out[i] >= max_load ? 0.0 : 1.0 - out[i] / max_load);
  }
}

}  // namespace rolter
