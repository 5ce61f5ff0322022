// The access log (SPEC §9, §17): one JSON object per line per request, at info level, with
// who asked (key, team, client address), what (method, path, model, stream), where it went (route,
// fallbacks, target, the endpoint that answered, every attempt and why it failed), and how it went
// (status, upstream status, bytes, duration, TTFT, tokens). It never carries a key's secret, a
// header value, a query string or prompt text; every value a client chose is JSON-escaped, and
// bytes that are not UTF-8 become U+FFFD. Requests refused before routing have their lines built
// by server/refusal_log.h.
//
// The lines go to server.access_log: "stderr" (the default, beside the application log), "off",
// or a file opened for appending that SIGUSR1 reopens (proxy/access_log_writer.h). The other
// lines written here (auth_failed, upstream_auth_failed) belong to the application log and stay
// on stderr.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <tl/expected.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "proxy/attempt_log.h"

namespace rolter {

struct RequestLogLine {
  std::string_view request_id;  // x-request-id (SPEC §17); empty: not written
  std::string_view trace_id;    // the W3C trace id; empty: not written
  std::string_view client;      // the peer's address
  std::string_view method;
  std::string_view path;   // the request target without its query
  std::string_view model;  // `model` as the client asked for it
  bool stream = false;     // the client asked for a stream
  std::string_view key;    // the key's name; empty on an open gateway
  std::string_view team;   // the key's team; empty for none
  std::string_view route;  // the route that answered (the request's own when none did)
  // The routes given up on before it ("a,b"; SPEC §16), or every route tried when none answered;
  // empty when the request stayed on its route.
  std::string_view fallbacks;
  std::string_view target;    // "none" when the gateway answered itself
  std::string_view endpoint;  // the base URL of the instance that answered; empty: none did
  unsigned attempts = 0;
  std::span<const AttemptEntry> tries;  // the first attempts (AttemptLog), in order
  std::optional<uint64_t> queue_ms;     // the time it waited in its route's queue, when it did
  unsigned status = 0;                  // 499: the client went away before the end of its answer
  unsigned upstream_status = 0;         // the status the upstream answered; 0 = none
  uint64_t bytes_in = 0;                // the request's body
  uint64_t bytes_out = 0;               // the response body sent to the client
  double duration_s = 0;
  std::optional<double> ttft_s;
  std::optional<uint64_t> tokens_in;
  std::optional<uint64_t> tokens_out;
  bool complete = true;  // false when the relay was cut mid-body
  // The answer reported no usage, so its reservation stands as the charge (SPEC §15).
  bool usage_estimated = false;
  // Refused by the key's limits: "rate_limit", "budget" or "unavailable"; empty otherwise.
  std::string_view limited;
};

// Writes the line to the access log, unless it is off.
void log_request(const RequestLogLine& line);

// The line log_request() writes, without its newline, stamped `ts_ms` (milliseconds since the
// epoch).
std::string format_request_line(const RequestLogLine& line, int64_t ts_ms);

// Where the lines go (server.access_log): "stderr", "off" or a file path, opened now for
// appending. Naming the destination already in use changes nothing. On failure the message says
// why, and the lines keep going where they went. While set_access_log(false) holds, the
// destination is only remembered.
tl::expected<void, std::string> set_access_log_destination(std::string_view destination);

// Reopens a file destination by its path (SIGUSR1, after a rotation renamed the file).
tl::expected<void, std::string> reopen_access_log();

// Where the lines go now: "stderr", "off" or the file's path.
std::string access_log_destination();

// false: no line at all, whatever server.access_log says (`--no-access-log`, like nginx's
// `access_log off`: a gateway whose traffic is logged elsewhere saves one write per request).
// true (the default): the configured destination.
void set_access_log(bool on);

// One JSON line for a request refused for its key: why ("missing" or "invalid"), the path and the
// client's address. Never the presented key.
void log_auth_failure(std::string_view reason, std::string_view path, std::string_view client);

// One JSON line at warn level when an upstream refused the gateway's own credentials (401, 403):
// an operator must fix the provider's key. `upstream_message` is the start of the upstream's body.
void log_upstream_auth_failure(std::string_view provider, unsigned status,
                               std::string_view upstream_message);

}  // namespace rolter
