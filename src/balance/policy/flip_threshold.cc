#include "balance/policy/flip_threshold.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "balance/candidate.h"
#include "balance/policy/least_inflight.h"
#include "balance/policy/policy_balancer.h"
#include "balance/policy/rendezvous.h"
#include "balance/strategies/round_robin.h"
#include "common/random.h"

namespace rolter {
namespace {

// Any key will do: with every other target idle, the outcome depends on ranks, not on which
// targets hold them.
constexpr std::string_view kSessionKey = "flip-threshold-session";

// One load signal per target, with the view a balancer reads.
struct SyntheticLoads {
  explicit SyntheticLoads(size_t n) : signals(std::make_unique<LoadSignals[]>(n)) {
    for (size_t i = 0; i < n; ++i) pointers.push_back(&signals[i]);
  }
  Loads view() const { return Loads(std::span<const LoadSignals* const>(pointers)); }

  std::unique_ptr<LoadSignals[]> signals;
  std::vector<const LoadSignals*> pointers;
};

}  // namespace

FlipThreshold flip_threshold(size_t targets, PolicyRatio ratio) {
  FlipThreshold result{.targets = targets, .ratio = ratio};
  if (targets < 2) return result;

  std::vector<CandidateSpec> candidates;
  for (size_t i = 0; i < targets; ++i) {
    candidates.push_back({.identity = "target" + std::to_string(i) + "/model@http://10.0.0." +
                                      std::to_string(i) + ":8000",
                          .target = i});
  }
  auto affinity = std::make_unique<RendezvousPlugin>(candidates);
  RendezvousPlugin& ranker = *affinity;
  std::vector<PolicyBalancer::Entry> entries;
  entries.push_back({std::make_unique<LeastInflightPlugin>(), ratio.least_inflight});
  entries.push_back({std::move(affinity), ratio.session_affinity});
  SeededRandom random(1);  // never drawn: totals() does not break ties
  const PolicyBalancer finisher(targets, std::move(entries),
                                std::make_unique<RoundRobinBalancer>(targets), random);

  RouteContext ctx;
  ctx.policy_session_key = kSessionKey;
  const auto all = [](size_t) { return true; };
  SyntheticLoads loads(targets);
  std::vector<double> scores(targets);
  ranker.vote(ctx, loads.view(), all, scores);
  size_t owner = 0;
  for (size_t i = 0; i < targets; ++i) {
    if (scores[i] == 1.0) owner = i;  // rank 0 scores 2^0
  }

  std::vector<double> totals(targets);
  for (int k = 1; k <= kMaxFlipInflight; ++k) {
    loads.signals[owner].in_flight.store(static_cast<uint32_t>(k), std::memory_order_relaxed);
    finisher.totals(ctx, loads.view(), all, totals);
    double best_other = 0;
    for (size_t i = 0; i < targets; ++i) {
      if (i != owner && totals[i] > best_other) best_other = totals[i];
    }
    if (PolicyBalancer::same_total(totals[owner], best_other)) {
      if (!result.tie_at) result.tie_at = k;
    } else if (best_other > totals[owner]) {
      result.flip = k;
      break;
    }
  }
  return result;
}

}  // namespace rolter
