#include "bench/overhead/cli.h"

namespace rolter::bench::overhead {

CLI::App* add_overhead_command(CLI::App& app, OverheadOptions& o) {
  auto* cmd = app.add_subcommand(
      "overhead",
      "Measure what a gateway adds to each request: the same small chat-completion workload "
      "straight at a canned upstream (direct), through rolter, through an nginx proxy_pass "
      "reverse proxy, through HAProxy (http-reuse always), and through any --peer gateway, in "
      "alternating rounds. Reports added latency at concurrency 1 (p50/p99/p99.9, non-streaming "
      "and streaming TTFT), closed-loop throughput at 32 and 256 connections (wrk), the maximum "
      "sustainable open-loop rate, CPU seconds per 10k requests, idle and peak RSS, and worker "
      "counts.");
  cmd->add_option("--rounds", o.rounds,
                  "Rounds; each measures every path once, in the same order; the report shows "
                  "the median over rounds")
      ->capture_default_str();
  cmd->add_option("--workers", o.workers,
                  "Workers of rolter ([server] workers), of the nginx proxy "
                  "(worker_processes) and of HAProxy (nbthread)")
      ->capture_default_str();
  cmd->add_option("--upstream-workers", o.upstream_workers,
                  "worker_processes of the canned upstream nginx")
      ->capture_default_str();
  cmd->add_option("--latency-requests", o.latency_requests,
                  "Measured requests per round at concurrency 1 (each of non-streaming and "
                  "streaming)")
      ->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "Unmeasured requests before them")->capture_default_str();
  cmd->add_option("--duration", o.duration_s, "Seconds of each wrk throughput run")
      ->capture_default_str();
  cmd->add_option("--probe-seconds", o.probe_seconds,
                  "Seconds of each open-loop probe of the maximum-sustainable-rate search")
      ->capture_default_str();
  cmd->add_option("--max-probes", o.max_probes,
                  "Open-loop probes per path and round (bounds the search's time)")
      ->capture_default_str();
  cmd->add_option("--p99-factor", o.p99_factor,
                  "A rate is sustainable when its p99 is within this factor of the path's "
                  "concurrency-1 p99, with no errors")
      ->capture_default_str();
  cmd->add_option("--p99-floor-ms", o.p99_floor_ms,
                  "The sustainable-rate p99 bound is never below this many ms (0 = factor only)")
      ->capture_default_str();
  cmd->add_option("--stream-chunks", o.stream_chunks,
                  "SSE events in the canned streaming answer (before data: [DONE])")
      ->capture_default_str();
  cmd->add_option("--wrk-threads", o.wrk_threads, "wrk -t")->capture_default_str();
  cmd->add_flag("--quick", o.quick,
                "A short run for tests: 1 round, 500 latency requests, 1 s wrk runs, 2 probes "
                "of 1 s");
  cmd->add_option("--bin-dir", o.bin_dir,
                  "Directory holding the rolter binary (default: rolter-bench's own)");
  cmd->add_option("--nginx", o.nginx_path,
                  "nginx binary, for the canned upstream and the proxy path (skipped with a note "
                  "when not found)")
      ->capture_default_str();
  cmd->add_option("--haproxy", o.haproxy_path,
                  "haproxy binary, for the HAProxy proxy path (skipped with a note when not "
                  "found)")
      ->capture_default_str();
  cmd->add_option("--wrk", o.wrk_path, "wrk binary")->capture_default_str();
  cmd->add_flag("--no-nginx", o.no_nginx, "Do not measure the nginx proxy path");
  cmd->add_flag("--no-haproxy", o.no_haproxy, "Do not measure the HAProxy proxy path");
  cmd->add_flag("--no-rolter", o.no_rolter, "Do not measure rolter (peers only)");
  cmd->add_option("--upstream", o.upstream_url,
                  "Use this running upstream instead of starting the canned nginx; it must "
                  "answer POST /v1/chat/completions, and SSE when the request has "
                  "x-bench-stream: 1");
  cmd->add_option("--peer", o.peers,
                  "NAME=URL: another gateway, already running, measured as a path; requests go "
                  "to URL/v1/chat/completions (repeatable)");
  cmd->add_option("--peer-header", o.peer_headers,
                  "NAME:HEADER=VALUE: a header sent to peer NAME only; {upstream} in VALUE is "
                  "replaced by the upstream's base URL (repeatable)");
  cmd->add_option("--limits", o.limits,
                  "local|redis: also measure rolter with every request on a key with rpm, tpm "
                  "and max_in_flight limits that never refuse, counted in this process or in a "
                  "redis-server the bench starts (repeatable)")
      ->check(CLI::IsMember({"local", "redis"}));
  cmd->add_flag("--tracing-dead-collector", o.tracing_dead_collector,
                "Also measure rolter with [tracing] sample_ratio = 1 and an otlp_endpoint where "
                "nothing listens: every request makes its spans, which are dropped");
  cmd->add_flag("--tracing-live-collector", o.tracing_live_collector,
                "Also measure rolter with [tracing] sample_ratio = 1 exporting to a collector that "
                "takes every batch (the canned upstream answers /v1/traces); needs the canned "
                "upstream");
  cmd->add_flag("--flow-control", o.flow_control,
                "Also measure rolter with flow control on and never saturated: the provider "
                "bounded at 100000 requests in flight, so every request passes the queue's check");
  cmd->add_option("--json", o.json_path, "Write the JSON report here");
  cmd->add_option("--markdown", o.markdown_path, "Write the Markdown report here (also printed)");
  cmd->add_option("--svg", o.svg_path, "Write an SVG chart here");
  cmd->add_flag("--quiet", o.quiet, "No progress on stderr");
  cmd->final_callback([cmd, &o] {
    if (o.quick) apply_quick(o, [cmd](const char* name) { return cmd->count(name) > 0; });
  });
  return cmd;
}

}  // namespace rolter::bench::overhead
