// Span: one finished span as the exporter sends it (OTLP's Span, trimmed to what rolter records:
// no events, no links). Made on the request path only for a sampled request, moved into the
// export queue (trace/span_queue.h) whole, and encoded on the exporter's thread.
//
// Attribute keys are string literals (the semantic conventions' names, rolter.*): a span never
// owns them. Values own their text.
//
// Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "trace/trace_ids.h"

namespace rolter {

// OTLP's Span.SpanKind numbers.
enum class SpanKind : uint8_t { kInternal = 1, kServer = 2, kClient = 3 };
// OTLP's Status.StatusCode numbers.
enum class SpanStatus : uint8_t { kUnset = 0, kOk = 1, kError = 2 };

struct SpanAttribute {
  std::string_view key;  // a literal
  std::variant<std::string, int64_t, double, bool> value;
};

struct Span {
  TraceId trace_id;
  SpanId span_id;
  SpanId parent_span_id;  // all-zero: a root span
  std::string_view name;  // a literal: "rolter.request", "rolter.route", "rolter.upstream"
  SpanKind kind = SpanKind::kInternal;
  uint8_t trace_flags = 0;     // W3C trace-flags (bit 0: sampled)
  bool remote_parent = false;  // the parent span is the client's (from its traceparent)
  uint64_t start_unix_nano = 0;
  uint64_t end_unix_nano = 0;
  SpanStatus status = SpanStatus::kUnset;
  std::string status_message;  // with kError: what went wrong
  std::string trace_state;     // the W3C tracestate the span was started with
  std::vector<SpanAttribute> attributes;

  void set(std::string_view key, std::string value) {
    attributes.push_back({key, std::move(value)});
  }
  void set(std::string_view key, std::string_view value) {
    attributes.push_back({key, std::string(value)});
  }
  void set(std::string_view key, const char* value) { set(key, std::string_view(value)); }
  void set(std::string_view key, int64_t value) { attributes.push_back({key, value}); }
  void set(std::string_view key, double value) { attributes.push_back({key, value}); }
  void set(std::string_view key, bool value) { attributes.push_back({key, value}); }
};

}  // namespace rolter
