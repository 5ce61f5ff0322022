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

#include "net/asio_fwd.h"
#include "server/endpoints.h"

namespace rolter {

class Worker;

Task<void> serve_connection(Worker& worker, beast::tcp_stream stream, Listener listener);

}  // namespace rolter
