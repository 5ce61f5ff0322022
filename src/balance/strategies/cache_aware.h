// CacheAwareBalancer: SPEC §6.6, approximate prefix affinity with a load guard.
//
// observe() records in a PrefixTree (balance/prefix/prefix_tree.h) which candidate served which
// conversation text. A pick sends the request to the eligible candidate that served the longest
// prefix of its prompt when that prefix is at least kMinMatchRatio of the prompt, unless that warm
// candidate is overloaded: load > mean + kOverloadSlack and load > kOverloadFactor x mean, the mean
// load over the eligible candidates (balance/load_guard.h, overloaded_against_mean(): SPEC §6.6
// says the least load, which a stale or momentary 0 makes spread warm conversations). Otherwise,
// and for an empty prompt, the least-loaded eligible candidate wins.
//
// Even shares: a conversation stays where its prefix is, so the engines holding long conversations
// are given more requests per minute than the others. Before that choice, a request that loses
// nothing by it is placed only among the candidates below (1 + kEvenShareSlack) x the mean share
// of the last minute's requests (balance/recent_shares.h). A warm request loses nothing when a
// candidate below its share matched as much of the prompt as the best; a cold one (no match of
// kMinMatchRatio) when a candidate below its share is no busier than the mean load: on the
// synthetic trace at 4x, sending cold requests below their share whatever their load cost 10
// points of the bound (docs/benchmarks.md). The load guard's mean stays that of every eligible
// candidate.
//
// SPEC §6.6 leaves ties open; they are broken so that load stays even: among equally long
// matches the less loaded warm candidate keeps the conversation, and among equally loaded
// candidates the one that has served the fewest requests takes it; what is still tied goes at
// random.
//
// Honours eligibility: an ineligible candidate is never returned, its match never wins and its
// load does not set min_load; nullopt when none is eligible. With ctx.explain set, it records each
// candidate's eligibility, load and "prefix" score (its match ratio) and why the pick went the way
// it did; without, it computes nothing for it.
//
// Thread-safety: every method may be called concurrently. A pick holds the tree's shared lock for
// one match, so picks never block each other; observe() holds its exclusive lock for one insert.
// Per-pick scratch lives in thread_local buffers that only grow, so after a thread's first pick at
// a given candidate count a pick allocates nothing (unless it is asked to explain).
//
//   CacheAwareBalancer lb(candidates.size(), default_random());
//   auto idx = lb.pick_eligible(ctx, loads, eligible);
//   lb.observe(*idx, ctx);
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "balance/load_balancer.h"
#include "balance/load_guard.h"
#include "balance/prefix/prefix_sharing.h"
#include "balance/prefix/prefix_tree.h"
#include "balance/recent_shares.h"
#include "common/clock.h"
#include "common/random.h"
#include "balance/strategy_names.h"

namespace rolter {

class CacheAwareBalancer final : public LoadBalancer {
 public:
  // 0.5: with at least half the prompt likely in the warm replica's KV cache, the prefill it saves
  // outweighs a modest queue; below that a cold but idle replica is the better bet.
  static constexpr double kMinMatchRatio = 0.5;
  // The load guard's constants (balance/load_guard.h): +2 and 1.5x, over the mean load.
  static constexpr uint32_t kOverloadSlack = rolter::kOverloadSlack;
  static constexpr double kOverloadFactor = rolter::kOverloadFactor;

  // `random` breaks ties and `clock` times the recent shares; both must outlive the balancer.
  CacheAwareBalancer(size_t candidate_count, Random& random, PrefixTree::Options options = {},
                     const Clock& clock = default_clock());

  std::string_view name() const override { return strategy::kCacheAware; }
  // Same as pick_eligible() with every candidate eligible.
  std::optional<size_t> pick(const RouteContext& ctx, const Loads& loads) override;
  std::optional<size_t> pick_eligible(const RouteContext& ctx, const Loads& loads,
                                      Eligible eligible) override;
  // Inserts ctx.prompt into the tree under `index`, and publishes it when the tree is shared; an
  // index out of range is ignored.
  void observe(size_t index, const RouteContext& ctx) override;

  // Shares the tree with the other gateway nodes through `hub` (null = not shared) under
  // `tree_name`. Before the balancer is published.
  void share(PrefixSharing* hub, std::string tree_name, std::span<const CandidateSpec> candidates);

  const PrefixTree& tree() const { return tree_; }

 private:
  const size_t count_;
  Random& random_;
  PrefixTree tree_;
  // Requests each candidate served through this balancer (observe()). Breaking load ties by it
  // spreads new conversations evenly even when in-flight counts are all equal, as they mostly
  // are at low load: then the random tie-break of SPEC §6.6's "least loaded" would let the
  // engines' shares drift apart, window after window.
  std::unique_ptr<std::atomic<uint64_t>[]> served_;
  // Each candidate's requests over the last minute, for the even shares.
  RecentShares shares_;
  // After tree_: detached before the tree goes.
  std::unique_ptr<PrefixShareLink> link_;
};

}  // namespace rolter
