// The W3C Trace Context `traceparent` field (https://www.w3.org/TR/trace-context/ §3.2): read
// from a client's request, written on each upstream attempt.
//
//   "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
//    version  trace-id                     parent-id     flags
//
// Reading follows the specification's rules: lowercase hex only; version "ff" is invalid; version
// 00 is exactly 55 characters; a later version is read by its first 55 characters, which must be
// followed by nothing or '-'; an all-zero trace id or parent id is invalid. An invalid value means
// the caller starts a new trace (and drops `tracestate`, which belongs to the invalid one).
//
//   auto parent = parse_traceparent(request["traceparent"]);
//   char out[kTraceparentLength];
//   format_traceparent(trace_id, span_id, sampled, out);
//
// Thread-safety: pure functions; no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "trace/trace_ids.h"

namespace rolter {

inline constexpr size_t kTraceparentLength = 55;
// Flag bit 0 of trace-flags: the caller may have recorded its span.
inline constexpr uint8_t kSampledFlag = 0x01;

struct TraceParent {
  TraceId trace_id;
  SpanId parent_id;  // the caller's span
  uint8_t flags = 0;

  bool sampled() const { return (flags & kSampledFlag) != 0; }
};

// The parsed value, or nullopt when it is invalid. Spaces and tabs around it are ignored.
std::optional<TraceParent> parse_traceparent(std::string_view value);

// Writes the version-00 value for a span `span_id` of trace `trace_id` to `out`: exactly
// kTraceparentLength characters, no terminator.
void format_traceparent(const TraceId& trace_id, const SpanId& span_id, bool sampled, char* out);

}  // namespace rolter
