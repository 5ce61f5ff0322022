// The OTLP/HTTP body of a batch of spans: an ExportTraceServiceRequest in protobuf
// (opentelemetry/proto/collector/trace/v1/trace_service.proto), with one ResourceSpans for this
// process (service.name, service.version, host.name) and one ScopeSpans ("rolter").
//
//   std::string body = encode_export_request(resource, spans);
//   post("/v1/traces", "application/x-protobuf", body);
//
// The field numbers are those of opentelemetry-proto v1 (trace.proto, common.proto,
// resource.proto); the integration test decodes the result with the OpenTelemetry project's own
// generated code.
//
// Thread-safety: pure function.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "trace/span.h"

namespace rolter {

// What the spans' Resource says about this process.
struct TraceResource {
  std::string service_name = "rolter";
  std::string service_version;
  std::string host_name;  // empty: left out
};

std::string encode_export_request(const TraceResource& resource, std::span<const Span> spans);

}  // namespace rolter
