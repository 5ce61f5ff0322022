// InstanceEvidence: what the gateway has learned about one instance from the requests it served
// (SPEC §5): the latency EWMA behind `fastest` and the latency model behind `predicted_latency`.
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

  // A successful request: queue depth before its own increment, prompt size in thousands of
  // tokens, and its latency (time to first token) in ms.
  void record_success(double queue_depth, double prompt_ktokens, double latency_ms) {
    latency.record(latency_ms);
    predictor.record(queue_depth, prompt_ktokens, latency_ms);
  }
};

}  // namespace rolter
