// One round of one path: the concurrency-1 latency and TTFT, wrk's closed-loop throughput at
// each concurrency (with the gateway's CPU time sampled around the c=32 run), and the
// open-loop search for the maximum sustainable rate.
//
// Thread-safety: not thread-safe; the bench's main thread runs rounds one after another.
#pragma once

#include <string>
#include <tl/expected.hpp>

#include "bench/overhead/environment.h"
#include "bench/overhead/options.h"
#include "bench/overhead/result.h"

namespace rolter::bench::overhead {

struct RoundContext {
  const OverheadOptions* options = nullptr;
  std::string wrk_path;
  std::string dir;  // scratch files (wrk's script and output)
  int round = 0;    // 1-based, for progress lines
};

tl::expected<Figures, std::string> measure_round(PathUnderTest& path, const RoundContext& ctx);

// A few requests, streaming and not, before a path is measured: a path that does not answer, or
// fails a plain request, fails the run at once. A peer that fails only streaming requests is
// measured without them (PathResult::no_streaming says why).
tl::expected<void, std::string> check_path(PathUnderTest& path);

}  // namespace rolter::bench::overhead
