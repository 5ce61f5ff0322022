// Request dispatch: which endpoint serves a request, authentication, and the gateway's own
// endpoints (/healthz, /readyz, /v1/models). Inference endpoints go to the proxy.
//
// Thread-safety: runs on one worker thread.
#pragma once

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "inspect/request_facts.h"
#include "net/asio_fwd.h"
#include "snapshot/snapshot.h"

namespace rolter {

class Worker;

// Answers one request. Returns false when the connection must be closed.
Task<bool> handle_request(Worker& worker, const Snapshot& snapshot, beast::tcp_stream& stream,
                          beast::flat_buffer& buffer,
                          beast::http::request<beast::http::string_body>& request,
                          RequestFacts& facts, bool keep_alive);

}  // namespace rolter
