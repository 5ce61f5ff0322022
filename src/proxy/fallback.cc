#include "proxy/fallback.h"

#include <algorithm>

namespace rolter {

FallbackCause fallback_cause(const RoutePool::FallbackOn& on, unsigned attempts,
                             bool all_rate_limited, bool all_context_length,
                             bool all_content_filter) {
  // So is a prompt every target found too long.
  if (attempts > 0 && all_context_length) {
    return on.context_length ? FallbackCause::kContextLength : FallbackCause::kNone;
  }
  if (attempts > 0 && all_content_filter) {
    return on.content_filter ? FallbackCause::kContentFilter : FallbackCause::kNone;
  }
  // A 429 is an answer: a route whose every target said so is rate limited, not unavailable.
  if (attempts > 0 && all_rate_limited) {
    return on.rate_limited ? FallbackCause::kRateLimited : FallbackCause::kNone;
  }
  return on.unavailable ? FallbackCause::kUnavailable : FallbackCause::kNone;
}

bool says_context_length(std::string_view error_body) {
  static constexpr std::string_view kMarkers[] = {
      "context_length_exceeded",                 // OpenAI's code, and rolter's translated errors
      "maximum context length",                  // vLLM, SGLang, OpenAI
      "prompt is too long",                      // Anthropic
      "exceeds the maximum number of tokens",    // Gemini
      "longer than the model's context length",  // vLLM's newer wording
  };
  for (std::string_view marker : kMarkers) {
    if (error_body.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

bool says_content_filter(std::string_view error_body) {
  static constexpr std::string_view kMarkers[] = {
      "\"content_filter\"",            // Azure OpenAI's code
      "content_policy_violation",      // OpenAI's code
      "content management policy",     // Azure's message
  };
  for (std::string_view marker : kMarkers) {
    if (error_body.find(marker) != std::string_view::npos) return true;
  }
  return false;
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
