// ScoredStack: a LoadBalancer made of weighted scorers (SPEC §6.7): drop ineligible candidates
// (and those above the stack's load guard, balance/load_guard.h), sum weight x score over the
// scorers, return the argmax (weighted_argmax.h); exact ties are broken uniformly at random, or
// first by the fewest requests served through the stack (TieBreak::kFewestServed). The stack strategies of balance/stacks.h (pipeline,
// predicted_latency, lora_aware, cheapest, fastest, precise_cache_aware, lmcache_aware) are built
// as stacks. Asked to explain (ctx.explain), it records each scorer's weighted contribution per
// eligible candidate under the scorer's name, and the total.
//
// Even shares (optional; the prefix-aware stacks set it): a conversation stays where its cache is,
// so the engines holding long conversations are given more requests per minute than the others.
// The affinity entries are the scorers that say what each candidate holds (its KV blocks, its
// prefix, its adapter, its session). After the last of them has scored, a request that a
// candidate below (1 + kEvenShareSlack) x its share of the last minute's requests (equal shares,
// or by weight) scores within kEvenShareTolerance of the best, on every affinity entry (it loses
// nothing there that matters), is placed only among the candidates below their share
// (balance/recent_shares.h, clear_above_share()). The scorers after the last affinity entry score
// that narrower set.
//
// Thread-safety: every method may be called concurrently; the stack's only mutable state is its
// served counters (relaxed atomics) and its recent shares (their own mutex), and each scorer
// guards its own. Per-pick scratch (scores and eligibility) lives in thread_local buffers that
// only grow, so after a thread's first pick at a given candidate count a pick makes no allocation
// of its own.
// REQUIRES: a scorer must not call back into a ScoredStack on the same thread (the scratch buffers
// are per thread, not per call).
//
//   std::vector<ScoredStack::Entry> entries;
//   entries.push_back({std::make_unique<LeastLoadScorer>(), 1.0});
//   entries.push_back({std::make_unique<StaticWeightScorer>(candidates), 1.0});
//   ScoredStack stack("pipeline", candidates.size(), std::move(entries), default_random());
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "balance/load_balancer.h"
#include "balance/load_guard.h"
#include "balance/recent_shares.h"
#include "balance/scorer.h"
#include "common/clock.h"
#include "common/random.h"

namespace rolter {

class ScoredStack final : public LoadBalancer {
 public:
  // How far below the best an affinity score may be and still count as losing nothing: 0.02, on
  // scores that are fractions of the request (prefix_affinity's match ratio, kv_residency's share
  // of blocks), is 2% of the prompt. Engines cache in blocks of tens of tokens, and two engines
  // that both hold a shared system prompt differ in a few bytes of the turn that follows it; held
  // to exact equality, one of them always wins and takes every new conversation above its share.
  // Measured on the public traces (docs/benchmarks.md, "Even shares").
  static constexpr double kEvenShareTolerance = 0.02;

  struct Entry {
    std::unique_ptr<Scorer> scorer;
    // Multiplies the scorer's [0, 1] values; finite and >= 0.
    double weight = 1.0;
  };

  // How exact ties are broken. kFewestServed prefers, among the tied, the candidate that has
  // served the fewest requests through this stack (observe()), then picks at random: when a
  // stack's scores are all equal, as they are for new conversations on an idle fleet, a random
  // draw lets the engines' shares drift apart window after window; counting keeps them even.
  enum class TieBreak { kRandom, kFewestServed };

  // Even shares (above): `affinity` marks the affinity entries, bit e for entry e (0 or only bits
  // past the last entry: off); `clock` times the recent shares and must outlive the stack (null:
  // default_clock()); `weights` are the candidates' weights, which set their shares (empty: equal
  // shares; else one finite weight >= 0 per candidate).
  struct EvenShares {
    uint32_t affinity = 0;
    const Clock* clock = nullptr;
    std::vector<double> weights;
  };
  // The bit of EvenShares::affinity that marks entry e.
  static constexpr uint32_t entry_bit(size_t e) { return e < 32 ? uint32_t{1} << e : 0; }

  // `random` breaks ties and must outlive the stack.
  ScoredStack(std::string name, size_t candidate_count, std::vector<Entry> entries, Random& random,
              TieBreak tie_break = TieBreak::kRandom, LoadGuard guard = LoadGuard::kNone,
              std::optional<EvenShares> even_shares = std::nullopt);

  std::string_view name() const override { return name_; }
  // Same as pick_eligible() with every candidate eligible.
  std::optional<size_t> pick(const RouteContext& ctx, const Loads& loads) override;
  // Never returns an ineligible index; nullopt when no candidate is eligible.
  std::optional<size_t> pick_eligible(const RouteContext& ctx, const Loads& loads,
                                      Eligible eligible) override;
  // Forwards to every scorer (and counts the request for kFewestServed and the even shares).
  void observe(size_t index, const RouteContext& ctx) override;

  size_t size() const { return entries_.size(); }

 private:
  // The even shares' reason line: how many were passed over, on which affinity entries.
  void explain_passed_over(Explain& explain, size_t passed_over) const;

  const std::string name_;
  const size_t count_;
  const std::vector<Entry> entries_;
  Random& random_;
  const TieBreak tie_break_;
  // Candidates above its ceiling are passed over before scoring (balance/load_guard.h): set for the
  // stacks that rank by latency (SPEC §6.16), whose signal may lag the queue it creates.
  const LoadGuard guard_;
  std::unique_ptr<std::atomic<uint64_t>[]> served_;  // by candidate; kFewestServed only
  // Even shares: the affinity entries (bit e for entry e, only entries that exist), the last of
  // them, and the counts; null when off.
  const uint32_t share_affinity_ = 0;
  const size_t last_affinity_ = 0;
  const std::vector<double> share_weights_;
  const std::unique_ptr<RecentShares> shares_;
};

}  // namespace rolter
