// The access-log line (SPEC §17) of a request the gateway answered itself before any route took
// it: a head refused (no key or a bad one, an unknown path, a method the path does not take), a
// body that could not be read (larger than server.max_body_bytes, malformed framing), or a body
// that could not be routed (not JSON, an unknown model). Such a request tried no target: its line
// has `"route":""`, `"target":"none"` and no attempt, and says who asked, what, and how it was
// answered, with the request id its answer carried. Requests the forwarder answers (proxied,
// refused by a key's limits, shed by a queue) write their own lines.
//
//   ... write the error answer, learning its body's size ...
//   log_refusal({.trace = trace, .client = peer.ip, .request = &request, .status = 401,
//                .bytes_out = n});   // its duration: since trace.begin()
//
// Thread-safety: any thread; the line goes through the access log's writer.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstdint>
#include <string_view>

#include "http/fields.h"
#include "net/asio_fwd.h"

namespace rolter {

class RequestTrace;
struct ApiKey;

struct RefusedRequest {
  const RequestTrace& trace;               // its id, trace id, and when it began
  std::string_view client;                 // the peer's address
  // Null when not even its request line could be read.
  const beast::http::request<beast::http::string_body, HttpFields>* request = nullptr;
  const ApiKey* key = nullptr;             // the caller's key, once it was checked
  std::string_view model;                  // `model` from the body, once it was read
  unsigned status = 0;
  uint64_t bytes_out = 0;  // the error body that went out
};

void log_refusal(const RefusedRequest& refused);

}  // namespace rolter
