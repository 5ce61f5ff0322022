// UpstreamConnection: one keep-alive HTTP/1.1 connection to an upstream endpoint, over plain TCP
// or TLS with certificate and host-name verification.
//
// Owned by one worker thread at a time: in use by one request, or idle in that worker's
// ConnectionPool. Not thread-safe.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <chrono>
#include <memory>
#include <variant>

#include "net/asio_fwd.h"
#include "net/timed_stream.h"
#include "upstream/client_tls.h"
#include "upstream/endpoint.h"

namespace rolter {

class UpstreamConnection {
 public:
  using Plain = TimedStream;
  using Tls = beast::ssl_stream<TimedStream>;

  UpstreamConnection(Plain plain, uint32_t instance_id)
      : stream(std::move(plain)), instance_id(instance_id) {}
  UpstreamConnection(Tls tls, uint32_t instance_id)
      : stream(std::move(tls)), instance_id(instance_id) {}

  // The TCP layer under either variant: timeouts, cancel, close.
  TimedStream& tcp() {
    return std::visit([](auto& s) -> TimedStream& { return beast::get_lowest_layer(s); }, stream);
  }

  // True when nothing arrived on the connection since its last response was read (no data, no
  // EOF, no unsolicited 408), in the socket or in OpenSSL's buffer: known from the event loop when
  // that read drained the socket and no event came since, else by a non-blocking peek; no I/O is
  // consumed. (Bytes read past the response, in `buffer`, are the pool's to check.)
  bool quiet();

  std::variant<Plain, Tls> stream;
  beast::flat_buffer buffer;  // bytes read past one response, kept for the next
  const uint32_t instance_id;
  bool reused = false;  // taken from the pool rather than freshly connected
};

// Resolves, connects and (for https://) performs the TLS handshake with SNI and host-name
// verification, all within `timeout`. Returns the error of the step that failed.
Task<std::pair<error_code, std::unique_ptr<UpstreamConnection>>> connect_upstream(
    const Endpoint& endpoint, uint32_t instance_id, ClientTls tls,
    std::chrono::milliseconds timeout);

}  // namespace rolter
