// The concurrency-1 latency phase: one kept-alive connection, requests back to back, after a
// warm-up. Non-streaming, a sample is the time from starting to write the request to the end of
// the answer; streaming, it is the time to the first SSE `data:` bytes (TTFT).
//
// Thread-safety: measure_latency() runs its own io_context on the calling thread.
#pragma once

#include <cstdint>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "bench/overhead/target.h"

namespace rolter::bench::overhead {

struct LatencyOptions {
  int warmup = 500;
  int requests = 5000;
  bool stream = false;
  double timeout_s = 10;  // per request, and per connect
};

struct LatencySamples {
  std::vector<double> us;  // one per successful measured request
  uint64_t errors = 0;     // failed measured requests (transport, status, no SSE data)
  std::string first_error;
};

// An error only when not one request succeeded (nothing listens, every answer fails).
tl::expected<LatencySamples, std::string> measure_latency(const Target& target,
                                                          const LatencyOptions& options);

}  // namespace rolter::bench::overhead
