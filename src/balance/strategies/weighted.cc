#include "balance/strategies/weighted.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "balance/strategies/pick_helpers.h"

namespace rolter {
namespace {

// Weights come from config as small integers or decimals split over a few instances (100/3);
// every ratio to the largest weight with a denominator up to 1000 is represented exactly.
constexpr uint64_t kMaxDenominator = 1000;
// A ratio counts as exact within this relative error: decimals and splits like 100/3 land a few
// ulps away from the rational they stand for.
constexpr double kRatioTolerance = 1e-9;
// 65536 slots of uint16_t = 128 KiB at worst per balancer; typical periods are single digits.
constexpr uint64_t kMaxPeriod = 1 << 16;
// Bounds construction work (period x candidates) to a few milliseconds.
constexpr uint64_t kMaxBuildSteps = uint64_t{1} << 24;

// The smallest integer weights proportional to `weights`, or an empty vector when no denominator
// up to kMaxDenominator represents every ratio exactly. Zero weights stay zero.
std::vector<uint64_t> integer_weights(const std::vector<double>& weights) {
  const double max_weight = *std::max_element(weights.begin(), weights.end());
  std::vector<uint64_t> result(weights.size(), 0);
  for (uint64_t denominator = 1; denominator <= kMaxDenominator; ++denominator) {
    bool exact = true;
    for (size_t i = 0; i < weights.size() && exact; ++i) {
      if (weights[i] <= 0) continue;
      const double scaled = weights[i] / max_weight * static_cast<double>(denominator);
      const double rounded = std::round(scaled);
      exact = rounded >= 1 && std::abs(scaled - rounded) <= kRatioTolerance * scaled;
      result[i] = static_cast<uint64_t>(rounded);
    }
    // The smallest such denominator already gives integers with no common factor: dividing by one
    // would give a smaller denominator that also works.
    if (exact) return result;
  }
  return {};
}

// One period of nginx's smooth weighted round-robin over integer weights: each step every
// candidate gains its weight, the largest current weight wins (the first one on ties, as nginx),
// and the winner gives back the total. After `total` steps every current weight is 0 again, so the
// order repeats exactly.
std::vector<uint16_t> nginx_period(const std::vector<uint64_t>& weights, uint64_t total) {
  std::vector<int64_t> current(weights.size(), 0);
  std::vector<uint16_t> order;
  order.reserve(total);
  for (uint64_t step = 0; step < total; ++step) {
    size_t best = weights.size();
    for (size_t i = 0; i < weights.size(); ++i) {
      if (weights[i] == 0) continue;
      current[i] += static_cast<int64_t>(weights[i]);
      if (best == weights.size() || current[i] > current[best]) best = i;
    }
    current[best] -= static_cast<int64_t>(total);
    order.push_back(static_cast<uint16_t>(best));
  }
  return order;
}

}  // namespace

WeightedBalancer::WeightedBalancer(std::span<const CandidateSpec> candidates)
    : count_(candidates.size()) {
  weights_.reserve(count_);
  for (size_t i = 0; i < count_; ++i) {
    weights_.push_back(candidates[i].weight);
    if (candidates[i].weight > 0) {
      has_positive_ = true;
    } else {
      zero_weight_.push_back(static_cast<uint32_t>(i));
    }
  }
  if (!has_positive_) return;

  const std::vector<uint64_t> integers = integer_weights(weights_);
  uint64_t total = 0;
  for (uint64_t w : integers) total += w;
  const bool fits = !integers.empty() &&
                    count_ <= std::numeric_limits<uint16_t>::max() + size_t{1} &&
                    total <= kMaxPeriod && total * count_ <= kMaxBuildSteps;
  if (fits) {
    sequence_ = nginx_period(integers, total);
  } else {
    current_.assign(count_, 0.0);
  }
}

std::optional<size_t> WeightedBalancer::pick(const RouteContext& ctx, const Loads& loads) {
  // A mismatched Loads belongs to another candidate list: any index would be meaningless.
  if (count_ == 0 || loads.size() != count_) return std::nullopt;
  if (!sequence_.empty()) {
    return sequence_[next_.fetch_add(1, std::memory_order_relaxed) % sequence_.size()];
  }
  const auto all = [](size_t) { return true; };
  if (has_positive_) return pick_locked(all);
  return pick_zero_weight(all);
}

std::optional<size_t> WeightedBalancer::pick_eligible(const RouteContext& ctx, const Loads& loads,
                                                      Eligible eligible) {
  if (count_ == 0 || loads.size() != count_) return std::nullopt;
  if (has_positive_) {
    const std::optional<size_t> chosen =
        sequence_.empty() ? pick_locked(eligible) : pick_from_sequence(eligible);
    if (chosen) return chosen;
  }
  return pick_zero_weight(eligible);
}

std::optional<size_t> WeightedBalancer::pick_from_sequence(Eligible eligible) {
  const size_t period = sequence_.size();
  const size_t start = static_cast<size_t>(next_.fetch_add(1, std::memory_order_relaxed) % period);
  size_t position = start;
  for (size_t skipped = 0; skipped < period; ++skipped) {
    const size_t candidate = sequence_[position];
    if (eligible(candidate)) {
      // Move the shared position past the skipped slots too, so the next pick continues the
      // sequence after this one rather than landing on the same replacement again.
      if (skipped > 0) next_.fetch_add(skipped, std::memory_order_relaxed);
      return candidate;
    }
    // A long miss streak usually means no positive-weight candidate is eligible at all: one O(n)
    // check then avoids walking a long period for nothing.
    if (skipped == count_ && !any_positive_eligible(eligible)) return std::nullopt;
    if (++position == period) position = 0;
  }
  return std::nullopt;
}

bool WeightedBalancer::any_positive_eligible(Eligible eligible) const {
  for (size_t i = 0; i < count_; ++i) {
    if (weights_[i] > 0 && eligible(i)) return true;
  }
  return false;
}

std::optional<size_t> WeightedBalancer::pick_locked(Eligible eligible) {
  MutexLock lock(mutex_);
  size_t best = count_;
  double total = 0;
  for (size_t i = 0; i < count_; ++i) {
    if (weights_[i] <= 0 || !eligible(i)) continue;
    current_[i] += weights_[i];
    total += weights_[i];
    if (best == count_ || current_[i] > current_[best]) best = i;
  }
  if (best == count_) return std::nullopt;
  current_[best] -= total;
  return best;
}

std::optional<size_t> WeightedBalancer::pick_zero_weight(Eligible eligible) {
  if (zero_weight_.empty()) return std::nullopt;
  const std::optional<size_t> position = rotate_to_eligible(
      next_zero_, zero_weight_.size(), [&](size_t p) { return eligible(zero_weight_[p]); });
  if (!position) return std::nullopt;
  return zero_weight_[*position];
}

}  // namespace rolter
