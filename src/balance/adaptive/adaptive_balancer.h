// AdaptiveBalancer: the `adaptive` strategy (SPEC §6.10): a latency x cost x load blend under the
// deployment-wide policy, in front of the default pipeline stack (SPEC §6.7) as its fallback.
//
// Each pick, in order:
//   - policy disabled, or all its weights 0: the fallback stack picks, and nothing else is
//     computed or drawn, so the pick sequence is exactly the stack's;
//   - engaged (the route served >= min_samples requests and >= 2 candidates have a latency
//     sample): with probability exploration_ratio uniformly at random among the eligible, else
//     the argmax of latency_weight·latency_score + cost_weight·cost_score + load_weight·load_score
//     (adaptive_score_lower_is_better() per signal) over the eligible candidates under the load
//     guard (kLatencyGuard, balance/load_guard.h, SPEC §6.16), ties at random;
//   - disengaged for lack of evidence: a warm-up probe to the eligible candidate with no latency
//     sample whose probes are fewest, while it has had fewer than kMaxProbes (each counted when
//     picked, answered or not); otherwise the fallback stack.
// Raw signals: latency = the instance's latency EWMA evaluated at its current queue (ms; successes
// only; LatencyEwma::at_queue(loads[i])), cost = the catalog price, load = loads[i]. Telemetry
// reports the plain EWMA as the smoothed latency. observe() always reaches the fallback too, so its affinity tables keep
// learning while the blend is engaged, and a switch back finds them current.
//
// What the route did (served count, picks by decision kind) lives in its AdaptiveRouteState,
// owned by the LoadTracker, so it survives reloads; sample() reads it for telemetry.
//
// Thread-safety: every method may be called concurrently. Per-pick scratch lives in thread_local
// buffers that only grow, so a pick allocates nothing in steady state (the fallback stack's own
// scratch likewise).
//
//   auto fallback = make_pipeline(candidates, deps, {}).value();
//   AdaptiveBalancer lb(candidates, std::move(fallback), policy, &state, random, clock);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "balance/adaptive/adaptive_policy.h"
#include "balance/adaptive/adaptive_route_state.h"
#include "balance/candidate.h"
#include "balance/load_balancer.h"
#include "common/clock.h"
#include "common/random.h"
#include "balance/strategy_names.h"

namespace rolter {

// SPEC §6.10: warm-up probes per candidate, in total, answered or not.
inline constexpr uint64_t kMaxProbes = 8;
// SPEC §6.10: engagement needs this many candidates with a latency sample; one has nothing to be
// compared with.
inline constexpr size_t kMinSampledCandidates = 2;

// Min-max scoring for the blend, lower raw is better. On entry values[i] is candidate i's raw
// signal, NaN (any non-finite value) when unknown; on return its score in [0, 1]: 1 for the
// lowest known, 0 for the highest, linear between; all known equal: 1.0; unknown: 0.5; ineligible:
// 0 (and never shapes the range). Pure; no allocation.
void adaptive_score_lower_is_better(std::span<double> values, Eligible eligible);

// One candidate in a telemetry sample (SPEC §6.10). Scores are computed with every candidate
// eligible and no exploration: what the blend would say of the fleet now.
struct AdaptiveCandidateSample {
  std::string identity;
  std::string target;  // the label: "<provider>/<model>"
  double score = 0;    // the weighted sum of the three components
  double latency_score = 0;
  double cost_score = 0;
  double load_score = 0;
  std::optional<double> latency_ms;  // the smoothed latency; nullopt before a sample
  std::optional<double> price;       // the catalog price; nullopt when none is declared
  uint32_t in_flight = 0;
  uint64_t picks = 0;  // every pick through this route, all kinds
  AdaptiveSplit picks_by_decision{};
  std::optional<double> seconds_since_last_pick;  // nullopt before the first
};

struct AdaptiveRouteSample {
  std::string route;
  bool engaged = false;
  uint64_t served = 0;
  AdaptiveSplit decisions{};  // the route's split, over every candidate it ever had
  AdaptivePolicy policy;      // the sanitised policy the route runs
  std::vector<AdaptiveCandidateSample> candidates;
};

class AdaptiveBalancer final : public LoadBalancer {
 public:
  // `fallback` is the default pipeline stack over the same candidates. `policy` null = disabled;
  // it is copied. `state` (may be null: the balancer then keeps one of its own, for tests and
  // for pools without a tracker) must outlive the balancer. `random` and `clock` too.
  AdaptiveBalancer(std::span<const CandidateSpec> candidates,
                   std::unique_ptr<LoadBalancer> fallback, const AdaptivePolicy* policy,
                   AdaptiveRouteState* state, Random& random, const Clock& clock);

  std::string_view name() const override { return strategy::kAdaptive; }
  std::optional<size_t> pick(const RouteContext& ctx, const Loads& loads) override;
  // Never returns an ineligible index; nullopt when no candidate is eligible.
  std::optional<size_t> pick_eligible(const RouteContext& ctx, const Loads& loads,
                                      Eligible eligible) override;
  // Counts the request as served by the route and forwards it to the fallback stack.
  void observe(size_t index, const RouteContext& ctx) override;

  // Whether the blend decides picks now (exploration aside).
  bool engaged() const;
  const AdaptivePolicy& policy() const { return policy_; }
  const AdaptiveRouteState& state() const { return *state_; }

  // A telemetry sample of the route as it stands, at `now`. Allocates; not for the pick path.
  AdaptiveRouteSample sample(const Loads& loads, Clock::TimePoint now) const;

 private:
  struct Candidate {
    const InstanceEvidence* evidence = nullptr;
    double price = 0;  // NaN when unknown
    AdaptiveCandidateCounters* counters = nullptr;
  };

  std::optional<double> latency_of(size_t i) const;
  size_t sampled_count() const;
  int64_t now_ns() const { return clock_.now().time_since_epoch().count(); }
  std::optional<size_t> fallback_pick(const RouteContext& ctx, const Loads& loads,
                                      Eligible eligible);
  // The warm-up probe, or nullopt when no eligible candidate may be probed.
  std::optional<size_t> probe(const RouteContext& ctx, std::span<const char> eligible);
  size_t explore(std::span<const char> eligible, size_t eligible_count);
  size_t blend(const RouteContext& ctx, const Loads& loads, std::span<const char> eligible);
  // Fills latency, cost, load and blended scores over `eligible` into the scratch spans.
  void score_all(const Loads& loads, std::span<const char> eligible, std::span<double> latency,
                 std::span<double> cost, std::span<double> load, std::span<double> total) const;

  const size_t count_;
  std::vector<Candidate> candidates_;
  std::unique_ptr<LoadBalancer> fallback_;
  const AdaptivePolicy policy_;
  std::unique_ptr<AdaptiveRouteState> own_state_;  // when none was given
  AdaptiveRouteState* state_;
  Random& random_;
  const Clock& clock_;
};

}  // namespace rolter
