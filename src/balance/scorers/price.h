// PriceScorer: SPEC §6.13 `cheapest`'s signal. Each candidate's catalog price per million tokens,
// input + output (CandidateSpec::price); lower is better, min-max normalised over the eligible
// candidates (scorers/lower_is_better.h): the cheapest scores 1, the dearest 0, all equal all 1.
//
// A candidate without a declared price is unknown: it scores the mean of the known ones. With
// fewer than 2 known prices, every candidate scores 0 and least load decides.
//
// Thread-safety: immutable after construction. No allocation per score().
#pragma once

#include <span>
#include <vector>

#include "balance/candidate.h"
#include "balance/scorer.h"

namespace rolter {

class PriceScorer final : public Scorer {
 public:
  explicit PriceScorer(std::span<const CandidateSpec> candidates);

  std::string_view name() const override { return "cheapest"; }
  void score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
             std::span<double> out) override;

 private:
  // NaN where no price is declared.
  std::vector<double> prices_;
};

}  // namespace rolter
