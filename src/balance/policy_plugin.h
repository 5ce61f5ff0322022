// PolicyPlugin: one voter of a policy-mode route (SPEC §7).
//
// Every enabled plugin scores every eligible candidate; the policy finisher L1-normalises each
// plugin's scores, multiplies by the plugin's weight for this request, sums, and picks the best
// (exact ties uniformly at random; no opinion at all: round-robin). Unlike a Scorer, a plugin may
// abstain for one request and may scale its own weight per request (decision_service's
// confidence).
//
// Thread-safety: vote() is called concurrently from all worker threads.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "balance/load_balancer.h"

namespace rolter {

class PolicyPlugin {
 public:
  virtual ~PolicyPlugin() = default;
  virtual std::string_view name() const = 0;

  // Writes a non-negative score per candidate into out and returns the weight multiplier for this
  // request (1.0 normally), or 0 to abstain. out.size() == loads.size().
  virtual double vote(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                      std::span<double> out) = 0;
};

}  // namespace rolter
