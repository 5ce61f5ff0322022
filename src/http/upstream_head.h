// The request head the proxy sends upstream, built from the client's head (RFC 9110 §7.6).
//
// What changes on the way:
// - the request line gets the instance's base path (http/upstream_path.h), and Host the
//   instance's authority;
// - the framing is the proxy's: Content-Length of the (rewritten) body, never the client's
//   Transfer-Encoding; hop-by-hop fields, and the fields the client's Connection names, are
//   dropped;
// - the client's gateway credentials (Authorization, x-api-key, x-goog-api-key) are dropped and the
//   provider's own key is sent instead, as `Authorization: Bearer`, `x-api-key` (Anthropic) or
//   `x-goog-api-key` (Gemini); the provider's fixed fields ([providers.headers], and
//   anthropic-version for a translated request) replace a client's field of the same name;
// - `Accept-Encoding: identity`: the proxy reads what it relays (usage, SSE events), so it asks
//   for bodies it can read; `Expect` was answered by the proxy;
// - X-Forwarded-For, X-Forwarded-Proto and Via record the hop. A client's own X-Forwarded-* are
//   kept (and extended) only when its address is a trusted proxy;
// - the request's id (`x-request-id`) and the attempt's `traceparent` replace the client's
//   (SPEC §17); the client's `tracestate` goes on only with the trace it belongs to.
//
// Thread-safety: pure function.
#pragma once

#include "http/fields.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace rolter {

struct UpstreamHeadSpec {
  std::string_view method;
  std::string_view base_path;  // the instance's path prefix, without a trailing '/'
                               // (joined by http/upstream_path.h's rule)
  std::string_view target;     // the client's request target
  std::string_view host_header;
  std::optional<size_t> content_length;  // nullopt: send none (a GET without a body)
  std::string_view api_key;              // the provider's key; empty = none
  enum class KeyField { kBearer, kXApiKey, kGoogApiKey };
  KeyField key_field = KeyField::kBearer;  // how the key is sent
  // Fields sent as they are, after the key.
  std::span<const std::pair<std::string, std::string>> fixed_fields;
  // Hop record. forwarded = false passes the client's X-Forwarded-* and Via through unchanged.
  bool forwarded = true;
  bool trusted_peer = false;   // the client is a trusted proxy: extend its X-Forwarded-*
  std::string_view client_ip;  // the peer address of the client connection
  std::string_view proto = "http";
  unsigned client_version = 11;  // the client's HTTP version, for Via
  // Sent instead of the client's fields of these names; empty: the client's pass unchanged.
  std::string_view request_id;   // x-request-id
  std::string_view traceparent;  // this attempt's W3C traceparent
  // False when the client's traceparent was invalid or absent: its tracestate is dropped.
  bool keep_tracestate = true;
};

// Appends the whole head, ending with the empty line, to `out`.
void append_upstream_head(const UpstreamHeadSpec& spec, const HttpFields& client, HeadString& out);

// The Via entry this proxy adds: "1.1 rolter" (RFC 9110 §7.6.3, received protocol + pseudonym).
std::string_view via_entry(unsigned version);

}  // namespace rolter
