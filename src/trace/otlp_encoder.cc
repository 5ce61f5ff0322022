#include "trace/otlp_encoder.h"

#include "trace/protobuf_writer.h"

namespace rolter {
namespace {

// Field numbers of opentelemetry-proto v1.
namespace field {
constexpr uint32_t kResourceSpans = 1;  // ExportTraceServiceRequest
constexpr uint32_t kResource = 1;       // ResourceSpans
constexpr uint32_t kScopeSpans = 2;
constexpr uint32_t kResourceAttributes = 1;  // Resource
constexpr uint32_t kScope = 1;               // ScopeSpans
constexpr uint32_t kSpans = 2;
constexpr uint32_t kScopeName = 1;  // InstrumentationScope
constexpr uint32_t kScopeVersion = 2;
constexpr uint32_t kTraceId = 1;  // Span
constexpr uint32_t kSpanId = 2;
constexpr uint32_t kTraceState = 3;
constexpr uint32_t kParentSpanId = 4;
constexpr uint32_t kName = 5;
constexpr uint32_t kKind = 6;
constexpr uint32_t kStartTime = 7;
constexpr uint32_t kEndTime = 8;
constexpr uint32_t kAttributes = 9;
constexpr uint32_t kStatus = 15;
constexpr uint32_t kFlags = 16;
constexpr uint32_t kStatusMessage = 2;  // Status
constexpr uint32_t kStatusCode = 3;
constexpr uint32_t kKey = 1;  // KeyValue
constexpr uint32_t kValue = 2;
constexpr uint32_t kStringValue = 1;  // AnyValue
constexpr uint32_t kBoolValue = 2;
constexpr uint32_t kIntValue = 3;
constexpr uint32_t kDoubleValue = 4;
}  // namespace field

// SpanFlags: bits 8 and 9 say whether the parent is known to be remote, and whether it is.
constexpr uint32_t kFlagsHasIsRemote = 0x100;
constexpr uint32_t kFlagsIsRemote = 0x200;

void write_string_attribute(ProtoWriter& w, uint32_t number, std::string_view key,
                            std::string_view value) {
  const auto kv = w.open(number);
  w.bytes(field::kKey, key);
  const auto any = w.open(field::kValue);
  w.bytes(field::kStringValue, value);
  w.close(any);
  w.close(kv);
}

void write_attribute(ProtoWriter& w, const SpanAttribute& attribute) {
  const auto kv = w.open(field::kAttributes);
  w.bytes(field::kKey, attribute.key);
  const auto any = w.open(field::kValue);
  if (const auto* s = std::get_if<std::string>(&attribute.value)) {
    w.bytes(field::kStringValue, *s);
  } else if (const auto* i = std::get_if<int64_t>(&attribute.value)) {
    w.int64(field::kIntValue, *i);
  } else if (const auto* d = std::get_if<double>(&attribute.value)) {
    w.float64(field::kDoubleValue, *d);
  } else if (const auto* b = std::get_if<bool>(&attribute.value)) {
    w.boolean(field::kBoolValue, *b);
  }
  w.close(any);
  w.close(kv);
}

void write_span(ProtoWriter& w, const Span& span) {
  const auto m = w.open(field::kSpans);
  w.bytes(field::kTraceId, span.trace_id.bytes.data(), span.trace_id.bytes.size());
  w.bytes(field::kSpanId, span.span_id.bytes.data(), span.span_id.bytes.size());
  if (!span.trace_state.empty()) w.bytes(field::kTraceState, span.trace_state);
  if (!span.parent_span_id.is_zero()) {
    w.bytes(field::kParentSpanId, span.parent_span_id.bytes.data(),
            span.parent_span_id.bytes.size());
  }
  w.bytes(field::kName, span.name);
  w.varint(field::kKind, static_cast<uint64_t>(span.kind));
  w.fixed64(field::kStartTime, span.start_unix_nano);
  w.fixed64(field::kEndTime, span.end_unix_nano);
  for (const SpanAttribute& attribute : span.attributes) write_attribute(w, attribute);
  if (span.status != SpanStatus::kUnset) {
    const auto status = w.open(field::kStatus);
    if (!span.status_message.empty()) w.bytes(field::kStatusMessage, span.status_message);
    w.varint(field::kStatusCode, static_cast<uint64_t>(span.status));
    w.close(status);
  }
  w.fixed32(field::kFlags,
            kFlagsHasIsRemote | (span.remote_parent ? kFlagsIsRemote : 0) | span.trace_flags);
  w.close(m);
}

}  // namespace

std::string encode_export_request(const TraceResource& resource, std::span<const Span> spans) {
  ProtoWriter w;
  const auto resource_spans = w.open(field::kResourceSpans);
  const auto res = w.open(field::kResource);
  write_string_attribute(w, field::kResourceAttributes, "service.name", resource.service_name);
  if (!resource.service_version.empty()) {
    write_string_attribute(w, field::kResourceAttributes, "service.version",
                           resource.service_version);
  }
  if (!resource.host_name.empty()) {
    write_string_attribute(w, field::kResourceAttributes, "host.name", resource.host_name);
  }
  w.close(res);
  const auto scope_spans = w.open(field::kScopeSpans);
  const auto scope = w.open(field::kScope);
  w.bytes(field::kScopeName, "rolter");
  if (!resource.service_version.empty()) w.bytes(field::kScopeVersion, resource.service_version);
  w.close(scope);
  for (const Span& span : spans) write_span(w, span);
  w.close(scope_spans);
  w.close(resource_spans);
  return w.take();
}

}  // namespace rolter
