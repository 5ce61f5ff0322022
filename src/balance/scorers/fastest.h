// LatencyScorer: SPEC §6.13 `fastest`'s signal. Each candidate's latency EWMA evaluated at its
// current queue (evidence/latency_ewma.h: the average per place in the queue x (load + 1), α 0.2,
// successful requests only, SPEC §6.16); lower is better, min-max normalised over the eligible
// candidates (scorers/lower_is_better.h). The fastest stack also passes over candidates above its
// load guard (kLatencyGuard, balance/load_guard.h).
//
// A candidate without a sample yet, or without evidence, is unknown: it scores the mean of the
// known ones. With fewer than 2 known, every candidate scores 0 and least load decides.
//
// Thread-safety: holds only const pointers to evidence owned by the LoadTracker; reading an EWMA is
// one relaxed atomic load, so score() takes no lock. No allocation.
#pragma once

#include <span>
#include <vector>

#include "balance/candidate.h"
#include "balance/scorer.h"

namespace rolter {

class LatencyScorer final : public Scorer {
 public:
  // REQUIRES: every non-null CandidateSpec::evidence outlives the scorer.
  explicit LatencyScorer(std::span<const CandidateSpec> candidates);

  std::string_view name() const override { return "fastest"; }
  void score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
             std::span<double> out) override;

 private:
  std::vector<const InstanceEvidence*> evidence_;
};

}  // namespace rolter
