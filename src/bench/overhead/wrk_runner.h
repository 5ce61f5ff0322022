// Runs wrk against a target (closed loop: `connections` connections each with one request
// outstanding, for `duration_s`) with the script of wrk_script.h, and returns its summary. The
// run is bounded: wrk is killed if it has not finished well after its duration.
//
// Thread-safety: not thread-safe (starts a child process); call from the bench's main thread.
#pragma once

#include <string>
#include <tl/expected.hpp>

#include "bench/overhead/target.h"
#include "bench/overhead/wrk_script.h"

namespace rolter::bench::overhead {

struct WrkRun {
  std::string wrk_path;
  std::string dir;  // script and output go here
  int connections = 32;
  int threads = 1;
  double duration_s = 5;
};

tl::expected<WrkSummary, std::string> run_wrk(const WrkRun& run, const Target& target);

// `name` when it holds a '/', else the first executable `name` on $PATH; "" when none.
std::string find_executable(const std::string& name);

}  // namespace rolter::bench::overhead
