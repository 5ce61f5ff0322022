// Terminating TLS in front of a plaintext session: the handshake, and the relay that carries the
// bytes between the client's TLS stream and one end of a local socket pair, whose other end the
// ordinary plaintext session (server/http_session.h) serves as if it were the client's socket.
//
//   TlsStream tls(std::move(accepted), context);
//   if (auto ec = co_await handshake_within(tls, 10s)) { ... count it, drop the connection ... }
//   ... hand the pair's other end to the session ...
//   co_await relay_tls(tls, pair_end, limits);   // returns when both sides are done; closes both
//
// The relay keeps the session's view of the client faithful:
// - bytes go on as soon as they are read, one read at most in each direction: a streamed (SSE)
//   response reaches the client event by event;
// - the client's end of stream (close_notify or a bare TCP close) becomes a half-close of the pair
//   (the session answers the request it has, as it does for a plaintext half-close);
// - a write to the client that fails or stalls past `write_stall` shuts the pair both ways, so the
//   session's next write fails and it logs the client as gone (499) and cancels the upstream;
// - when the session closes the pair, the client gets a close_notify (waited on for at most
//   `close_wait`) and the TCP connection is closed.
//
// Thread-safety: the stream and the pair end belong to one worker; run the coroutines there.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl/stream.hpp>

#include <chrono>

#include "net/asio_fwd.h"

namespace rolter {

using TlsStream = asio::ssl::stream<asio::ip::tcp::socket>;
using PairSocket = asio::local::stream_protocol::socket;

// The server side of the handshake, abandoned after `limit`: asio::error::timed_out then.
Task<error_code> handshake_within(TlsStream& tls, std::chrono::milliseconds limit);

struct RelayLimits {
  // A write to the client that makes no progress for this long ends the connection.
  std::chrono::milliseconds write_stall{600000};
  // How long the client may take to answer the close_notify before the socket is closed.
  std::chrono::milliseconds close_wait{2000};
};

// Relays until the session closes its end or the client is lost, then closes both.
Task<void> relay_tls(TlsStream& tls, PairSocket& pair, RelayLimits limits);

}  // namespace rolter
