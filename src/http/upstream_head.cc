#include "http/upstream_head.h"

#include <array>

#include "http/hop_by_hop.h"
#include "http/upstream_path.h"
#include "http/tokens.h"

namespace rolter {
namespace http = boost::beast::http;

namespace {

// Client fields the proxy replaces or consumes, whatever the Connection header says.
bool is_replaced(std::string_view name) {
  static constexpr std::array<std::string_view, 7> kReplaced = {
      "host",   "content-length",  "authorization", "x-api-key",
      "expect", "accept-encoding", "x-goog-api-key"};
  for (auto replaced : kReplaced) {
    if (iequals_ascii(name, replaced)) return true;
  }
  return false;
}

bool is_fixed(const UpstreamHeadSpec& spec, std::string_view name) {
  for (const auto& field : spec.fixed_fields) {
    if (iequals_ascii(name, field.first)) return true;
  }
  return false;
}

// The client's trace fields that the spec's own values replace (or, for tracestate, drop).
bool is_replaced_trace_field(const UpstreamHeadSpec& spec, std::string_view name) {
  return (!spec.request_id.empty() && iequals_ascii(name, "x-request-id")) ||
         (!spec.traceparent.empty() && iequals_ascii(name, "traceparent")) ||
         (!spec.keep_tracestate && iequals_ascii(name, "tracestate"));
}

bool is_hop_record(std::string_view name) {
  return iequals_ascii(name, "x-forwarded-for") || iequals_ascii(name, "x-forwarded-proto") ||
         iequals_ascii(name, "via");
}

void append_field(HeadString& out, std::string_view name, std::string_view value) {
  out.append(name).append(": ").append(value).append("\r\n");
}

// Joins the values of every `name` field of `client` with ", " (RFC 9110 §5.3).
void append_joined(HeadString& out, const HttpFields& client, std::string_view name) {
  bool first = true;
  for (const auto& field : client) {
    if (!iequals_ascii(field.name_string(), name)) continue;
    if (!first) out.append(", ");
    out.append(field.value());
    first = false;
  }
  if (!first) out.append(", ");
}

void append_hop_record(const UpstreamHeadSpec& spec, const HttpFields& client, HeadString& out) {
  out.append("X-Forwarded-For: ");
  if (spec.trusted_peer) append_joined(out, client, "x-forwarded-for");
  out.append(spec.client_ip).append("\r\n");
  const auto proto = client.find("x-forwarded-proto");
  const bool keep_proto = spec.trusted_peer && proto != client.end();
  append_field(out, "X-Forwarded-Proto",
               keep_proto ? std::string_view(proto->value()) : spec.proto);
  out.append("Via: ");
  append_joined(out, client, "via");
  out.append(via_entry(spec.client_version)).append("\r\n");
}

}  // namespace

std::string_view via_entry(unsigned version) { return version == 10 ? "1.0 rolter" : "1.1 rolter"; }

void append_upstream_head(const UpstreamHeadSpec& spec, const HttpFields& client, HeadString& out) {
  out.append(spec.method).append(" ");
  out.append(upstream_base(spec.base_path, spec.target)).append(spec.target);
  out.append(" HTTP/1.1\r\n");
  append_field(out, "Host", spec.host_header);
  if (spec.content_length) {
    out.append("Content-Length: ").append(std::to_string(*spec.content_length)).append("\r\n");
  }
  if (!spec.api_key.empty()) {
    switch (spec.key_field) {
      case UpstreamHeadSpec::KeyField::kBearer:
        out.append("Authorization: Bearer ").append(spec.api_key).append("\r\n");
        break;
      case UpstreamHeadSpec::KeyField::kXApiKey:
        append_field(out, "x-api-key", spec.api_key);
        break;
      case UpstreamHeadSpec::KeyField::kGoogApiKey:
        append_field(out, "x-goog-api-key", spec.api_key);
        break;
    }
  }
  for (const auto& [name, value] : spec.fixed_fields) append_field(out, name, value);
  append_field(out, "Accept-Encoding", "identity");
  if (!spec.request_id.empty()) append_field(out, "x-request-id", spec.request_id);
  if (!spec.traceparent.empty()) append_field(out, "traceparent", spec.traceparent);
  const auto options = ConnectionOptions::of(client);
  for (const auto& field : client) {
    const std::string_view name = field.name_string();
    if (options.is_hop_by_hop(name) || is_replaced(name) || is_fixed(spec, name)) continue;
    if (is_replaced_trace_field(spec, name)) continue;
    if (spec.forwarded && is_hop_record(name)) continue;
    append_field(out, name, field.value());
  }
  if (spec.forwarded) append_hop_record(spec, client, out);
  out.append("\r\n");
}

}  // namespace rolter
