// Fallbacks (SPEC §16): where a request goes when its route cannot answer.
//
// The rule: a request whose route (the origin) cannot answer moves to the next route of the
// origin's own `fallbacks` list, in order, and only that list: a fallback route's own fallbacks
// are not followed. Each hop runs that route's strategy and attempt loop (proxy/forwarder.h) with
// the same body, RouteContext and key, under the request's one deadline. The origin's
// `fallback_on` decides, after every route, whether the request moves on:
//   unavailable   every candidate was out, or every attempt failed before the first byte;
//   rate_limited    every tried target answered 429 (the 429 is then not relayed);
//   context_length  every tried target said the prompt is too long (a 400 or 413 whose body says
//                   so, read before anything is relayed: proxy/translated_relay.h);
//   content_filter  every tried target refused the content (a 400 whose body names its content
//                   filter or policy), read the same way.
// At most `retry.max_fallbacks` hops (0: off). An answer that has begun reaching the client is
// never moved.
//
// Thread-safety: pure functions; a FallbackTrail belongs to one request.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/error_response.h"
#include "snapshot/snapshot.h"

namespace rolter {

// Why a route that could not answer hands the request on; kNone: it does not.
enum class FallbackCause { kNone, kUnavailable, kRateLimited, kContextLength, kContentFilter };

// What the failures of one route meet among `on`. `attempts`: attempts made on the route (0 when
// every candidate was out); `all_rate_limited`: every one of them answered 429;
// `all_context_length`: every one said the prompt is too long.
FallbackCause fallback_cause(const RoutePool::FallbackOn& on, unsigned attempts,
                             bool all_rate_limited, bool all_context_length = false,
                             bool all_content_filter = false);

// Whether an upstream's error body says the prompt does not fit the model's context, in the words
// of vLLM, SGLang, OpenAI, Anthropic or Gemini.
bool says_context_length(std::string_view error_body);

// Whether an upstream's error body says its content filter or policy refused the request
// (OpenAI's and Azure's content_filter and content_policy_violation codes).
bool says_content_filter(std::string_view error_body);

// How many routes of `origin`'s fallbacks a request may try: the list, capped by max_fallbacks.
size_t fallback_hops(const RoutePool& origin, uint32_t max_fallbacks);

// A request that has left its first route: the routes given up on and what each said, for the
// x-rolter-fallbacks header, the log line and the error answer when every route failed.
struct FallbackTrail {
  const RoutePool* origin = nullptr;
  std::chrono::steady_clock::time_point started;   // the request's start: durations, TTFT
  std::chrono::steady_clock::time_point deadline;  // the request's one deadline
  unsigned attempts = 0;                           // across every route so far
  bool more_after_this = false;  // the route now running may still hand the request on
  FallbackCause cause = FallbackCause::kNone;  // of the route given up on last
  bool all_timeouts = true;
  bool all_auth_rejected = true;
  std::string given_up;  // "a,b": the routes given up on, in order
  std::string errors;    // "route 'a': ...; route 'b': ..."

  // Records that `route` could not answer: `error` is what it alone would have answered.
  // `timeouts`, `auth_rejected`: every attempt on it timed out, was refused the gateway's
  // credentials (both true when it made none).
  void give_up(std::string_view route, const ApiError& error, bool timeouts, bool auth_rejected);
  // The answer when every route failed: 503 when no route made an attempt, 504 when every
  // attempt timed out, else 502; its message names each route's failures.
  ApiError final_error() const;
};

}  // namespace rolter
