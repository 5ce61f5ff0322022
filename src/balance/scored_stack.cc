#include "balance/scored_stack.h"

#include <algorithm>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "balance/explain.h"
#include "balance/load_guard.h"
#include "balance/pick_scratch.h"
#include "balance/weighted_argmax.h"

namespace rolter {
namespace {

// Columns of the per-thread pick scratch: each scorer's values, the weighted totals, and (with even
// shares) 1 where a candidate scores as high as the best on every affinity entry so far, else 0.
enum Column : size_t { kScores, kTotals, kHoldsBest, kColumns };
using Scratch = PickScratch<kColumns>;

Scratch& scratch() {
  thread_local Scratch buffers;
  return buffers;
}

// Scorers promise [0, 1]; a misbehaving one (NaN, out of range) must not hijack or void the argmax.
double clamp_score(double value) {
  if (!(value >= 0)) return 0;  // also catches NaN
  return value > 1 ? 1 : value;
}

// The entries of `affinity` (bit e for entry e) that exist among `entries`.
uint32_t existing_entries(uint32_t affinity, size_t entries) {
  return entries >= 32 ? affinity : affinity & ((uint32_t{1} << entries) - 1);
}

// The highest entry of a non-zero mask.
size_t last_entry(uint32_t mask) {
  size_t last = 0;
  for (size_t e = 0; e < 32; ++e) {
    if (mask & (uint32_t{1} << e)) last = e;
  }
  return last;
}

}  // namespace

ScoredStack::ScoredStack(std::string name, size_t candidate_count, std::vector<Entry> entries,
                         Random& random, TieBreak tie_break, LoadGuard guard,
                         std::optional<EvenShares> even_shares)
    : name_(std::move(name)),
      count_(candidate_count),
      entries_(std::move(entries)),
      random_(random),
      tie_break_(tie_break),
      guard_(guard),
      share_affinity_(even_shares ? existing_entries(even_shares->affinity, entries_.size()) : 0),
      last_affinity_(last_entry(share_affinity_)),
      share_weights_(even_shares && even_shares->weights.size() == candidate_count
                         ? std::move(even_shares->weights)
                         : std::vector<double>{}),
      shares_(share_affinity_ != 0
                  ? std::make_unique<RecentShares>(candidate_count,
                                                   even_shares->clock != nullptr
                                                       ? *even_shares->clock
                                                       : default_clock())
                  : nullptr) {
  if (tie_break_ == TieBreak::kFewestServed) {
    served_ = std::make_unique<std::atomic<uint64_t>[]>(count_);
  }
}

std::optional<size_t> ScoredStack::pick(const RouteContext& ctx, const Loads& loads) {
  return pick_eligible(ctx, loads, [](size_t) { return true; });
}

std::optional<size_t> ScoredStack::pick_eligible(const RouteContext& ctx, const Loads& loads,
                                                 Eligible eligible) {
  // A mismatched Loads belongs to another candidate list: any index would be meaningless.
  if (count_ == 0 || loads.size() != count_) return std::nullopt;
  Scratch& s = scratch();
  if (s.begin(count_, eligible) == 0) return std::nullopt;
  if (guard_ != LoadGuard::kNone) {
    const size_t passed_over = clear_guarded(guard_, s.mutable_mask(count_), loads);
    if (passed_over > 0 && ctx.explain != nullptr) {
      ctx.explain->reason(std::to_string(passed_over) + " candidate(s) passed over: " +
                          guard_reason(guard_));
    }
  }
  const auto is_eligible = s.predicate();
  const std::span<double> scores = s.column(kScores, count_);
  const std::span<double> totals = s.column(kTotals, count_);
  std::fill(totals.begin(), totals.end(), 0.0);

  const std::span<double> holds_best = s.column(kHoldsBest, count_);
  if (shares_) std::fill(holds_best.begin(), holds_best.end(), 1.0);

  for (size_t e = 0; e < entries_.size(); ++e) {
    const Entry& entry = entries_[e];
    entry.scorer->score(ctx, loads, is_eligible, scores);
    for (size_t i = 0; i < count_; ++i) {
      if (!s.eligible(i)) continue;
      const double contribution = entry.weight * clamp_score(scores[i]);
      totals[i] += contribution;
      if (ctx.explain != nullptr) ctx.explain->score(i, entry.scorer->name(), contribution);
    }
    const bool affinity_here = shares_ && ((share_affinity_ >> e) & 1) != 0;
    if (affinity_here) {
      double best = 0;
      for (size_t i = 0; i < count_; ++i) {
        if (s.eligible(i)) best = std::max(best, clamp_score(scores[i]));
      }
      for (size_t i = 0; i < count_; ++i) {
        if (clamp_score(scores[i]) < best - kEvenShareTolerance) holds_best[i] = 0;
      }
    }
    if (affinity_here && e == last_affinity_) {
      thread_local std::vector<uint32_t> recent;
      if (recent.size() < count_) recent.resize(count_);
      const std::span<uint32_t> counts(recent.data(), count_);
      shares_->read(counts);
      const size_t passed_over = clear_above_share(s.mutable_mask(count_), counts, share_weights_,
                                                   [&](size_t i) { return holds_best[i] > 0; });
      if (passed_over > 0 && ctx.explain != nullptr) explain_passed_over(*ctx.explain, passed_over);
    }
  }
  if (ctx.explain != nullptr) {
    for (size_t i = 0; i < count_; ++i) {
      if (s.eligible(i)) ctx.explain->total(i, totals[i]);
    }
  }

  // Exact ties; with kFewestServed a tie on the total is first settled by the served count.
  const auto served = [this](size_t i) {
    return served_ ? served_[i].load(std::memory_order_relaxed) : uint64_t{0};
  };
  return weighted_argmax(std::span<const double>(totals), is_eligible, /*tolerance=*/0, served,
                         random_);
}

void ScoredStack::explain_passed_over(Explain& explain, size_t passed_over) const {
  std::string affinity;
  for (size_t e = 0; e < entries_.size(); ++e) {
    if (((share_affinity_ >> e) & 1) == 0) continue;
    if (!affinity.empty()) affinity += " and ";
    affinity += entries_[e].scorer->name();
  }
  explain.reason(std::to_string(passed_over) +
                 " candidate(s) above their share of the last minute's requests passed over: one "
                 "below scores as high on " +
                 affinity);
}

void ScoredStack::observe(size_t index, const RouteContext& ctx) {
  for (const Entry& entry : entries_) entry.scorer->observe(index, ctx);
  if (served_ && index < count_) served_[index].fetch_add(1, std::memory_order_relaxed);
  if (shares_) shares_->add(index);
}

}  // namespace rolter
