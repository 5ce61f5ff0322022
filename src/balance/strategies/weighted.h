// WeightedBalancer: SPEC §6.4. Smooth weighted round-robin (the nginx algorithm) over the
// per-instance weights of CandidateSpec: with weights 5:1:1 the order is a a b a c a a, so heavy
// candidates are interleaved with light ones instead of served in bursts.
//
// How it stays lock-free: nginx's algorithm is deterministic and, over integer weights, periodic
// with period = the sum of the weights. At construction the double weights are expressed as small
// integers (the smallest common denominator that represents every ratio to the largest weight
// exactly) and one full period of the nginx order is precomputed; a pick is then one relaxed
// atomic increment indexing that table. Only pathological weights (no exact ratio with a
// denominator <= 1000, or a period above 65536 slots) fall back to running nginx's update live
// under a mutex, which stays exact for any weights at the cost of an O(n) critical section.
//
// Eligibility: when the next candidate in the sequence is ineligible, the pick continues along the
// sequence to the next eligible one (and the shared position moves past it, so the others keep
// their relative shares). On the mutex fallback, ineligible candidates simply sit out the nginx
// update for that pick, as nginx does with peers that are down.
//
// Weight 0 means "never, unless nothing else is eligible": weight-0 candidates are absent from the
// sequence and are picked round-robin among themselves only when no positive-weight candidate is
// eligible (or when every weight is 0).
//
// Thread-safety: every method may be called concurrently. No allocation per pick.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "balance/candidate.h"
#include "balance/load_balancer.h"
#include "common/mutex.h"
#include "balance/strategy_names.h"

namespace rolter {

class WeightedBalancer final : public LoadBalancer {
 public:
  // REQUIRES: every weight is finite and >= 0 (make_balancer checks).
  explicit WeightedBalancer(std::span<const CandidateSpec> candidates);

  std::string_view name() const override { return strategy::kWeighted; }
  std::optional<size_t> pick(const RouteContext& ctx, const Loads& loads) override;
  std::optional<size_t> pick_eligible(const RouteContext& ctx, const Loads& loads,
                                      Eligible eligible) override;

  // Length of the precomputed nginx period; 0 when the balancer runs the mutex fallback or has no
  // positive weight. For tests and diagnostics.
  size_t period() const { return sequence_.size(); }

 private:
  std::optional<size_t> pick_from_sequence(Eligible eligible);
  std::optional<size_t> pick_locked(Eligible eligible) EXCLUDES(mutex_);
  std::optional<size_t> pick_zero_weight(Eligible eligible);
  bool any_positive_eligible(Eligible eligible) const;

  const size_t count_;
  // Per-candidate weights as configured; the fallback runs on them directly.
  std::vector<double> weights_;
  bool has_positive_ = false;
  // One period of the nginx order, as candidate indexes. Empty on the fallback.
  std::vector<uint16_t> sequence_;
  std::atomic<uint64_t> next_{0};
  // Indexes of weight-0 candidates, served round-robin as a last resort.
  std::vector<uint32_t> zero_weight_;
  std::atomic<uint64_t> next_zero_{0};
  // Fallback state: nginx's current weights.
  Mutex mutex_;
  std::vector<double> current_ GUARDED_BY(mutex_);
};

}  // namespace rolter
