// Request dispatch: which endpoint serves a request, authentication, and the gateway's own
// endpoints (/healthz, /readyz, /v1/models). Inference endpoints go to the proxy.
//
// Thread-safety: runs on one worker thread.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <optional>
#include <string>

#include "http/fields.h"
#include "inspect/request_facts.h"
#include "net/asio_fwd.h"
#include "proxy/client_watch.h"
#include "proxy/error_response.h"
#include "snapshot/snapshot.h"
#include "trace/request_trace.h"

namespace rolter {

class Worker;
struct EndpointSpec;

// Which listener a connection came in on.
enum class Listener {
  kMain,     // the data plane (and /metrics unless server.metrics_listen is set)
  kMetrics,  // server.metrics_listen: /metrics, /healthz and /readyz only, without a key
};

// The client side of one connection, fixed when it was accepted.
struct ClientPeer {
  Listener listener = Listener::kMain;
  std::string ip;  // the peer address, for X-Forwarded-For and logs
  bool tls = false;  // the connection came in over TLS (X-Forwarded-Proto: https)
};

// What the request head alone decides, before any body byte is read (SPEC §2: authenticate
// first): the endpoint, the caller's key, or the error to answer at once.
struct HeadVerdict {
  const EndpointSpec* endpoint = nullptr;
  const ApiKey* key = nullptr;  // null on an open gateway and for unauthenticated endpoints
  std::optional<ApiError> error;
  ErrorStyle style = ErrorStyle::kOpenAi;
};

HeadVerdict check_head(Worker& worker, const Snapshot& snapshot,
                       const beast::http::request<beast::http::string_body, HttpFields>& request,
                       const ClientPeer& peer);

// The route template of an endpoint, for a trace's http.route: "/v1/chat/completions",
// "/v1/models/{id}"; empty for none.
std::string_view endpoint_route(const EndpointSpec* endpoint);

// Answers one request whose head passed check_head() and whose body has been read. Returns false
// when the connection must be closed. `watch` is the connection's (proxy/client_watch.h); `trace`
// is the request's (its id goes on every answer; its status is set here).
Task<bool> handle_request(Worker& worker, const Snapshot& snapshot, TimedStream& stream,
                          ClientWatch& watch,
                          beast::http::request<beast::http::string_body, HttpFields>& request,
                          RequestFacts& facts, const HeadVerdict& head, const ClientPeer& peer,
                          bool keep_alive, RequestTrace& trace);

}  // namespace rolter
