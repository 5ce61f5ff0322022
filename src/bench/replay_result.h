// The numbers one replay produces: per-strategy results and the report around them. Filled by
// the in-process and HTTP replays, rendered by report.h.
//
// Thread-safety: plain values.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bench/cache_bounds.h"
#include "bench/percentile.h"
#include "bench/tenants.h"
#include "bench/windowed_imbalance.h"

namespace rolter::bench {

// One tenant's requests in a --tenants replay.
struct TenantSamples {
  uint64_t sent = 0;
  uint64_t served = 0;          // answered 200 with a whole stream
  uint64_t shed = 0;            // refused with 429: the gateway's flow control shed it
  uint64_t errors = 0;          // every other failure
  std::vector<double> ttft_ms;  // per served request

  // One request's end: `ok` when served, else its HTTP status (0 when none was read).
  void add(bool ok, int status, double ttft) {
    ++sent;
    if (ok) {
      ++served;
      ttft_ms.push_back(ttft);
    } else if (status == 429) {
      ++shed;
    } else {
      ++errors;
    }
  }
};

// Raw observations of one strategy's run; summarize() turns them into a StrategyResult.
struct RunSamples {
  std::vector<double> ttft_ms;  // per successful request
  std::vector<double> e2e_ms;
  // Inter-token latency: every interval between two successive output tokens of a streamed
  // answer, pooled over all requests (an answer of n tokens gives n - 1). In a disaggregated run,
  // only the decode step's tokens count: the prefill step's one token is not streamed.
  std::vector<double> itl_ms;
  // Disaggregated runs: requests that went through a prefill engine (SPEC §18's split).
  uint64_t split_requests = 0;
  uint64_t requests = 0;
  uint64_t errors = 0;
  uint64_t output_tokens = 0;
  // Prefix-cache accounting: from the engines' counters where available.
  uint64_t hit_tokens = 0;
  uint64_t query_tokens = 0;
  // Load imbalance samples: max/mean in-flight across engines, taken while anything is in flight.
  // The peak counts only samples with at least one request per engine on average: below that, a
  // lone request makes max/mean the engine count, whatever the strategy.
  double imbalance_sum = 0;
  double imbalance_peak = 0;
  uint64_t imbalance_samples = 0;
  // Requests assigned per engine in 60 s windows of arrival time (empty when the replay cannot
  // tell which engine served a request).
  WindowedImbalance assigned;
  double duration_s = 0;  // first arrival to last completion, in the replay's time
  double wall_s = 0;      // wall-clock time the replay took
  // HTTP mode: requests each gateway node counted in its rolter_requests_total during the run, in
  // --gateways order (0 where its /metrics could not be read).
  std::vector<uint64_t> served_per_gateway;
  // --tenants: per tenant, indexed like the tenants (empty without tenants).
  std::vector<TenantSamples> tenants;

  void add_imbalance_sample(double max_load, double mean_load) {
    if (mean_load <= 0) return;
    const double r = max_load / mean_load;
    imbalance_sum += r;
    if (mean_load >= 1) imbalance_peak = std::max(imbalance_peak, r);
    ++imbalance_samples;
  }
};

struct TenantResult {
  std::string tenant;
  uint32_t priority = 0;
  double share = 0;  // the share of the trace it was drawn with
  uint64_t sent = 0, served = 0, shed = 0, errors = 0;
  double shed_rate = 0;                     // shed / sent
  double ttft_p50_ms = 0, ttft_p99_ms = 0;  // of its served requests
};

struct StrategyResult {
  std::string strategy;
  uint64_t requests = 0;
  uint64_t errors = 0;
  uint64_t hit_tokens = 0;
  uint64_t query_tokens = 0;
  double hit_ratio = 0;
  double of_pooled_bound = 0;  // hit_ratio / pooled bound ratio
  double ttft_p50_ms = 0, ttft_p99_ms = 0;
  double itl_p50_ms = 0, itl_p99_ms = 0;
  uint64_t itl_samples = 0;
  double e2e_p50_ms = 0, e2e_p99_ms = 0;
  uint64_t split_requests = 0;  // disaggregated runs: requests that went through a prefill engine
  double req_per_s = 0;
  double output_tok_per_s = 0;
  double imbalance_mean = 0;  // mean over samples of max/mean in-flight
  double imbalance_peak = 0;  // the highest, over samples with >= 1 request per engine
  // Median over 60 s windows of max/mean requests assigned per engine; 0 when not measured.
  double window_imbalance = 0;
  // Each window's max/mean, in time order (the last one may be shorter than 60 s).
  std::vector<double> window_imbalances;
  double duration_s = 0;
  double wall_s = 0;
  std::vector<uint64_t> served_per_gateway;  // HTTP mode
  std::vector<TenantResult> tenants;         // --tenants
};

// Appends the intervals between successive token times of one answer (`times` in arrival order)
// to `itl_ms`.
inline void add_token_intervals(std::span<const double> times, std::vector<double>& itl_ms) {
  for (size_t i = 1; i < times.size(); ++i) itl_ms.push_back(times[i] - times[i - 1]);
}

// Per-tenant results: `samples[i]` is `tenants[i]`'s. Sorts the samples' TTFTs.
inline std::vector<TenantResult> summarize_tenants(std::span<const Tenant> tenants,
                                                   std::span<TenantSamples> samples) {
  std::vector<TenantResult> out;
  for (size_t i = 0; i < tenants.size() && i < samples.size(); ++i) {
    TenantSamples& s = samples[i];
    out.push_back({.tenant = tenants[i].name,
                   .priority = tenants[i].priority,
                   .share = tenants[i].share,
                   .sent = s.sent,
                   .served = s.served,
                   .shed = s.shed,
                   .errors = s.errors,
                   .shed_rate = s.sent ? static_cast<double>(s.shed) / s.sent : 0,
                   .ttft_p50_ms = percentile(s.ttft_ms, 50),
                   .ttft_p99_ms = percentile(s.ttft_ms, 99)});
  }
  return out;
}

inline StrategyResult summarize(std::string strategy, RunSamples& s, double pooled_ratio) {
  StrategyResult r;
  r.strategy = std::move(strategy);
  r.requests = s.requests;
  r.errors = s.errors;
  r.hit_tokens = s.hit_tokens;
  r.query_tokens = s.query_tokens;
  r.hit_ratio = s.query_tokens ? static_cast<double>(s.hit_tokens) / s.query_tokens : 0;
  r.of_pooled_bound = pooled_ratio > 0 ? r.hit_ratio / pooled_ratio : 0;
  r.ttft_p50_ms = percentile(s.ttft_ms, 50);
  r.ttft_p99_ms = percentile(s.ttft_ms, 99);
  r.itl_p50_ms = percentile(s.itl_ms, 50);
  r.itl_p99_ms = percentile(s.itl_ms, 99);
  r.itl_samples = s.itl_ms.size();
  r.split_requests = s.split_requests;
  r.e2e_p50_ms = percentile(s.e2e_ms, 50);
  r.e2e_p99_ms = percentile(s.e2e_ms, 99);
  if (s.duration_s > 0) {
    r.req_per_s = static_cast<double>(s.requests - s.errors) / s.duration_s;
    r.output_tok_per_s = static_cast<double>(s.output_tokens) / s.duration_s;
  }
  r.imbalance_mean = s.imbalance_samples ? s.imbalance_sum / s.imbalance_samples : 0;
  r.imbalance_peak = s.imbalance_peak;
  r.window_imbalance = s.assigned.median();
  r.window_imbalances = s.assigned.per_window();
  r.duration_s = s.duration_s;
  r.wall_s = s.wall_s;
  r.served_per_gateway = s.served_per_gateway;
  return r;
}

struct ReplayReport {
  std::string mode;       // "in-process" or "http"
  std::string trace;      // file name or "synthetic(...)"
  uint64_t requests = 0;  // requests in the replayed trace
  std::string fleet;      // e.g. "8 engines x 1000000 KV tokens (62500 blocks of 16)"
  std::string machine;    // cores and CPU model
  std::string commit;
  std::string command;
  std::string flow_control;  // "on (...)" / "off"; empty when the run did not set it
  HitCount ideal;
  HitCount pooled;
  uint64_t pooled_capacity_blocks = 0;
  std::vector<StrategyResult> results;
  double wall_s = 0;  // the whole replay, every strategy
};

}  // namespace rolter::bench
