// LeastLoadScorer: SPEC §6.7 "least load": 1 - load/max_load, with max_load over the eligible
// candidates; every candidate scores 1 when all eligible ones are idle.
//
// Thread-safety: stateless; reads each load once per call. No allocation.
#pragma once

#include "balance/scorer.h"

namespace rolter {

class LeastLoadScorer final : public Scorer {
 public:
  std::string_view name() const override { return "least_load"; }
  void score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
             std::span<double> out) override;
};

}  // namespace rolter
