#include "balance/adaptive/adaptive_balancer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string_view>

#include "balance/evidence/instance_evidence.h"
#include "balance/explain.h"
#include "balance/load_guard.h"
#include "balance/pick_scratch.h"
#include "balance/strategy_names.h"

namespace rolter {
namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
// SPEC §6.10: an unknown signal sits in the middle of the range, and a range of equal values
// ranks all of them best.
constexpr double kUnknownScore = 0.5;
constexpr double kAllEqualScore = 1.0;

// Per-thread scratch for one pick. Buffers only grow: a thread pays one allocation the first time
// it sees a larger candidate list and none afterwards.
// Columns of the per-thread pick scratch: the three normalised scores and the blend.
enum Column : size_t { kLatency, kCost, kLoad, kTotal, kColumns };
using Scratch = PickScratch<kColumns>;

Scratch& scratch() {
  thread_local Scratch buffers;
  return buffers;
}

// A candidate's identity is "<label>@<base_url>" (snapshot/snapshot.cc) and a base_url starts
// with its scheme, so the label is what precedes the last "@http".
std::string label_of(std::string_view identity) {
  const size_t at = identity.rfind("@http");
  return std::string(at == std::string_view::npos ? identity : identity.substr(0, at));
}

}  // namespace

void adaptive_score_lower_is_better(std::span<double> values, Eligible eligible) {
  bool any = false;
  double low = 0;
  double high = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!eligible(i) || !std::isfinite(values[i])) continue;
    if (!any || values[i] < low) low = values[i];
    if (!any || values[i] > high) high = values[i];
    any = true;
  }
  const double range = high - low;
  for (size_t i = 0; i < values.size(); ++i) {
    double& v = values[i];
    if (!eligible(i)) {
      v = 0;
    } else if (!std::isfinite(v)) {
      v = kUnknownScore;
    } else {
      v = range > 0 ? (high - v) / range : kAllEqualScore;
    }
  }
}

AdaptiveBalancer::AdaptiveBalancer(std::span<const CandidateSpec> candidates,
                                   std::unique_ptr<LoadBalancer> fallback,
                                   const AdaptivePolicy* policy, AdaptiveRouteState* state,
                                   Random& random, const Clock& clock)
    : count_(candidates.size()),
      fallback_(std::move(fallback)),
      policy_(policy != nullptr ? sanitize_adaptive_policy(*policy) : AdaptivePolicy{}),
      state_(state),
      random_(random),
      clock_(clock) {
  if (state_ == nullptr) {
    own_state_ = std::make_unique<AdaptiveRouteState>(std::string(strategy::kAdaptive));
    state_ = own_state_.get();
  }
  candidates_.reserve(count_);
  for (const CandidateSpec& c : candidates) {
    candidates_.push_back({.evidence = c.evidence,
                           .price = c.price.value_or(kUnknown),
                           .counters = &state_->candidate(c.identity, label_of(c.identity))});
  }
}

std::optional<double> AdaptiveBalancer::latency_of(size_t i) const {
  const InstanceEvidence* evidence = candidates_[i].evidence;
  return evidence != nullptr ? evidence->latency.value() : std::nullopt;
}

size_t AdaptiveBalancer::sampled_count() const {
  size_t sampled = 0;
  for (size_t i = 0; i < count_; ++i) sampled += latency_of(i).has_value() ? 1 : 0;
  return sampled;
}

bool AdaptiveBalancer::engaged() const {
  return policy_.can_engage() && state_->served() >= policy_.min_samples &&
         sampled_count() >= kMinSampledCandidates;
}

std::optional<size_t> AdaptiveBalancer::pick(const RouteContext& ctx, const Loads& loads) {
  return pick_eligible(ctx, loads, [](size_t) { return true; });
}

std::optional<size_t> AdaptiveBalancer::fallback_pick(const RouteContext& ctx, const Loads& loads,
                                                      Eligible eligible) {
  const auto choice = fallback_->pick_eligible(ctx, loads, eligible);
  if (choice && *choice < count_) {
    candidates_[*choice].counters->count(AdaptiveDecision::kFallback, now_ns());
  }
  return choice;
}

std::optional<size_t> AdaptiveBalancer::pick_eligible(const RouteContext& ctx, const Loads& loads,
                                                      Eligible eligible) {
  // Disabled: the stack alone, drawing nothing and computing nothing of its own, so switching the
  // policy off restores the stack's exact behaviour at the next pick.
  if (!policy_.can_engage()) return fallback_pick(ctx, loads, eligible);
  if (count_ == 0 || loads.size() != count_) return std::nullopt;

  Scratch& s = scratch();
  const size_t eligible_count = s.begin(count_, eligible);
  if (eligible_count == 0) return std::nullopt;
  const std::span<const char> mask = s.mask(count_);

  if (engaged()) {
    if (policy_.exploration_ratio > 0 && random_.uniform_double() < policy_.exploration_ratio) {
      if (ctx.explain != nullptr) ctx.explain->reason("adaptive: exploration (uniform at random)");
      return explore(mask, eligible_count);
    }
    // The blend ranks latency: candidates above the load guard are passed over first (SPEC §6.16).
    const size_t passed_over = clear_guarded(kLatencyGuard, s.mutable_mask(count_), loads);
    if (passed_over > 0 && ctx.explain != nullptr) {
      ctx.explain->reason("adaptive: " + std::to_string(passed_over) +
                          " candidate(s) passed over: " + guard_reason(kLatencyGuard));
    }
    return blend(ctx, loads, mask);
  }
  if (auto probed = probe(ctx, mask)) return probed;
  if (ctx.explain != nullptr) {
    ctx.explain->reason("adaptive: not engaged (served " + std::to_string(state_->served()) +
                        " of min_samples " + std::to_string(policy_.min_samples) + ", " +
                        std::to_string(sampled_count()) +
                        " candidates with a latency sample); the pipeline stack decides");
  }
  return fallback_pick(ctx, loads, s.predicate());
}

std::optional<size_t> AdaptiveBalancer::probe(const RouteContext& ctx,
                                              std::span<const char> eligible) {
  // The fewest-probed unsampled candidate first, ties at random (reservoir sampling), so the
  // probes spread over every candidate that needs one.
  size_t best = count_;
  uint64_t best_probes = 0;
  size_t ties = 0;
  for (size_t i = 0; i < count_; ++i) {
    if (!eligible[i] || latency_of(i).has_value()) continue;
    const uint64_t probes = candidates_[i].counters->probes();
    if (probes >= kMaxProbes) continue;
    if (best == count_ || probes < best_probes) {
      best = i;
      best_probes = probes;
      ties = 1;
    } else if (probes == best_probes && random_.uniform(++ties) == 0) {
      best = i;
    }
  }
  if (best == count_) return std::nullopt;
  // Another thread may have taken the last probe since the read above: then no probe this time.
  if (!candidates_[best].counters->claim_probe(kMaxProbes, now_ns())) return std::nullopt;
  if (ctx.explain != nullptr) {
    ctx.explain->reason("adaptive: warm-up probe of candidate " + std::to_string(best) +
                        " (no latency sample yet)");
  }
  return best;
}

size_t AdaptiveBalancer::explore(std::span<const char> eligible, size_t eligible_count) {
  size_t nth = random_.uniform(eligible_count);
  size_t chosen = 0;
  for (size_t i = 0; i < count_; ++i) {
    if (!eligible[i]) continue;
    if (nth == 0) {
      chosen = i;
      break;
    }
    --nth;
  }
  candidates_[chosen].counters->count(AdaptiveDecision::kExploration, now_ns());
  return chosen;
}

void AdaptiveBalancer::score_all(const Loads& loads, std::span<const char> eligible,
                                 std::span<double> latency, std::span<double> cost,
                                 std::span<double> load, std::span<double> total) const {
  for (size_t i = 0; i < count_; ++i) {
    // What a request would meet now, at the candidate's current queue (SPEC §6.16).
    const InstanceEvidence* evidence = candidates_[i].evidence;
    latency[i] = evidence != nullptr
                     ? evidence->latency.at_queue(static_cast<double>(loads[i])).value_or(kUnknown)
                     : kUnknown;
    cost[i] = candidates_[i].price;
    load[i] = static_cast<double>(loads[i]);
  }
  const auto is_eligible = [eligible](size_t i) { return eligible[i] != 0; };
  adaptive_score_lower_is_better(latency, is_eligible);
  adaptive_score_lower_is_better(cost, is_eligible);
  adaptive_score_lower_is_better(load, is_eligible);
  for (size_t i = 0; i < count_; ++i) {
    total[i] = policy_.latency_weight * latency[i] + policy_.cost_weight * cost[i] +
               policy_.load_weight * load[i];
  }
}

size_t AdaptiveBalancer::blend(const RouteContext& ctx, const Loads& loads,
                               std::span<const char> eligible) {
  Scratch& s = scratch();
  const std::span<double> latency = s.column(kLatency, count_);
  const std::span<double> cost = s.column(kCost, count_);
  const std::span<double> load = s.column(kLoad, count_);
  const std::span<double> total = s.column(kTotal, count_);
  score_all(loads, eligible, latency, cost, load, total);

  // Argmax with reservoir sampling over exact ties: each tied candidate wins with 1/ties.
  size_t best = count_;
  size_t ties = 0;
  for (size_t i = 0; i < count_; ++i) {
    if (!eligible[i]) continue;
    if (ctx.explain != nullptr) {
      ctx.explain->score(i, "latency", policy_.latency_weight * latency[i]);
      ctx.explain->score(i, "cost", policy_.cost_weight * cost[i]);
      ctx.explain->score(i, "load", policy_.load_weight * load[i]);
      ctx.explain->total(i, total[i]);
    }
    if (best == count_ || total[i] > total[best]) {
      best = i;
      ties = 1;
    } else if (total[i] == total[best] && random_.uniform(++ties) == 0) {
      best = i;
    }
  }
  if (ctx.explain != nullptr) ctx.explain->reason("adaptive: blend of latency, cost and load");
  candidates_[best].counters->count(AdaptiveDecision::kBlend, now_ns());
  return best;
}

void AdaptiveBalancer::observe(size_t index, const RouteContext& ctx) {
  state_->count_served();
  fallback_->observe(index, ctx);
}

AdaptiveRouteSample AdaptiveBalancer::sample(const Loads& loads, Clock::TimePoint now) const {
  AdaptiveRouteSample out;
  out.route = state_->route();
  out.engaged = engaged();
  out.served = state_->served();
  out.decisions = state_->split();
  out.policy = policy_;
  if (loads.size() != count_) return out;
  const std::vector<char> all(count_, 1);
  std::vector<double> latency(count_), cost(count_), load(count_), total(count_);
  score_all(loads, all, latency, cost, load, total);
  const int64_t now_ns = now.time_since_epoch().count();
  for (size_t i = 0; i < count_; ++i) {
    const AdaptiveCandidateCounters& counters = *candidates_[i].counters;
    AdaptiveCandidateSample c;
    c.identity = counters.identity();
    c.target = counters.label();
    c.score = total[i];
    c.latency_score = latency[i];
    c.cost_score = cost[i];
    c.load_score = load[i];
    c.latency_ms = latency_of(i);
    if (std::isfinite(candidates_[i].price)) c.price = candidates_[i].price;
    c.in_flight = loads[i];
    c.picks_by_decision = counters.split();
    for (uint64_t n : c.picks_by_decision) c.picks += n;
    if (const int64_t last = counters.last_pick_ns(); last != AdaptiveCandidateCounters::kNever) {
      const auto since = Clock::Duration(now_ns - last);
      c.seconds_since_last_pick = std::max(0.0, std::chrono::duration<double>(since).count());
    }
    out.candidates.push_back(std::move(c));
  }
  return out;
}

}  // namespace rolter
