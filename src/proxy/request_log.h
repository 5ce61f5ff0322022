// The per-request log line (SPEC §9): one JSON object at info level per proxied request, with
// route, target, attempts, status, duration, TTFT and tokens. It never carries a key, a header
// value or prompt text.
//
// Thread-safety: log_request() may be called from any thread (spdlog's logger is thread-safe).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rolter {

struct RequestLogLine {
  std::string_view route;
  std::string_view target;  // "none" when the gateway answered itself
  unsigned attempts = 0;
  unsigned status = 0;      // 499: the client went away first
  double duration_s = 0;
  std::optional<double> ttft_s;
  std::optional<uint64_t> tokens_in;
  std::optional<uint64_t> tokens_out;
  bool complete = true;     // false when the relay was cut mid-body
};

void log_request(const RequestLogLine& line);

}  // namespace rolter
