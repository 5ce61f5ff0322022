#include "balance/policy/policy_balancer.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "balance/explain.h"
#include "balance/pick_scratch.h"
#include "balance/weighted_argmax.h"

namespace rolter {
namespace {

// Columns of the per-thread pick scratch: one plugin's scores, and the weighted totals.
enum Column : size_t { kScores, kTotals, kColumns };
using Scratch = PickScratch<kColumns>;

Scratch& scratch() {
  thread_local Scratch buffers;
  return buffers;
}

// Plugins promise non-negative scores; a misbehaving one (NaN, negative, infinite) must not
// hijack or void the sum.
double clean_score(double value) {
  if (!(value >= 0) || std::isinf(value)) return 0;  // also catches NaN
  return value;
}

constexpr double kTieTolerance = 1e-12;

}  // namespace

PolicyBalancer::PolicyBalancer(size_t candidate_count, std::vector<Entry> entries,
                               std::unique_ptr<LoadBalancer> no_opinion, Random& random)
    : count_(candidate_count),
      entries_(std::move(entries)),
      no_opinion_(std::move(no_opinion)),
      random_(random) {}

bool PolicyBalancer::same_total(double a, double b) {
  return rolter::same_total(a, b, kTieTolerance);
}

std::optional<size_t> PolicyBalancer::pick(const RouteContext& ctx, const Loads& loads) {
  return pick_eligible(ctx, loads, [](size_t) { return true; });
}

size_t PolicyBalancer::totals(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                              std::span<double> totals) const {
  std::fill(totals.begin(), totals.end(), 0.0);
  if (loads.size() != count_ || totals.size() != count_) return 0;
  Scratch& s = scratch();
  s.ensure(count_);
  const std::span<double> scores = s.column(kScores, count_);
  size_t voters = 0;
  for (const Entry& entry : entries_) {
    const double multiplier = entry.plugin->vote(ctx, loads, eligible, scores);
    if (!(multiplier > 0) || !std::isfinite(multiplier)) continue;  // abstains
    double sum = 0;
    for (size_t i = 0; i < count_; ++i) {
      scores[i] = eligible(i) ? clean_score(scores[i]) : 0.0;
      sum += scores[i];
    }
    if (!(sum > 0) || !std::isfinite(sum)) continue;  // all zero: no opinion among these
    ++voters;
    const double scale = entry.weight * multiplier / sum;
    for (size_t i = 0; i < count_; ++i) {
      if (!eligible(i)) continue;
      const double contribution = scale * scores[i];
      totals[i] += contribution;
      if (ctx.explain != nullptr) ctx.explain->score(i, entry.plugin->name(), contribution);
    }
  }
  return voters;
}

std::optional<size_t> PolicyBalancer::pick_eligible(const RouteContext& ctx, const Loads& loads,
                                                    Eligible eligible) {
  // A mismatched Loads belongs to another candidate list: any index would be meaningless.
  if (count_ == 0 || loads.size() != count_) return std::nullopt;
  Scratch& s = scratch();
  if (s.begin(count_, eligible) == 0) return std::nullopt;
  const auto is_eligible = s.predicate();

  const std::span<double> totals_out = s.column(kTotals, count_);
  if (totals(ctx, loads, is_eligible, totals_out) == 0) {
    if (ctx.explain != nullptr)
      ctx.explain->reason("no plugin had an opinion: " + std::string(no_opinion_->name()));
    return no_opinion_->pick_eligible(ctx, loads, is_eligible);
  }

  if (ctx.explain != nullptr) {
    for (size_t i = 0; i < count_; ++i) {
      if (s.eligible(i)) ctx.explain->total(i, totals_out[i]);
    }
  }
  return weighted_argmax(std::span<const double>(totals_out), is_eligible, kTieTolerance, no_rank,
                         random_);
}

}  // namespace rolter
