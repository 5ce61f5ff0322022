// `rolter-bench overhead`: sets up the upstream and the paths, runs the rounds (every path in
// turn, the same order each round, so drift on a shared machine hits every path alike), takes
// the medians and writes the reports. Returns the process exit code: 0, or 1 with a message on
// stderr (bad arguments, a missing binary, a process that does not start, a peer that does not
// answer, a phase that fails).
//
// Thread-safety: runs on the calling thread; call once.
#pragma once

#include <string>

#include "bench/overhead/options.h"

namespace rolter::bench::overhead {

int run_overhead(OverheadOptions options, const std::string& command, const std::string& self_dir);

}  // namespace rolter::bench::overhead
