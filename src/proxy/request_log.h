// The per-request log line (SPEC §9): one JSON object at info level per proxied request, with
// the key's name and team, route, the fallback path, target, attempts, status, duration, TTFT and
// tokens. It never carries a key's secret, a header value or prompt text.
//
// Thread-safety: log_request() may be called from any thread (spdlog's logger is thread-safe).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rolter {

struct RequestLogLine {
  std::string_view key;    // the key's name; empty on an open gateway
  std::string_view team;   // the key's team; empty for none
  std::string_view route;  // the route that answered (the request's own when none did)
  // The routes given up on before it ("a,b"; SPEC §16), or every route tried when none answered;
  // empty when the request stayed on its route.
  std::string_view fallbacks;
  std::string_view target;  // "none" when the gateway answered itself
  unsigned attempts = 0;
  unsigned status = 0;           // 499: the client went away before the end of its answer
  unsigned upstream_status = 0;  // the status the upstream answered; 0 = none
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

// Writes the line, unless the access log is off (set_access_log(false)).
void log_request(const RequestLogLine& line);

// Turns the per-request lines on (the default) or off, as nginx's `access_log off` does: a
// gateway whose traffic is logged elsewhere saves one write per request. Call at start.
void set_access_log(bool on);

// One JSON line for a request refused for its key: why ("missing" or "invalid"), the path and the
// client's address. Never the presented key.
void log_auth_failure(std::string_view reason, std::string_view path, std::string_view client);

// One JSON line at warn level when an upstream refused the gateway's own credentials (401, 403):
// an operator must fix the provider's key. `upstream_message` is the start of the upstream's body.
void log_upstream_auth_failure(std::string_view provider, unsigned status,
                               std::string_view upstream_message);

}  // namespace rolter
