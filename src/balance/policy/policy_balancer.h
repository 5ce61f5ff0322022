// PolicyBalancer: policy mode's finisher (SPEC §7), the LoadBalancer named "policy".
//
// For one pick every plugin votes on the eligible candidates; a plugin that abstains (multiplier
// 0) or whose eligible scores sum to 0 contributes nothing; otherwise each eligible candidate c
// gains  weight x multiplier x s(c) / sum over eligible c' of s(c')  (L1 normalisation, so a
// plugin's weight is what it hands out in total, whatever the scale of its scores). The highest
// total wins; ties (equal up to rounding, see same_total) are broken uniformly at random. When no
// plugin has an opinion, the pick goes to the `no_opinion` balancer given at construction:
// round-robin over the eligible candidates, or smooth weighted round-robin in target weight mode
// (policy_factory.h).
//
// Asked to explain (ctx.explain), it records each plugin's weighted contribution per eligible
// candidate under the plugin's name, the total, and a reason when no plugin had an opinion.
//
// Thread-safety: every method may be called concurrently; the finisher itself is immutable, each
// plugin guards its own state, and the no-opinion balancer is lock-free. Per-pick scratch (scores,
// totals, eligibility) lives in thread_local buffers that only grow, so after a thread's first pick
// at a given candidate count a pick makes no allocation of its own.
// REQUIRES: a plugin must not call back into a PolicyBalancer on the same thread.
//
//   std::vector<PolicyBalancer::Entry> entries;
//   entries.push_back({std::make_unique<LeastInflightPlugin>(), 1.0});
//   entries.push_back({std::make_unique<RendezvousPlugin>(candidates), 1.0});
//   PolicyBalancer lb(candidates.size(), std::move(entries),
//                     std::make_unique<RoundRobinBalancer>(candidates.size()), random);
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "balance/load_balancer.h"
#include "balance/policy_plugin.h"
#include "balance/strategy_names.h"
#include "common/random.h"

namespace rolter {

class PolicyBalancer final : public LoadBalancer {
 public:
  struct Entry {
    std::unique_ptr<PolicyPlugin> plugin;
    // The plugin's configured weight; finite and > 0.
    double weight = 1.0;
  };

  // `no_opinion` picks when no plugin votes (it must be built over the same candidate count);
  // `random` breaks ties and must outlive the balancer.
  PolicyBalancer(size_t candidate_count, std::vector<Entry> entries,
                 std::unique_ptr<LoadBalancer> no_opinion, Random& random);

  std::string_view name() const override { return strategy::kPolicy; }
  // Same as pick_eligible() with every candidate eligible.
  std::optional<size_t> pick(const RouteContext& ctx, const Loads& loads) override;
  // Never returns an ineligible index; nullopt when no candidate is eligible.
  std::optional<size_t> pick_eligible(const RouteContext& ctx, const Loads& loads,
                                      Eligible eligible) override;

  // The finisher's arithmetic, as pick_eligible() runs it: writes each candidate's total into
  // `totals` (0 for ineligible candidates) and returns how many plugins contributed (0 = no
  // opinion). Records into ctx.explain when set. Exposed so tools (flip_threshold.h) read the
  // very numbers a pick compares.
  // REQUIRES: totals.size() == loads.size() == the candidate count.
  size_t totals(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                std::span<double> totals) const;

  // Whether two totals count as a tie. Totals that are equal in exact arithmetic can differ in
  // their last bits when their terms were summed in another order, and rounding must not decide a
  // pick that SPEC §7 leaves to a coin flip: a relative difference below 1e-12 is a tie (scores
  // carry about 1e-16 of rounding each, so a real difference is never that small unless a weight
  // is absurdly large against another).
  static bool same_total(double a, double b);

  size_t size() const { return entries_.size(); }

 private:
  const size_t count_;
  const std::vector<Entry> entries_;
  const std::unique_ptr<LoadBalancer> no_opinion_;
  Random& random_;
};

}  // namespace rolter
