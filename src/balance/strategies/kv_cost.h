// KvCostBalancer: SPEC §6.14, kv_cost: send each request where its time to first token is
// estimated lowest.
//
// The model, per candidate i (learned in InstanceEvidence::ttft, balance/evidence/):
//
//   ttft_i ≈ c_i + b_i · queue_i + a_i · uncached_ktokens_i
//
//   uncached_ktokens_i  the request's tokens not among the leading blocks instance i's KV-event
//                       index holds (balance/kv_match.h), in thousands: the prefill it would do.
//                       All of the prompt when the index is unknown or not live.
//   queue_i             the candidate's load as every strategy reads it (balance/loads.h): the
//                       engine-reported running + waiting with load_source = "engine_metrics",
//                       else this gateway's in-flight count; the work queued ahead.
//   a, b, c             per-token prefill cost, per-request queue cost and fixed cost, learned
//                       online by normalised LMS from the TTFT of every successful answer
//                       (balance/evidence/latency_predictor.h: coefficients clamped to
//                       ±600,000 ms, and no estimate below 8 samples).
//
// It is the KV-event counterpart of predicted_latency: predicted_latency sees the whole prompt
// and learns an average cache benefit, kv_cost sees what each instance actually holds, so it
// trades a longer queue for a larger cache hit exactly when the prefill saved is worth more.
//
// Pick: when every eligible candidate has an estimate, the lowest estimate wins (ties at
// random). Until then (some eligible candidate has fewer than 8 samples) the least-loaded
// eligible candidate wins (ties at random), which also warms the cold ones. Honours eligibility:
// an ineligible candidate is never returned and never makes the pick cold. With ctx.explain set it
// records per candidate "ttft_ms" (the estimate) and "uncached_ktokens".
//
// Thread-safety: every method may be called concurrently; the models are read lock-free and the
// indexes under their shared locks. Per-pick scratch lives in thread_local buffers that only
// grow, so after a thread's first pick at a given candidate count and prompt size a pick
// allocates nothing (unless asked to explain).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "balance/candidate.h"
#include "balance/load_balancer.h"
#include "common/random.h"

namespace rolter {

class KvCostBalancer final : public LoadBalancer {
 public:
  // `random` breaks ties and must outlive the balancer.
  KvCostBalancer(std::span<const CandidateSpec> candidates, Random& random);

  std::string_view name() const override { return "kv_cost"; }
  std::optional<size_t> pick(const RouteContext& ctx, const Loads& loads) override;
  std::optional<size_t> pick_eligible(const RouteContext& ctx, const Loads& loads,
                                      Eligible eligible) override;

 private:
  struct Instance {
    const InstanceEvidence* evidence = nullptr;
    const KvResidency* kv = nullptr;
  };
  std::vector<Instance> instances_;
  Random& random_;
};

}  // namespace rolter
