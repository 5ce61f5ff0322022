// wrk, the closed-loop load generator of the throughput phase: the Lua script the bench hands it
// (method POST, the request body and headers, and a done() hook that prints one JSON line), and
// the parser for that line.
//
// Usage:
//   std::string lua = wrk_script(body, {{"content-type", "application/json"}});
//   ... run `wrk -s script.lua ...`, capture stdout ...
//   auto summary = parse_wrk_output(stdout_text);  // requests, errors, duration, percentiles
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

namespace rolter::bench::overhead {

// The marker that starts the done() line in wrk's stdout.
inline constexpr std::string_view kWrkMarker = "ROLTER_WRK ";

struct WrkSummary {
  uint64_t requests = 0;
  double duration_s = 0;
  uint64_t connect_errors = 0, read_errors = 0, write_errors = 0, status_errors = 0, timeouts = 0;
  double p50_us = 0, p99_us = 0, p999_us = 0, mean_us = 0, max_us = 0;

  uint64_t errors() const {
    return connect_errors + read_errors + write_errors + status_errors + timeouts;
  }
  double rps() const { return duration_s > 0 ? static_cast<double>(requests) / duration_s : 0; }
};

// A Lua string literal for `s`, escaped so any byte survives.
std::string lua_quote(std::string_view s);

std::string wrk_script(std::string_view body,
                       const std::vector<std::pair<std::string, std::string>>& headers);

// Finds the marker line in wrk's stdout and parses it.
tl::expected<WrkSummary, std::string> parse_wrk_output(std::string_view stdout_text);

}  // namespace rolter::bench::overhead
