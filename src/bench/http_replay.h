// The HTTP replay: sends a trace through a running rolter gateway in front of a rolter-sim fleet,
// as streaming chat completions, one route (model name) per strategy. With several gateways the
// requests are dealt round-robin over them in trace order, as an L4 balancer without stickiness
// would spread clients: turns of one conversation land on different nodes.
//
// One io_context on the calling thread runs every request as a coroutine, released at its
// (compressed) trace time, over a pool of keep-alive connections. TTFT is measured at the first
// SSE chunk that carries content, ITL between successive content chunks (rolter-sim sends one
// token per chunk; chunks that arrive in one read count 0 ms apart); the usage chunk
// (stream_options.include_usage) gives prompt_tokens and prompt_tokens_details.cached_tokens. When
// the sim's control URL is known, per-engine in-flight counts are sampled from it for the
// load-imbalance figure, and the engines' /metrics prefix-cache counters give the hit ratio (the
// usage sums are the fallback). With tenants, each request carries its tenant's key and is counted
// per tenant as well.
//
// Thread-safety: a call owns its io_context; it blocks until every request has ended.
#pragma once

#include <span>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "bench/replay_result.h"
#include "bench/trace.h"

namespace rolter::bench {

struct HttpTarget {
  std::vector<std::string> gateway_urls;  // http://host:port of each rolter node (at least one)
  std::string model;                      // the route to call, e.g. "bench-round_robin"
  std::string sim_control_url;            // optional: rolter-sim's control server
  std::vector<std::string> engine_urls;   // optional: engines, for /metrics
};

struct HttpOptions {
  double speedup = 1.0;
  double request_timeout_s = 600;
  size_t max_connections = 1024;  // per gateway; beyond this, requests wait for a free connection
  double sample_ms = 250;         // wall-clock interval of in-flight sampling
  bool progress = true;
  // --tenants: the tenant of each request (indexed like the trace) and each tenant's key, sent
  // as `Authorization: Bearer <key>`; RunSamples::tenants then counts each tenant's requests
  // (served, shed with 429, failed) and TTFTs. Empty: no key is sent.
  std::span<const uint32_t> tenant_of;
  std::vector<std::string> tenant_keys;
};

tl::expected<RunSamples, std::string> replay_http(std::span<const TraceRequest> trace,
                                                  const HttpTarget& target,
                                                  const HttpOptions& options,
                                                  const std::string& label);

// POSTs to `url` (http only) with an empty body and waits for the answer; for control calls.
tl::expected<std::string, std::string> http_post_empty(const std::string& url);

}  // namespace rolter::bench
