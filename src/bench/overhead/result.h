// What one run of `rolter-bench overhead` measured: per path, the figures of every round and
// their medians, plus the context every report carries.
//
// Latencies are microseconds; rates are requests per second.
//
// Thread-safety: plain values.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/overhead/options.h"
#include "bench/overhead/rate_search.h"

namespace rolter::bench::overhead {

struct Percentiles {
  double p50 = 0, p99 = 0, p999 = 0;
};

// One path's figures from one round (or, in PathResult::median, the medians over rounds).
struct Figures {
  Percentiles latency;        // non-streaming, concurrency 1
  Percentiles ttft;           // streaming, concurrency 1: to the first data: bytes
  Percentiles added_latency;  // this path minus direct, same round, same percentile
  Percentiles added_ttft;
  double rps_c32 = 0, rps_c256 = 0;  // wrk, closed loop
  double max_sustainable_rps = 0;    // open loop, p99 <= p99_bound_us, no error
  double p99_bound_us = 0;
  std::optional<double> cpu_s_per_10k;  // around the c=32 run
  uint64_t latency_errors = 0, ttft_errors = 0, c32_errors = 0, c256_errors = 0;
  std::vector<ProbeRecord> probes;  // the rate search, per round only

  uint64_t errors() const { return latency_errors + ttft_errors + c32_errors + c256_errors; }
};

struct PathResult {
  std::string name;
  std::string kind;  // "direct", "rolter", "nginx", "haproxy" or "peer"
  std::string url;
  std::string workers;                // "1", "4", "as started"
  std::string measured_process;       // whose CPU and RSS are reported, e.g. "upstream nginx"
  std::vector<pid_t> pids;            // empty when not visible in /proc
  std::optional<double> idle_rss_mb;  // VmRSS right after start (a peer: when first seen)
  std::optional<double> peak_rss_mb;  // VmHWM at the end of the run
  std::string no_streaming;           // why streaming was not measured ("" = it was)
  std::vector<Figures> rounds;
  Figures median;
};

struct OverheadReport {
  std::string machine, commit, command;
  OverheadOptions options;
  std::string upstream;         // what answered: "nginx return (canned), 1 worker" or a URL
  std::string load_generators;  // one line
  std::vector<std::string> notes;
  std::vector<PathResult> paths;  // direct first
  double wall_s = 0;
};

}  // namespace rolter::bench::overhead
