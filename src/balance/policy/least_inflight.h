// LeastInflightPlugin: policy mode's least_inflight voter (SPEC §7). Each eligible candidate scores
// 1 / (1 + in-flight), so an idle candidate scores 1 and a busy one tends to 0 without ever
// reaching it; after the finisher's L1 normalisation the plugin hands out its weight in inverse
// proportion to 1 + load.
//
// Thread-safety: stateless; vote() may be called concurrently. No allocation.
#pragma once

#include "balance/policy_plugin.h"

namespace rolter {

class LeastInflightPlugin final : public PolicyPlugin {
 public:
  std::string_view name() const override { return "least_inflight"; }
  // Always votes (multiplier 1); ineligible candidates score 0.
  double vote(const RouteContext& ctx, const Loads& loads, Eligible eligible,
              std::span<double> out) override;
};

}  // namespace rolter
