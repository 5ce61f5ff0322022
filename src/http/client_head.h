// The head of a response the proxy relays to its client, written as text in one pass.
//
// From the upstream's final head it keeps the status, the reason (the standard phrase when the
// upstream sent none) and the fields, less hop-by-hop fields and those the response's Connection
// names (http/hop_by_hop.h), and less Content-Length, because the relay frames the body itself.
// Via gets this hop appended (RFC 9110 §7.6.3) when `via` is set. Then come the gateway's own
// fields (x-request-id, which replaces the upstream's, x-rolter-target, x-rolter-route,
// x-rolter-fallbacks, x-rolter-attempts, x-rolter-decision, and the extra fields of a limited
// key), the framing the relay will use,
// and Connection when the connection's fate differs from the version's default.
//
// Thread-safety: pure function.
#pragma once

#include "http/fields.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace rolter {

// How the relayed body is delimited.
enum class BodyFraming {
  kNone,     // no body by definition (204, 304) or announced empty: nothing follows the head
  kLength,   // Content-Length: content_length
  kChunked,  // Transfer-Encoding: chunked (HTTP/1.1 clients)
  kClose,    // the end of the connection (an HTTP/1.0 client, length unknown)
};

struct ClientHeadSpec {
  unsigned version = 11;       // the client's: 10 or 11
  unsigned status = 200;       // any three-digit status
  std::string_view request_id;  // x-request-id when not empty, instead of the upstream's
  std::string_view reason;     // the upstream's; empty = the standard phrase
  bool via = true;             // append this hop to Via
  std::string_view target;     // x-rolter-target
  std::string_view route;      // x-rolter-route when not empty: the route that answered
  std::string_view fallbacks;  // x-rolter-fallbacks when not empty: routes given up on, "a,b"
  unsigned attempts = 1;       // x-rolter-attempts
  std::string_view decision;   // x-rolter-decision when not empty
  // The gateway's own fields, as whole "Name: value\r\n" lines (a limited key's RateLimit and
  // x-ratelimit-* fields, which then replace the upstream's fields of those names).
  std::string_view extra_fields;
  BodyFraming framing = BodyFraming::kLength;
  uint64_t content_length = 0;  // for kLength
  bool keep_alive = true;       // the connection stays open after this response
};

// Appends the whole head, ending with the empty line, to `out`.
void append_client_head(const HttpFields& upstream, const ClientHeadSpec& spec, HeadString& out);

}  // namespace rolter
