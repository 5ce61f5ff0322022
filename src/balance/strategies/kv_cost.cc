#include "balance/strategies/kv_cost.h"

#include <algorithm>
#include <array>
#include <limits>
#include <span>
#include <string>
#include <utility>

#include "balance/evidence/instance_evidence.h"
#include "balance/explain.h"
#include "balance/kv_match.h"
#include "balance/strategies/pick_helpers.h"

namespace rolter {
namespace {

struct Scratch {
  std::vector<double> estimate;  // NaN = unknown
  std::vector<double> cost;      // what the pick ranks; NaN = unknown
  std::vector<double> uncached;
  std::vector<uint32_t> loads;
  std::vector<uint32_t> recent;  // requests given in the last minute (RecentShares)
  std::vector<char> eligible;
};

Scratch& scratch(size_t n) {
  thread_local Scratch s;
  s.estimate.resize(n);
  s.cost.resize(n);
  s.uncached.resize(n);
  s.loads.resize(n);
  s.recent.resize(n);
  s.eligible.resize(n);
  return s;
}

}  // namespace

KvCostBalancer::KvCostBalancer(std::span<const CandidateSpec> candidates, Random& random,
                               const Clock& clock)
    : random_(random),
      served_(std::make_unique<std::atomic<uint64_t>[]>(candidates.size())),
      shares_(candidates.size(), clock) {
  instances_.reserve(candidates.size());
  for (const CandidateSpec& c : candidates) instances_.push_back({c.evidence, c.kv});
}

void KvCostBalancer::observe(size_t index, const RouteContext& /*ctx*/) {
  if (index >= instances_.size()) return;
  served_[index].fetch_add(1, std::memory_order_relaxed);
  shares_.add(index);
}

std::optional<size_t> KvCostBalancer::pick(const RouteContext& ctx, const Loads& loads) {
  return pick_eligible(ctx, loads, [](size_t) { return true; });
}

std::optional<size_t> KvCostBalancer::pick_eligible(const RouteContext& ctx, const Loads& loads,
                                                    Eligible eligible) {
  const size_t n = std::min(instances_.size(), loads.size());
  Scratch& s = scratch(n);
  RequestBlockKeys keys(ctx);
  // First pass: eligibility, loads, uncached tokens, and whether every eligible model is warm.
  bool warm = true;
  size_t eligible_count = 0;
  std::array<double, TtftModel::kFeatures> pooled{};
  for (size_t i = 0; i < n; ++i) {
    s.eligible[i] = eligible(i) ? 1 : 0;
    s.loads[i] = loads[i];
    s.estimate[i] = std::numeric_limits<double>::quiet_NaN();
    s.cost[i] = s.estimate[i];
    if (!s.eligible[i]) continue;
    ++eligible_count;
    const Instance& inst = instances_[i];
    s.uncached[i] = uncached_ktokens(ctx, inst.kv, keys);
    if (inst.evidence == nullptr || inst.evidence->ttft.samples() < TtftModel::kMinSamples) {
      warm = false;
      continue;
    }
    const auto w = inst.evidence->ttft.coefficients();
    for (size_t k = 0; k < pooled.size(); ++k) pooled[k] += w[k];
  }
  if (eligible_count == 0) return std::nullopt;
  shares_.read(std::span<uint32_t>(s.recent.data(), n));
  double least_uncached = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < n; ++i) {
    if (s.eligible[i]) least_uncached = std::min(least_uncached, s.uncached[i]);
  }
  const size_t over_share =
      clear_above_share(std::span<char>(s.eligible.data(), n), s.recent, /*weights=*/{},
                        [&](size_t i) { return s.uncached[i] <= least_uncached; });
  if (warm) {
    for (double& w : pooled) w /= static_cast<double>(eligible_count);
    for (size_t i = 0; i < n; ++i) {
      if (s.eligible[i]) {
        s.estimate[i] =
            TtftModel::estimate(pooled, s.loads[i], loads.prefill_ktokens(i), s.uncached[i]);
        s.cost[i] = s.estimate[i] + (KvCostBalancer::kUncachedWeight - 1) *
                                        std::max(0.0, pooled[TtftModel::kUncached]) * s.uncached[i];
      }
    }
  }

  double lowest = std::numeric_limits<double>::infinity();
  if (warm) {
    for (size_t i = 0; i < n; ++i) {
      if (s.eligible[i]) lowest = std::min(lowest, s.cost[i]);
    }
  }
  // Among the lowest estimates (every eligible candidate, while cold): the least loaded, then the
  // one that served the fewest, then at random.
  const size_t chosen = smallest_among(
      n, [&](size_t i) { return s.eligible[i] && (!warm || s.cost[i] == lowest); },
      [&](size_t i) { return std::pair(s.loads[i], served_[i].load(std::memory_order_relaxed)); },
      random_);

  if (ctx.explain != nullptr) {
    Explain& explain = *ctx.explain;
    for (size_t i = 0; i < n; ++i) {
      explain.eligible(i, s.eligible[i] != 0);
      explain.load(i, s.loads[i]);
      if (!s.eligible[i]) continue;
      explain.score(i, "uncached_ktokens", s.uncached[i]);
      if (s.estimate[i] == s.estimate[i]) {
        explain.score(i, "ttft_ms", s.estimate[i]);
        explain.score(i, "cost_ms", s.cost[i]);
      }
    }
    if (over_share > 0) {
      explain.reason(std::to_string(over_share) +
                     " candidate(s) above their share of the last minute's requests passed over: "
                     "one below holds as much of the prompt");
    }
    explain.reason(warm
                       ? "lowest cost wins: estimated time to first token, uncached tokens weighted"
                       : "a candidate has fewer than 8 samples: least loaded wins");
  }
  return chosen;
}

}  // namespace rolter
