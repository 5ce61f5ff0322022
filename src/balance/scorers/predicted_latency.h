// PredictedLatencyScorer: SPEC §6.11's signal. Each candidate's latency model
// (evidence/latency_predictor.h) predicts this request's latency from the candidate's current
// load and the prompt's size; lower is better, min-max normalised over the eligible candidates
// (scorers/lower_is_better.h).
//
// A candidate with fewer than 8 completed samples, or without evidence, is unknown: it scores the
// mean of the known ones. With fewer than 2 known, every candidate scores 0, so the stack's least
// load scorer decides alone: predicted_latency behaves exactly as least load until the models are
// warm.
//
// Thread-safety: holds only const pointers to evidence owned by the LoadTracker; predict() is
// lock-free, so score() takes no lock and may run on every worker at once. No allocation.
#pragma once

#include <span>
#include <vector>

#include "balance/candidate.h"
#include "balance/scorer.h"

namespace rolter {

class PredictedLatencyScorer final : public Scorer {
 public:
  // REQUIRES: every non-null CandidateSpec::evidence outlives the scorer.
  explicit PredictedLatencyScorer(std::span<const CandidateSpec> candidates);

  std::string_view name() const override { return "predicted_latency"; }
  void score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
             std::span<double> out) override;

 private:
  std::vector<const InstanceEvidence*> evidence_;
};

}  // namespace rolter
