// StaticWeightScorer: SPEC §6.7 "static weight": the candidate's configured weight divided by the
// largest weight among the eligible candidates (all 0 when every eligible weight is 0).
//
// Thread-safety: immutable after construction. No allocation per score().
#pragma once

#include <span>
#include <vector>

#include "balance/candidate.h"
#include "balance/scorer.h"

namespace rolter {

class StaticWeightScorer final : public Scorer {
 public:
  // REQUIRES: every weight is finite and >= 0.
  explicit StaticWeightScorer(std::span<const CandidateSpec> candidates);

  std::string_view name() const override { return "static_weight"; }
  void score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
             std::span<double> out) override;

 private:
  std::vector<double> weights_;
};

}  // namespace rolter
