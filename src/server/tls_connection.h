// A TLS connection on the main listener: the handshake, then the ordinary plaintext session over
// a local socket pair, with tls/tls_relay.h carrying the bytes between the two.
//
// The session gets the pair's end as its socket (non-blocking, as an accepted socket is, for
// net/write_now.h; the client watch waits on it as on a TCP socket) and a ClientPeer with the real
// client's address and tls = true (X-Forwarded-Proto: https). The handshake must finish within
// server.header_timeout_ms; failures are counted in rolter_tls_handshake_failures_total. The
// certificate is loaded once (Server::use_tls); a config reload does not replace it.
//
// Thread-safety: serve_tls_connection runs on the worker that owns the socket. A TlsListener is
// built before the server starts and only read afterwards, by every worker.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <memory>

#include "net/asio_fwd.h"
#include "server/endpoints.h"
#include "tls/handshake_failures.h"

namespace rolter {

class Worker;

struct TlsListener {
  std::unique_ptr<asio::ssl::context> context;
  HandshakeFailures handshake_failures;  // counts nothing until the server has metrics
};

// Serves one accepted connection until both the client and the session are done.
Task<void> serve_tls_connection(Worker& worker, asio::ip::tcp::socket socket, Listener listener,
                                const TlsListener& tls);

}  // namespace rolter
