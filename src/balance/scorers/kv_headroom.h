// KvHeadroomScorer: SPEC §18's decode default, "least load on KV usage": 1 − the engine-reported
// KV-cache usage (vllm:kv_cache_usage_perc, scraped with load_source = "engine_metrics"). A decode
// worker's KV cache is what a transferred prompt lands in and what its batch grows in, so the one
// with the most room takes the next request.
//
// Neutral (every candidate 0, so the stack's least load decides) unless every eligible candidate
// has a fresh reading: comparing a measured engine with an unmeasured one would favour whichever
// is unknown.
//
// Thread-safety: stateless; reads each signal once per call. No allocation.
#pragma once

#include "balance/scorer.h"

namespace rolter {

class KvHeadroomScorer final : public Scorer {
 public:
  std::string_view name() const override { return "kv_headroom"; }
  void score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
             std::span<double> out) override;
};

}  // namespace rolter
