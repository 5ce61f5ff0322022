#include "balance/policy/decision_service.h"

#include "balance/decision_verdict.h"

namespace rolter {

DecisionPlugin::DecisionPlugin(std::span<const CandidateSpec> candidates) {
  std::string_view first;
  for (const CandidateSpec& c : candidates) {
    models_.push_back(c.model);
    if (c.model.empty()) continue;
    if (first.empty()) {
      first = c.model;
    } else if (c.model != first) {
      active_ = true;
    }
  }
}

double DecisionPlugin::vote(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                            std::span<double> out) {
  const DecisionVerdict* verdict = ctx.decision;
  if (!active_ || verdict == nullptr || out.size() != models_.size()) return 0;
  // The request path already drops such verdicts; checked again so a bad one can never scale the
  // weight up or flip its sign.
  if (!(verdict->confidence > 0 && verdict->confidence <= 1)) return 0;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = 0;
    if (models_[i].empty() || !eligible(i)) continue;
    if (auto p = verdict->probability(models_[i]); p && *p > 0) out[i] = *p;
  }
  return verdict->confidence;
}

}  // namespace rolter
