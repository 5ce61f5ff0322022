// DecisionPlugin: policy mode's decision_service voter (SPEC §7). Scores what the decision service
// already answered for this request (ctx.decision, fetched on the request path before the pick):
// every instance of a model scores p(model), 0 when the verdict does not name its model, and the
// plugin's weight for the request is scaled by the verdict's confidence.
//
// Inactive (never votes) when the candidates serve fewer than 2 distinct models: choosing a model
// is then no choice. Passthrough members (empty model) serve whatever was requested and count for
// no model.
//
// Thread-safety: immutable after construction; vote() may be called concurrently. No allocation.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "balance/candidate.h"
#include "balance/policy_plugin.h"

namespace rolter {

class DecisionPlugin final : public PolicyPlugin {
 public:
  explicit DecisionPlugin(std::span<const CandidateSpec> candidates);

  std::string_view name() const override { return "decision_service"; }
  // Abstains (returns 0) when inactive, when ctx.decision is null, or when its confidence is
  // outside (0, 1]; else returns the confidence.
  double vote(const RouteContext& ctx, const Loads& loads, Eligible eligible,
              std::span<double> out) override;

  bool active() const { return active_; }

 private:
  std::vector<std::string> models_;  // by candidate
  bool active_ = false;
};

}  // namespace rolter
