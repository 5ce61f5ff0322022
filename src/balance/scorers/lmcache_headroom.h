// LmcacheHeadroomScorer: SPEC §6.9 `lmcache_aware`'s signal. Each candidate's LMCache headroom,
// 1 - occupancy, read from the occupancy a background poller keeps in the instance's LmcacheSignal
// (balance/lmcache_signal.h); more free cache is better.
//
// Neutral (0) for a candidate whose cache is empty (occupancy <= 0: nothing cached to reuse, so
// nothing to prefer it for), saturated (>= 1), unavailable ("cache_available": false), failed or
// stale, and for one without an lmcache endpoint. When no candidate has a usable value every
// score is 0 and the stack's least load decides. Scores are absolute, not normalised over the
// candidates, so eligibility does not change them.
//
// Thread-safety: immutable after construction; the signals are atomics. No allocation per score().
#pragma once

#include <span>
#include <vector>

#include "balance/candidate.h"
#include "balance/lmcache_signal.h"
#include "balance/scorer.h"

namespace rolter {

class LmcacheHeadroomScorer final : public Scorer {
 public:
  // Keeps each candidate's CandidateSpec::lmcache (null: no signal, always neutral).
  explicit LmcacheHeadroomScorer(std::span<const CandidateSpec> candidates);

  std::string_view name() const override { return "lmcache_headroom"; }
  void score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
             std::span<double> out) override;

  // The score of one signal: 1 - occupancy when usable and 0 < occupancy < 1, else 0.
  static double headroom(const LmcacheSignal* signal);

 private:
  std::vector<const LmcacheSignal*> signals_;
};

}  // namespace rolter
