#include "proxy/fallback.h"

#include <algorithm>

namespace rolter {

FallbackCause fallback_cause(const RoutePool::FallbackOn& on, unsigned attempts,
                             bool all_rate_limited) {
  // A 429 is an answer: a route whose every target said so is rate limited, not unavailable.
  if (attempts > 0 && all_rate_limited) {
    return on.rate_limited ? FallbackCause::kRateLimited : FallbackCause::kNone;
  }
  return on.unavailable ? FallbackCause::kUnavailable : FallbackCause::kNone;
}

size_t fallback_hops(const RoutePool& origin, uint32_t max_fallbacks) {
  return std::min<size_t>(origin.fallbacks.size(), max_fallbacks);
}

void FallbackTrail::give_up(std::string_view route, const ApiError& error, bool timeouts,
                            bool auth_rejected) {
  all_timeouts = all_timeouts && timeouts;
  all_auth_rejected = all_auth_rejected && auth_rejected;
  if (!given_up.empty()) given_up.push_back(',');
  given_up.append(route);
  if (!errors.empty()) errors.append("; ");
  errors.append("route '").append(route).append("': ").append(error.message);
}

ApiError FallbackTrail::final_error() const {
  ApiError error;
  error.status = attempts == 0 ? 503 : all_timeouts ? 504 : 502;
  error.message = "no route could answer (" + given_up + "): " + errors;
  if (attempts > 0 && all_auth_rejected) error.code = "upstream_auth_failed";
  return error;
}

}  // namespace rolter
