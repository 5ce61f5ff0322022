// InstanceEvidence: what the gateway has learned about one instance from the requests it served
// (SPEC §5): the latency EWMA behind `fastest`, the latency model behind `predicted_latency`, and
// the time-to-first-token model behind `kv_cost` (SPEC §6.14).
//
// Owned by the LoadTracker (fleet/load_tracker.h), keyed by stable instance identity, so it
// outlives snapshots; balancers hold a const pointer to it through CandidateSpec::evidence. The
// forwarder records every successful request once, after its response.
// Thread-safety: as its members (every method may be called from any thread).
#pragma once

#include "balance/evidence/latency_ewma.h"
#include "balance/evidence/latency_predictor.h"

namespace rolter {

struct InstanceEvidence {
  LatencyEwma latency;
  LatencyPredictor predictor;
  // kv_cost's model: ttft_ms ≈ c + b · queue_depth + a · uncached_ktokens, where uncached_ktokens
  // is the part of the prompt the instance's KV index did not hold when the request was sent. The
  // same learner as `predictor`, fed the uncached part instead of the whole prompt.
  LatencyPredictor ttft;

  // A successful request: queue depth before its own increment, prompt size and its uncached part
  // in thousands of tokens, and its latency (time to first token) in ms.
  void record_success(double queue_depth, double prompt_ktokens, double uncached_ktokens,
                      double latency_ms) {
    latency.record(latency_ms);
    predictor.record(queue_depth, prompt_ktokens, latency_ms);
    ttft.record(queue_depth, uncached_ktokens, latency_ms);
  }
  // The same, when nothing is known of the instance's cache: the whole prompt is uncached.
  void record_success(double queue_depth, double prompt_ktokens, double latency_ms) {
    record_success(queue_depth, prompt_ktokens, prompt_ktokens, latency_ms);
  }
};

}  // namespace rolter
