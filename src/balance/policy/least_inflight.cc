#include "balance/policy/least_inflight.h"

namespace rolter {

double LeastInflightPlugin::vote(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                                 std::span<double> out) {
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = eligible(i) ? 1.0 / (1.0 + static_cast<double>(loads[i])) : 0.0;
  }
  return 1.0;
}

}  // namespace rolter
