// The access-log line of a forwarded request, as far as the request itself tells it: who asked
// (key, team, client), what (method, path without its query, model, stream, body size), and the
// route and fallbacks it is on. The forwarder and the tenancy layer add how it went (target,
// endpoint, attempts, status, timings, tokens) and write it (proxy/request_log.h).
//
// Thread-safety: a pure function; the line views `request` and must not outlive it.
#pragma once

#include "proxy/forwarder.h"
#include "proxy/request_log.h"

namespace rolter {

RequestLogLine request_log_line(const ForwardRequest& request);

// Sets the line's method, path (without its query: a query may carry what is not ours to log)
// and body size from the client's request. Also used for requests refused before routing
// (server/refusal_log.h).
void describe_request(const ClientRequest& request, RequestLogLine& line);

}  // namespace rolter
