// KvResidencyScorer: SPEC §6.8's KV score, the heart of precise_cache_aware: for each candidate,
// the leading fraction of the request's blocks its KV-event index holds (balance/kv_match.h).
//
// Neutral (0 for every candidate) when the request has no token ids; 0 for a candidate without a
// KV-event stream or whose stream is not live (stale, disconnected, or a gap not yet repaired),
// since its index may be missing events.
//
// Thread-safety: score() may run on every worker at once; it takes each index's shared lock for
// one lookup walk. It allocates nothing once the thread's key buffer has grown to the prompt.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "balance/candidate.h"
#include "balance/scorer.h"

namespace rolter {

class KvResidencyScorer final : public Scorer {
 public:
  explicit KvResidencyScorer(std::span<const CandidateSpec> candidates);

  std::string_view name() const override { return "kv_residency"; }
  void score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
             std::span<double> out) override;

 private:
  std::vector<const KvResidency*> kv_;  // by candidate; null = no stream
};

}  // namespace rolter
