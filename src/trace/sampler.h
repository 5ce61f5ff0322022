// Which requests are traced: parent-based, then by trace id (OpenTelemetry's
// ParentBased(TraceIdRatioBased)). A request whose `traceparent` says its caller sampled it is
// sampled; one whose caller did not is not; one that starts its trace is sampled when the random
// part of its trace id falls under `ratio`, so every service that reads the same id with the same
// ratio decides the same way.
//
//   const bool sampled = should_sample(parent, trace_id, config.tracing.sample_ratio);
//
// Thread-safety: pure functions; no allocation.
#pragma once

#include <optional>

#include "trace/trace_ids.h"
#include "trace/traceparent.h"

namespace rolter {

// True when the rightmost 56 bits of `trace_id` (the random ones, Trace Context level 2), read as
// a number in [0, 2^56), fall below ratio * 2^56. ratio <= 0: never; ratio >= 1: always.
bool sampled_by_ratio(const TraceId& trace_id, double ratio);

// The parent's sampled flag when there is a parent; else sampled_by_ratio().
bool should_sample(const std::optional<TraceParent>& parent, const TraceId& trace_id, double ratio);

}  // namespace rolter
