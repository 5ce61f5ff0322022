// Retry-After (RFC 9110 §10.2.3): how long an upstream asks the gateway to wait, as delay-seconds
// ("120") or as an HTTP-date ("Wed, 21 Oct 2026 07:28:00 GMT", and the two obsolete date forms
// recipients must accept: RFC 850 and asctime).
//
//   auto wait = parse_retry_after(head["retry-after"], std::chrono::system_clock::now());
//
// A date in the past means "now" (0 s). A date is kept to the millisecond, so the wait ends at that
// date rather than up to a second after it. Anything unreadable is nullopt: the caller applies its
// own default. Values are capped at a day, far beyond any cap the gateway applies itself.
//
// Thread-safety: pure functions; the current time is passed in.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace rolter {

std::optional<std::chrono::milliseconds> parse_retry_after(
    std::string_view value, std::chrono::system_clock::time_point now);

// An HTTP-date in any of its three forms, or nullopt.
std::optional<std::chrono::sys_seconds> parse_http_date(std::string_view text);

}  // namespace rolter
