#include "bench/overhead/run.h"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "bench/overhead/aggregate.h"
#include "bench/overhead/environment.h"
#include "bench/overhead/measure.h"
#include "bench/overhead/proc_stats.h"
#include "bench/overhead/report.h"
#include "bench/overhead/wrk_runner.h"
#include "bench/report.h"

namespace rolter::bench::overhead {
namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "rolter-bench overhead: %s\n", message.c_str());
  return 1;
}

std::string check_options(const OverheadOptions& o) {
  if (o.rounds < 1) return "--rounds must be at least 1";
  if (o.workers < 1) return "--workers must be at least 1";
  if (o.upstream_workers < 1) return "--upstream-workers must be at least 1";
  if (o.latency_requests < 1) return "--latency-requests must be at least 1";
  if (o.warmup < 0) return "--warmup must be 0 or more";
  if (o.duration_s < 1) return "--duration must be at least 1 s (wrk counts whole seconds)";
  if (o.probe_seconds <= 0) return "--probe-seconds must be positive";
  if (o.max_probes < 1) return "--max-probes must be at least 1";
  if (o.p99_factor < 1) return "--p99-factor must be at least 1";
  if (o.p99_floor_ms < 0) return "--p99-floor-ms must be 0 or more";
  if (o.stream_chunks < 1) return "--stream-chunks must be at least 1";
  if (o.wrk_threads < 1) return "--wrk-threads must be at least 1";
  return {};
}

std::vector<std::string> standard_notes(const OverheadOptions& o, bool nginx_found,
                                        bool haproxy_found, bool rolter_quiet) {
  std::vector<std::string> notes = {
      "Concurrency-1 latency and TTFT: rolter-bench's own Asio client, one kept-alive "
      "connection, " +
          std::to_string(o.latency_requests) + " requests per round after " +
          std::to_string(o.warmup) +
          " warm-up requests; TTFT runs to the first bytes of the "
          "first SSE `data:` event (" +
          std::to_string(o.stream_chunks) + " events per answer).",
      "Throughput: wrk drives the closed loop (" + std::to_string(o.wrk_threads) +
          " thread(s), 32 and 256 connections, " + std::to_string(static_cast<int>(o.duration_s)) +
          " s each).",
      "Maximum sustainable rate: rolter-bench's open-loop generator (requests at fixed "
      "intervals over a pool of kept-alive connections; latency from the scheduled send time), "
      "at most " +
          std::to_string(o.max_probes) + " probes of " +
          [&] {
            char b[32];
            std::snprintf(b, sizeof b, "%.1f", o.probe_seconds);
            return std::string(b);
          }() +
          " s per path and round.",
      "CPU: utime + stime of the serving process(es) across the c=32 run; for direct, the "
      "upstream's. RSS: VmRSS right after start (a peer: when first seen) and VmHWM at the end.",
      rolter_quiet
          ? "Per-request logging is off on every proxy: rolter runs with --no-access-log, the "
            "nginx proxy with access_log off."
          : "This rolter has no --no-access-log: it writes one JSON log line per request (to a "
            "file the bench empties between phases), and its figures include that cost; the "
            "nginx proxy runs with access_log off."};
  if (!nginx_found) {
    notes.push_back("The nginx proxy path was skipped: " + o.nginx_path + " was not found.");
  }
  if (!haproxy_found) {
    notes.push_back("The HAProxy proxy path was skipped: " + o.haproxy_path + " was not found.");
  } else if (!o.no_haproxy) {
    notes.push_back("HAProxy: one process in the foreground, nbthread " +
                    std::to_string(o.workers) +
                    ", mode http, http-reuse always, option http-keep-alive, no logging.");
  }
  return notes;
}

}  // namespace

int run_overhead(OverheadOptions o, const std::string& command, const std::string& self_dir) {
  const auto wall_start = std::chrono::steady_clock::now();
  if (auto bad = check_options(o); !bad.empty()) return fail(bad);
  auto peers = parse_peers(o.peers, o.peer_headers);
  if (!peers) return fail(peers.error());

  const std::string wrk = find_executable(o.wrk_path);
  if (wrk.empty())
    return fail("wrk not found (" + o.wrk_path + "): install wrk or give --wrk PATH");
  const std::string nginx = find_executable(o.nginx_path);
  const std::string haproxy = find_executable(o.haproxy_path);
  std::string rolter;
  if (!o.no_rolter) {
    rolter = (o.bin_dir.empty() ? self_dir : o.bin_dir) + "/rolter";
    if (find_executable(rolter).empty()) {
      return fail("rolter not found at " + rolter + " (give --bin-dir)");
    }
  }
  if (!o.quiet) std::fprintf(stderr, "starting the upstream and the gateways\n");
  auto env =
      Environment::start(o, *peers, rolter, nginx, o.no_haproxy ? "" : haproxy);
  if (!env) return fail(env.error());
  for (PathUnderTest& p : (*env)->paths()) {
    if (auto ok = check_path(p); !ok) return fail(ok.error());
  }

  OverheadReport report;
  report.machine = machine_description();
  report.commit = current_commit();
  report.command = command;
  report.options = o;
  report.upstream = (*env)->upstream_description();
  report.load_generators =
      "rolter-bench (Asio; concurrency 1 and open loop), " + wrk + " (closed loop)";
  report.notes = standard_notes(o, o.no_nginx || !nginx.empty(), o.no_haproxy || !haproxy.empty(),
                                (*env)->rolter_access_log_off());
  if (o.no_nginx) report.notes.push_back("The nginx proxy path was skipped (--no-nginx).");
  if (o.no_haproxy) report.notes.push_back("The HAProxy proxy path was skipped (--no-haproxy).");

  RoundContext ctx{&o, wrk, (*env)->dir(), 0};
  auto& paths = (*env)->paths();
  for (int round = 1; round <= o.rounds; ++round) {
    ctx.round = round;
    for (PathUnderTest& p : paths) {
      auto figures = measure_round(p, ctx);
      if (!figures) return fail(figures.error());
      p.result.rounds.push_back(std::move(*figures));
    }
  }
  std::vector<PathResult> results;
  for (PathUnderTest& p : paths) {
    if (auto m = read_memory(p.result.pids)) p.result.peak_rss_mb = m->hwm_kb / 1024.0;
    results.push_back(p.result);
  }
  compute_added(results, 0);
  for (PathResult& p : results) p.median = median_figures(p.rounds);
  report.paths = std::move(results);
  env->reset();
  report.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  const std::string md = render_markdown(report);
  std::cout << md << std::flush;
  bool ok = true;
  constexpr const char* kProgram = "rolter-bench overhead";
  if (!o.markdown_path.empty()) ok &= write_report_file(o.markdown_path, md, kProgram);
  if (!o.json_path.empty()) ok &= write_report_file(o.json_path, render_json(report), kProgram);
  if (!o.svg_path.empty()) ok &= write_report_file(o.svg_path, render_svg(report), kProgram);
  return ok ? 0 : 1;
}

}  // namespace rolter::bench::overhead
