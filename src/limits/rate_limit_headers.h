// The rate-limit header fields of an answer to a limited key (SPEC §15), from its Admission:
//
//   RateLimit-Policy: "key-rpm";q=60;w=60, "team-tpm";q=100000;w=60
//   RateLimit: "key-rpm";r=12;t=3, "team-tpm";r=40000;t=17
//   x-ratelimit-limit-requests: 60          x-ratelimit-limit-tokens: 100000
//   x-ratelimit-remaining-requests: 12      x-ratelimit-remaining-tokens: 40000
//   x-ratelimit-reset-requests: 3s          x-ratelimit-reset-tokens: 16.5s
//   Retry-After: 2                          (refused answers only)
//
// RateLimit-Policy and RateLimit follow draft-ietf-httpapi-ratelimit-headers (structured-field
// lists; q quota, w window in seconds, r remaining, t seconds until reset, rounded up). One item
// per limit: "<scope>-rpm" has the GCRA's burst as q and the time a full burst takes to refill
// (ceil(burst * 60 / rpm) s) as w; "<scope>-tpm" has q = tpm, w = 60. <scope> is the rule id's
// kind ("key", "team") with "-route" for a route glob's rule. Items are ordered most restrictive
// (smallest r/q) first.
// The x-ratelimit-* fields follow OpenAI's: each from the most restrictive reading that has
// requests (resp. tokens); resets formatted like Go durations ("120ms", "1s", "1.5s", "6m0s").
// Retry-After: whole seconds, rounded up, at least 1.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/function_ref.h"
#include "limits/limit_types.h"

namespace rolter {

// Calls emit(name, value) once per field, in the order above; values live only during the call.
// Allocates nothing.
void visit_rate_limit_headers(const Admission& admission,
                              FunctionRef<void(std::string_view, std::string_view)> emit);

// Appends "Name: value\r\n" for every field to `out`.
void append_rate_limit_headers(const Admission& admission, std::string& out);

// A duration as OpenAI's headers write it (Go's time.Duration text, millisecond precision):
// 0 -> "0s", 120 -> "120ms", 1000 -> "1s", 1500 -> "1.5s", 360000 -> "6m0s", 3723000 -> "1h2m3s".
struct DurationText {
  char text[40] = {};
  uint8_t size = 0;
  std::string_view view() const { return {text, size}; }
};
DurationText format_reset(int64_t ms);

}  // namespace rolter
