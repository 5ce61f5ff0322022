// ClientResponse: the response an attempt writes to its client, head and body pieces (SPEC §2).
//
// Relayed as it is, the head comes from the upstream's final head (http/client_head.h) with the
// gateway's own fields and the body's framing; translated from another API (proxy/
// translated_relay.h), it is the gateway's own head for the translated body. Either way the head
// goes out with the first piece of the body, chunk framing is added when chunked, and write()
// reports a client that went away.
//
// Thread-safety: one per exchange, on the worker thread that owns the client stream.
#pragma once

#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "http/client_head.h"
#include "net/asio_fwd.h"
#include "net/timed_stream.h"

namespace rolter {

struct AttemptParams;

using ResponseParser = beast::http::response_parser<beast::http::buffer_body, FieldAllocator>;

class ClientResponse {
 public:
  // The upstream's answer, relayed as it is. `body_bytes` counts the body bytes written to the
  // client (framing left out), for the access log; it must outlive the object.
  ClientResponse(const ResponseParser& parser, const AttemptParams& p, uint64_t& body_bytes);
  // The head of a translated answer: `status`, `content_type`, and Content-Length `length` when
  // the whole body is known, else chunked (close-delimited for HTTP/1.0). The upstream's other
  // fields (Retry-After, rate-limit and request-id fields) are kept.
  ClientResponse(const ResponseParser& parser, const AttemptParams& p, unsigned status,
                 std::string_view content_type, std::optional<size_t> length,
                 uint64_t& body_bytes);

  bool keep_alive() const { return keep_alive_; }

  // Writes the head (if it has not gone yet) and `data` as the next piece of the body; `last` also
  // ends the body. False when the client is gone.
  Task<bool> write(TimedStream& client, std::string_view data, bool last);

  // Sends the head alone, at once (a stream whose first token is still to come).
  Task<bool> write_head(TimedStream& client);

 private:
  void build(const HttpFields& fields, ClientHeadSpec spec, const AttemptParams& p);

  HeadString head_;
  uint64_t& body_bytes_;
  bool head_sent_ = false;
  bool chunked_ = false;
  bool keep_alive_ = true;
};

// Whether the exchange left the connection fit for another request: RFC 9112 §9.3 keep-alive and
// complete framing. 204 and 304 carry no body by definition; one that sent a body anyway left bytes
// that may still be in flight, so those connections are never reused. (That nothing was read past
// the response is the pool's check: ConnectionPool::give_back.)
bool clean_after(const ResponseParser& parser);

}  // namespace rolter
