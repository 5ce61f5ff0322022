// The open-loop load of the max-sustainable-rate search: requests scheduled at fixed intervals
// for a fixed time, whatever the answers do, sent over a pool of kept-alive connections opened on
// demand (a request due while every connection is busy opens another, up to a cap, or waits in
// a queue). Latency runs from the scheduled send time, so a request delayed by a slow server
// counts its wait (no coordinated omission).
//
// Thread-safety: run_open_loop() runs its own single-threaded io_context on the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bench/overhead/rate_search.h"
#include "bench/overhead/target.h"

namespace rolter::bench::overhead {

struct OpenLoopOptions {
  double rps = 1000;
  double duration_s = 2;
  size_t max_connections = 1024;
  double timeout_s = 5;  // per request
  double drain_s = 2;    // after the last scheduled send, answers may take this long
};

// p99 of the answered requests; errors = failed + never answered by the drain deadline.
ProbeOutcome run_open_loop(const Target& target, const OpenLoopOptions& options);

}  // namespace rolter::bench::overhead
