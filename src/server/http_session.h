// The life of one client connection: read a request, answer it, repeat while keep-alive.
//
// Runs as a coroutine on the worker that accepted the connection. Each request pins the worker's
// current snapshot for its whole life; routing reads only that snapshot. A request is answered in
// stages, so that nothing is spent on a request that will be refused: the head is read (within
// server.header_timeout_ms), checked for framing (http/request_framing.h) and authenticated; only
// then is `100 Continue` sent and the body read.
//
// Thread-safety: runs on one worker thread.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include <string>

#include "net/asio_fwd.h"
#include "server/endpoints.h"

namespace rolter {

class Worker;

// `stream` is the client's socket, or for a TLS connection the session's end of a local socket
// pair (server/tls_connection.h): nothing here asks the socket who the peer is; `peer` says.
Task<void> serve_connection(Worker& worker, TimedStream stream, ClientPeer peer);

// The peer's address as X-Forwarded-For shows it ("::ffff:" dropped from IPv4-mapped peers).
std::string client_ip(const asio::ip::tcp::socket& socket);

}  // namespace rolter
