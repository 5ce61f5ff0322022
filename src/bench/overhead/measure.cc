#include "bench/overhead/measure.h"

#include <algorithm>
#include <cstdio>

#include "bench/overhead/latency_client.h"
#include "bench/overhead/open_loop.h"
#include "bench/overhead/proc_stats.h"
#include "bench/overhead/rate_search.h"
#include "bench/overhead/wrk_runner.h"
#include "bench/percentile.h"

namespace rolter::bench::overhead {
namespace {

// The open-loop search starts below the c=32 throughput, where a healthy path passes.
constexpr double kSearchStartShare = 0.25;
// Open loop cannot beat closed loop by much; this caps the bracket's upward walk.
constexpr double kSearchCeilingShare = 1.5;
constexpr double kSearchFloorRps = 50;

void progress(const RoundContext& ctx, const PathUnderTest& p, const std::string& phase) {
  if (ctx.options->quiet) return;
  std::fprintf(stderr, "[round %d/%d] %s: %s\n", ctx.round, ctx.options->rounds,
               p.result.name.c_str(), phase.c_str());
}

Percentiles percentiles(std::vector<double>& us) {
  return {percentile(us, 50), percentile(us, 99), percentile(us, 99.9)};
}

tl::expected<void, std::string> concurrency_one(PathUnderTest& p, const RoundContext& ctx,
                                                Figures& f) {
  const OverheadOptions& o = *ctx.options;
  for (bool stream : {false, true}) {
    if (stream && !p.result.no_streaming.empty()) continue;
    progress(ctx, p,
             std::string(stream ? "streaming TTFT" : "latency") + " at concurrency 1, " +
                 std::to_string(o.latency_requests) + " requests");
    auto s = measure_latency(p.target, {o.warmup, o.latency_requests, stream, 10});
    if (!s) return tl::unexpected(s.error());
    (stream ? f.ttft : f.latency) = percentiles(s->us);
    (stream ? f.ttft_errors : f.latency_errors) = s->errors;
    if (s->errors > 0 && !o.quiet) {
      std::fprintf(stderr, "  %llu error(s), first: %s\n",
                   static_cast<unsigned long long>(s->errors), s->first_error.c_str());
    }
  }
  return {};
}

tl::expected<void, std::string> throughput(PathUnderTest& p, const RoundContext& ctx, Figures& f) {
  const OverheadOptions& o = *ctx.options;
  for (int c : kThroughputConcurrency) {
    progress(ctx, p, "throughput, wrk -c " + std::to_string(c));
    const auto cpu_before = read_cpu_seconds(p.result.pids);
    auto w = run_wrk({ctx.wrk_path, ctx.dir, c, o.wrk_threads, o.duration_s}, p.target);
    const auto cpu_after = read_cpu_seconds(p.result.pids);
    if (!w)
      return tl::unexpected(p.result.name + ": wrk -c " + std::to_string(c) + ": " + w.error());
    (c == 32 ? f.rps_c32 : f.rps_c256) = w->rps();
    (c == 32 ? f.c32_errors : f.c256_errors) = w->errors();
    if (c == 32 && cpu_before && cpu_after && w->requests > 0) {
      f.cpu_s_per_10k = (*cpu_after - *cpu_before) / static_cast<double>(w->requests) * 1e4;
    }
    if (p.owned) p.owned->truncate_logs();
  }
  return {};
}

void sustainable_rate(PathUnderTest& p, const RoundContext& ctx, Figures& f) {
  const OverheadOptions& o = *ctx.options;
  RateSearchOptions s;
  // A loopback path's concurrency-1 p99 is tens of microseconds; twice that is within the
  // scheduling jitter of a busy machine, which would then decide the answer, not the gateway.
  s.p99_bound_ms = std::max(o.p99_factor * f.latency.p99 / 1000.0, o.p99_floor_ms);
  f.p99_bound_us = s.p99_bound_ms * 1000.0;
  const double closed = std::max(f.rps_c32, f.rps_c256);
  s.start_rps = std::max(kSearchFloorRps, kSearchStartShare * f.rps_c32);
  s.max_rps = std::max(s.start_rps, kSearchCeilingShare * closed);
  s.min_rps = kSearchFloorRps;
  s.max_probes = o.max_probes;
  auto probe = [&](double rps) {
    char what[160];
    std::snprintf(what, sizeof what, "open loop at %.0f req/s for %.1f s (p99 bound %.3f ms)", rps,
                  o.probe_seconds, s.p99_bound_ms);
    progress(ctx, p, what);
    ProbeOutcome out = run_open_loop(p.target, {rps, o.probe_seconds, 1024, 5, 2});
    if (p.owned) p.owned->truncate_logs();
    if (!o.quiet) {
      std::fprintf(stderr, "  p99 %.3f ms, %llu error(s) of %llu\n", out.p99_ms,
                   static_cast<unsigned long long>(out.errors),
                   static_cast<unsigned long long>(out.requests));
    }
    return out;
  };
  RateSearchResult r = search_max_rate(s, probe);
  f.max_sustainable_rps = r.max_rps;
  f.probes = std::move(r.probes);
}

}  // namespace

tl::expected<Figures, std::string> measure_round(PathUnderTest& p, const RoundContext& ctx) {
  Figures f;
  if (auto r = concurrency_one(p, ctx, f); !r) return tl::unexpected(r.error());
  if (p.owned) p.owned->truncate_logs();
  if (auto r = throughput(p, ctx, f); !r) return tl::unexpected(r.error());
  sustainable_rate(p, ctx, f);
  return f;
}

tl::expected<void, std::string> check_path(PathUnderTest& p) {
  const std::string who =
      p.result.kind == "peer" ? "peer \"" + p.result.name + "\"" : p.result.name;
  for (bool stream : {false, true}) {
    auto s = measure_latency(p.target, {0, 3, stream, 10});
    if (!s && stream && p.result.kind == "peer") s = LatencySamples{{}, 1, s.error()};
    if (!s) {
      return tl::unexpected(who + " (" + p.target.url() + ") does not answer" +
                            (stream ? " a streaming request" : "") + ": " + s.error());
    }
    if (s->errors > 0 && stream && p.result.kind == "peer") {
      p.result.no_streaming = "streaming requests fail: " + s->first_error;
      std::fprintf(stderr, "rolter-bench overhead: peer \"%s\": %s; measuring it without TTFT\n",
                   p.result.name.c_str(), p.result.no_streaming.c_str());
      continue;
    }
    if (s->errors > 0) {
      return tl::unexpected(who + " (" + p.target.url() + ") fails" +
                            (stream ? " a streaming request" : " a request") + ": " +
                            s->first_error);
    }
  }
  return {};
}

}  // namespace rolter::bench::overhead
