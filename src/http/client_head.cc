#include "http/client_head.h"

#include <boost/beast/http/status.hpp>

#include <charconv>

#include "http/hop_by_hop.h"
#include "http/tokens.h"
#include "http/upstream_head.h"

namespace rolter {
namespace http = boost::beast::http;

namespace {

void append_field(HeadString& out, std::string_view name, std::string_view value) {
  out.append(name).append(": ").append(value).append("\r\n");
}

void append_number(HeadString& out, uint64_t value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

}  // namespace

void append_client_head(const HttpFields& upstream, const ClientHeadSpec& spec, HeadString& out) {
  out.append(spec.version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
  append_number(out, spec.status);
  out.push_back(' ');
  if (spec.reason.empty()) {
    out.append(http::obsolete_reason(static_cast<http::status>(spec.status)));
  } else {
    out.append(spec.reason);
  }
  out.append("\r\n");

  const auto options = ConnectionOptions::of(upstream);
  auto relayed = [&](std::string_view name) {
    return !options.is_hop_by_hop(name) && !iequals_ascii(name, "content-length");
  };
  // The gateway's own rate-limit fields replace an upstream's: the client is limited by its key.
  auto replaced = [&](std::string_view name) {
    if (spec.extra_fields.empty()) return false;
    return iequals_ascii(name, "ratelimit") || iequals_ascii(name, "ratelimit-policy") ||
           (name.size() > 12 && iequals_ascii(name.substr(0, 12), "x-ratelimit-"));
  };
  for (const auto& field : upstream) {
    const std::string_view name = field.name_string();
    if (!relayed(name) || (spec.via && iequals_ascii(name, "via")) || replaced(name)) continue;
    if (!spec.request_id.empty() && iequals_ascii(name, "x-request-id")) continue;
    append_field(out, name, field.value());
  }
  if (spec.via) {
    // Every Via of the upstream, in order, then this hop, as one field.
    out.append("Via: ");
    if (relayed("via")) {
      for (const auto& field : upstream) {
        if (iequals_ascii(field.name_string(), "via")) out.append(field.value()).append(", ");
      }
    }
    out.append(via_entry(11)).append("\r\n");
  }

  if (!spec.request_id.empty()) append_field(out, "x-request-id", spec.request_id);
  append_field(out, "x-rolter-target", spec.target);
  if (!spec.route.empty()) append_field(out, "x-rolter-route", spec.route);
  if (!spec.fallbacks.empty()) append_field(out, "x-rolter-fallbacks", spec.fallbacks);
  out.append("x-rolter-attempts: ");
  append_number(out, spec.attempts);
  out.append("\r\n");
  if (!spec.decision.empty()) append_field(out, "x-rolter-decision", spec.decision);
  out.append(spec.extra_fields);
  switch (spec.framing) {
    case BodyFraming::kLength:
      out.append("Content-Length: ");
      append_number(out, spec.content_length);
      out.append("\r\n");
      break;
    case BodyFraming::kChunked:
      out.append("Transfer-Encoding: chunked\r\n");
      break;
    case BodyFraming::kNone:
    case BodyFraming::kClose:
      break;
  }
  if (spec.version == 10) {
    if (spec.keep_alive) out.append("Connection: keep-alive\r\n");
  } else if (!spec.keep_alive) {
    out.append("Connection: close\r\n");
  }
  out.append("\r\n");
}

}  // namespace rolter
