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
#include "balance/evidence/ttft_model.h"

namespace rolter {

struct InstanceEvidence {
  LatencyEwma latency;
  LatencyPredictor predictor;
  // kv_cost's model of time to first token (balance/evidence/ttft_model.h).
  TtftModel ttft;

  // One successful request, as the gateway saw it when it sent it.
  struct Sample {
    double queue_depth = 0;             // the load before its own increment
    double queued_prefill_ktokens = 0;  // prefill queued there before it (LoadSignals)
    double prompt_ktokens = 0;          // its prompt
    double uncached_ktokens = 0;        // the part the instance's KV index did not hold
    double latency_ms = 0;              // its time to first token
  };
  void record_success(const Sample& s) {
    latency.record(s.latency_ms, s.queue_depth);
    predictor.record(s.queue_depth, s.prompt_ktokens, s.latency_ms, s.queued_prefill_ktokens);
    ttft.record(s.queue_depth, s.queued_prefill_ktokens, s.uncached_ktokens, s.latency_ms);
  }
  // The same, when nothing is known of the instance's cache or queued prefill: the whole prompt
  // is uncached, and nothing is counted as queued ahead of it but requests.
  void record_success(double queue_depth, double prompt_ktokens, double latency_ms) {
    record_success({.queue_depth = queue_depth,
                    .prompt_ktokens = prompt_ktokens,
                    .uncached_ktokens = prompt_ktokens,
                    .latency_ms = latency_ms});
  }
};

}  // namespace rolter
