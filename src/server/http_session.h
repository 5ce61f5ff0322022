// The life of one client connection: read a request, answer it, repeat while keep-alive.
//
// Runs as a coroutine on the worker that accepted the connection. Each request pins the worker's
// current snapshot for its whole life; routing reads only that snapshot.
//
// Thread-safety: runs on one worker thread.
#pragma once

#include "net/asio_fwd.h"

namespace rolter {

class Worker;

Task<void> serve_connection(Worker& worker, beast::tcp_stream stream);

}  // namespace rolter
