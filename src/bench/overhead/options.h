// Everything `rolter-bench overhead` is told on its command line, with the defaults its --help
// shows. `quick` shrinks the run for tests (see apply_quick()).
//
// Thread-safety: a plain value.
#pragma once

#include <string>
#include <vector>

namespace rolter::bench::overhead {

struct OverheadOptions {
  int rounds = 3;
  int workers = 1;  // rolter's [server] workers, nginx's worker_processes, haproxy's nbthread
  int upstream_workers = 1;  // the canned upstream nginx's worker_processes
  int latency_requests = 5000;
  int warmup = 500;
  double duration_s = 5;     // each wrk run
  double probe_seconds = 2;  // each open-loop probe
  int max_probes = 8;        // per path and round
  double p99_factor = 2;     // a probe passes when p99 <= factor x the path's concurrency-1 p99
  double p99_floor_ms = 1;   // ... or this, whichever is larger (see measure.cc)
  int stream_chunks = 16;
  int wrk_threads = 1;
  bool quick = false;
  bool quiet = false;
  bool no_nginx = false;
  bool no_haproxy = false;
  bool no_rolter = false;
  std::string bin_dir;  // where `rolter` is; "" = beside rolter-bench
  std::string nginx_path = "nginx";
  std::string haproxy_path = "haproxy";
  std::string wrk_path = "wrk";
  std::string upstream_url;  // "" = start the canned nginx upstream
  std::vector<std::string> peers;
  // Also measure rolter with a limited key (SPEC §15), per backend: "local" and/or "redis".
  std::vector<std::string> limits;
  // Also measure rolter tracing every request (sample_ratio 1) to a collector that is not there
  // (SPEC §17): what spans cost the request path when they can only be dropped.
  bool tracing_dead_collector = false;
  // The same with a collector that takes every batch (the canned upstream's /v1/traces): beside
  // the dead one, what a dead collector adds to recording.
  bool tracing_live_collector = false;
  // Also measure rolter with flow control on and never saturated (SPEC §19): what the queue's
  // one check costs the unsaturated path.
  bool flow_control = false;
  std::vector<std::string> peer_headers;
  std::string json_path, markdown_path, svg_path;
};

// The concurrencies of the closed-loop throughput phase.
inline constexpr int kThroughputConcurrency[] = {32, 256};

// --quick: one round, ~500 latency requests, 1 s wrk runs, two open-loop probes of 1 s; an
// option given explicitly (`given("--rounds")`) keeps its value.
template <typename Given>
void apply_quick(OverheadOptions& o, const Given& given) {
  if (!given("--rounds")) o.rounds = 1;
  if (!given("--latency-requests")) o.latency_requests = 500;
  if (!given("--warmup")) o.warmup = 50;
  if (!given("--duration")) o.duration_s = 1;
  if (!given("--probe-seconds")) o.probe_seconds = 1;
  if (!given("--max-probes")) o.max_probes = 2;
}

}  // namespace rolter::bench::overhead
