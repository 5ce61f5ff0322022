#include "balance/strategies/kv_cost.h"

#include <algorithm>
#include <limits>
#include <string>

#include "balance/evidence/instance_evidence.h"
#include "balance/explain.h"
#include "balance/kv_match.h"

namespace rolter {
namespace {

struct Scratch {
  std::vector<double> estimate;  // NaN = unknown
  std::vector<double> uncached;
  std::vector<uint32_t> loads;
  std::vector<char> eligible;
};

Scratch& scratch(size_t n) {
  thread_local Scratch s;
  s.estimate.resize(n);
  s.uncached.resize(n);
  s.loads.resize(n);
  s.eligible.resize(n);
  return s;
}

// The eligible index with the smallest key(i); equal keys share the pick uniformly at random.
// n when none is eligible.
template <typename Key>
size_t smallest(const Scratch& s, size_t n, Key key, Random& random) {
  size_t chosen = n;
  size_t ties = 0;
  double best = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!s.eligible[i]) continue;
    const double k = key(i);
    if (chosen == n || k < best) {
      chosen = i;
      best = k;
      ties = 1;
    } else if (k == best && random.uniform(++ties) == 0) {
      chosen = i;
    }
  }
  return chosen;
}

}  // namespace

KvCostBalancer::KvCostBalancer(std::span<const CandidateSpec> candidates, Random& random)
    : random_(random) {
  instances_.reserve(candidates.size());
  for (const CandidateSpec& c : candidates) instances_.push_back({c.evidence, c.kv});
}

std::optional<size_t> KvCostBalancer::pick(const RouteContext& ctx, const Loads& loads) {
  return pick_eligible(ctx, loads, [](size_t) { return true; });
}

std::optional<size_t> KvCostBalancer::pick_eligible(const RouteContext& ctx, const Loads& loads,
                                                    Eligible eligible) {
  const size_t n = std::min(instances_.size(), loads.size());
  Scratch& s = scratch(n);
  RequestBlockKeys keys(ctx);
  bool warm = true;
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    s.eligible[i] = eligible(i) ? 1 : 0;
    s.loads[i] = loads[i];
    s.estimate[i] = std::numeric_limits<double>::quiet_NaN();
    if (!s.eligible[i]) continue;
    any = true;
    const Instance& inst = instances_[i];
    s.uncached[i] = uncached_ktokens(ctx, inst.kv, keys);
    std::optional<double> estimate;
    if (inst.evidence != nullptr) estimate = inst.evidence->ttft.predict(s.loads[i], s.uncached[i]);
    if (estimate) {
      s.estimate[i] = *estimate;
    } else {
      warm = false;
    }
  }
  if (!any) return std::nullopt;

  const size_t chosen =
      warm ? smallest(s, n, [&](size_t i) { return s.estimate[i]; }, random_)
           : smallest(s, n, [&](size_t i) { return static_cast<double>(s.loads[i]); }, random_);

  if (ctx.explain != nullptr) {
    Explain& explain = *ctx.explain;
    for (size_t i = 0; i < n; ++i) {
      explain.eligible(i, s.eligible[i] != 0);
      explain.load(i, s.loads[i]);
      if (!s.eligible[i]) continue;
      explain.score(i, "uncached_ktokens", s.uncached[i]);
      if (s.estimate[i] == s.estimate[i]) explain.score(i, "ttft_ms", s.estimate[i]);
    }
    explain.reason(warm ? "lowest estimated time to first token wins"
                        : "a candidate has fewer than 8 samples: least loaded wins");
  }
  return chosen;
}

}  // namespace rolter
