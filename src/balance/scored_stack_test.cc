#include "balance/scored_stack.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <cmath>
#include <limits>
#include <vector>

#include "balance/explain.h"
#include "balance/scorers/least_load.h"
#include "balance/scorers/static_weight.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"
#include "common/clock.h"

namespace rolter {
namespace {

// Writes fixed values and counts observe() calls.
class FixedScorer final : public Scorer {
 public:
  explicit FixedScorer(std::vector<double> values, std::atomic<int>* observed = nullptr)
      : values_(std::move(values)), observed_(observed) {}
  std::string_view name() const override { return "fixed"; }
  void score(const RouteContext&, const Loads&, Eligible, std::span<double> out) override {
    for (size_t i = 0; i < out.size(); ++i) out[i] = values_[i];
  }
  void observe(size_t, const RouteContext&) override {
    if (observed_ != nullptr) ++*observed_;
  }

 private:
  std::vector<double> values_;
  std::atomic<int>* observed_;
};

ScoredStack two_fixed(std::vector<double> first, double first_weight, std::vector<double> second,
                      double second_weight, Random& random) {
  const size_t n = first.size();
  std::vector<ScoredStack::Entry> entries;
  entries.push_back({std::make_unique<FixedScorer>(std::move(first)), first_weight});
  entries.push_back({std::make_unique<FixedScorer>(std::move(second)), second_weight});
  return ScoredStack("test", n, std::move(entries), random);
}

TEST(ScoredStackTest, WeightedSumArgmax) {
  SeededRandom random(1);
  LoadsFixture loads(3);
  // Totals with weights 2, 1: 2.0, 1.0, 1.5; with weights 1, 2: 1.0, 2.0, 1.5.
  auto favour_first = two_fixed({1, 0, 0.5}, 2.0, {0, 1, 0.5}, 1.0, random);
  auto favour_second = two_fixed({1, 0, 0.5}, 1.0, {0, 1, 0.5}, 2.0, random);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(favour_first.pick({}, loads.view()), 0u);
    EXPECT_EQ(favour_second.pick({}, loads.view()), 1u);
  }
  // Equal weights and a middle candidate that is good on both beats the two specialists.
  auto balanced = two_fixed({1, 0, 0.6}, 1.0, {0, 1, 0.6}, 1.0, random);
  EXPECT_EQ(balanced.pick({}, loads.view()), 2u);
}

// Even shares: an affinity entry (first) and a preference for candidate 0 (second, weight 2).
// Candidate 0 was given ten requests in the last minute, candidate 1 none. A request both hold
// equally (affinity 0.5 each) goes to 1, below its share, though the stack prefers 0. A request
// only 0 holds (affinity 1 against 0) stays on 0. A minute later the counts are gone and the
// preference decides again.
TEST(ScoredStackTest, EvenSharesPlaceWhatLosesNothingBelowTheShare) {
  SeededRandom random(1);
  ManualClock clock;
  LoadsFixture loads(2);
  auto stack_with = [&](std::vector<double> affinity) {
    std::vector<ScoredStack::Entry> entries;
    entries.push_back({std::make_unique<FixedScorer>(std::move(affinity)), 1.0});
    entries.push_back({std::make_unique<FixedScorer>(std::vector<double>{1, 0}), 2.0});
    return std::make_unique<ScoredStack>(
        "test", 2, std::move(entries), random, ScoredStack::TieBreak::kRandom, LoadGuard::kNone,
        ScoredStack::EvenShares{.affinity = ScoredStack::entry_bit(0), .clock = &clock});
  };
  auto shared = stack_with({0.5, 0.5});
  auto held_by_0 = stack_with({1, 0});
  for (int k = 0; k < 10; ++k) {
    shared->observe(0, {});
    held_by_0->observe(0, {});
  }
  Explain explain(2);
  RouteContext ctx;
  ctx.explain = &explain;
  EXPECT_EQ(shared->pick(ctx, loads.view()), 1u);
  ASSERT_EQ(explain.reasons().size(), 1u);
  EXPECT_NE(explain.reasons()[0].find("above their share"), std::string::npos);
  ASSERT_FALSE(explain.rows()[0].scores.empty()) << "passed over, candidate 0 still shows its score";
  EXPECT_EQ(explain.rows()[0].scores[0], (std::pair<std::string, double>{"fixed", 0.5}));
  EXPECT_FALSE(explain.rows()[0].total.has_value()) << "but it was not ranked";
  EXPECT_EQ(held_by_0->pick({}, loads.view()), 0u) << "only candidate 0 holds it";
  clock.advance(std::chrono::seconds(61));
  EXPECT_EQ(shared->pick({}, loads.view()), 0u) << "the ten requests left the window";
}

// Even shares over two affinity entries (0 and 2) around a preference for candidate 0 (weight 3).
// Candidate 0 was given ten requests in the last minute, 1 and 2 none. A candidate loses nothing
// only if it scores as high as the best on both: when neither 1 nor 2 does, the preference decides;
// when 2 does, the request goes below the share, to 2.
TEST(ScoredStackTest, EvenSharesWeighEveryAffinityEntry) {
  SeededRandom random(1);
  ManualClock clock;
  LoadsFixture loads(3);
  auto stack_with = [&](std::vector<double> first, std::vector<double> second) {
    std::vector<ScoredStack::Entry> entries;
    entries.push_back({std::make_unique<FixedScorer>(std::move(first)), 1.0});
    entries.push_back({std::make_unique<FixedScorer>(std::vector<double>{1, 0, 0}), 3.0});
    entries.push_back({std::make_unique<FixedScorer>(std::move(second)), 1.0});
    auto stack = std::make_unique<ScoredStack>(
        "test", 3, std::move(entries), random, ScoredStack::TieBreak::kRandom, LoadGuard::kNone,
        ScoredStack::EvenShares{
            .affinity = ScoredStack::entry_bit(0) | ScoredStack::entry_bit(2), .clock = &clock});
    for (int k = 0; k < 10; ++k) stack->observe(0, {});
    return stack;
  };
  // 1 holds the best of the second entry only, 2 of the first only.
  EXPECT_EQ(stack_with({1, 0.5, 1}, {1, 1, 0})->pick({}, loads.view()), 0u);
  // 2 holds the best of both.
  EXPECT_EQ(stack_with({1, 0.5, 1}, {1, 1, 1})->pick({}, loads.view()), 2u);
}

// A score within kEvenShareTolerance of the best loses nothing that matters: the request leaves a
// candidate above its share for it; a little further below, it stays.
TEST(ScoredStackTest, EvenSharesTolerateANearlyEqualScore) {
  static_assert(ScoredStack::kEvenShareTolerance == 0.02);
  SeededRandom random(1);
  ManualClock clock;
  LoadsFixture loads(3);
  auto pick_with = [&](double second_best) {
    std::vector<ScoredStack::Entry> entries;
    entries.push_back({std::make_unique<FixedScorer>(std::vector<double>{1, second_best, 0.5}), 1.0});
    entries.push_back({std::make_unique<FixedScorer>(std::vector<double>{1, 0, 0}), 3.0});
    ScoredStack stack("test", 3, std::move(entries), random, ScoredStack::TieBreak::kRandom,
                      LoadGuard::kNone,
                      ScoredStack::EvenShares{.affinity = ScoredStack::entry_bit(0), .clock = &clock});
    for (int k = 0; k < 10; ++k) stack.observe(0, {});
    return stack.pick({}, loads.view());
  };
  EXPECT_EQ(pick_with(0.985), 1u);
  EXPECT_EQ(pick_with(0.97), 0u);
}

TEST(ScoredStackTest, ExactTiesAreUniform) {
  constexpr size_t kCandidates = 5;
  constexpr int kPicks = 50000;
  SeededRandom random(3);
  // Candidate 4 scores lower and must never win; 0-3 tie exactly.
  auto stack = two_fixed({1, 1, 1, 1, 0.5}, 1.0, {0.25, 0.25, 0.25, 0.25, 0.25}, 1.0, random);
  LoadsFixture loads(kCandidates);
  std::vector<int> counts(kCandidates, 0);
  for (int i = 0; i < kPicks; ++i) ++counts[*stack.pick({}, loads.view())];
  EXPECT_EQ(counts[4], 0);
  double chi = 0;
  const double expected = kPicks / 4.0;
  for (size_t c = 0; c < 4; ++c) chi += (counts[c] - expected) * (counts[c] - expected) / expected;
  EXPECT_LT(chi, 16.266);  // chi-square, 3 degrees of freedom, upper 0.1% point
}

TEST(ScoredStackTest, EligibilityHonoured) {
  SeededRandom random(4);
  LoadsFixture loads(4);
  auto stack = two_fixed({1, 0.9, 0.8, 0.1}, 1.0, {0, 0, 0, 0}, 1.0, random);
  EXPECT_EQ(stack.pick_eligible({}, loads.view(), [](size_t c) { return c != 0; }), 1u);
  EXPECT_EQ(stack.pick_eligible({}, loads.view(), [](size_t c) { return c >= 2; }), 2u);
  EXPECT_EQ(stack.pick_eligible({}, loads.view(), [](size_t c) { return c == 3; }), 3u);
  EXPECT_EQ(stack.pick_eligible({}, loads.view(), [](size_t) { return false; }), std::nullopt);
}

TEST(ScoredStackTest, ScorersNormaliseOverEligibleOnly) {
  // Least load plus static weight. Candidate 0 is idle but ineligible; without it, candidate 1
  // (load 2 of max 4, weight 1 of max 1) beats candidate 2 (load 4, weight 1) and 3 (load 0 but
  // weight 0.1): 0.5 + 1 vs 0 + 1 vs 1 + 0.1.
  SeededRandom random(5);
  const auto candidates = make_candidates({1, 1, 1, 0.1});
  std::vector<ScoredStack::Entry> entries;
  entries.push_back({std::make_unique<LeastLoadScorer>(), 1.0});
  entries.push_back({std::make_unique<StaticWeightScorer>(candidates), 1.0});
  ScoredStack stack("pipeline", candidates.size(), std::move(entries), random);
  LoadsFixture loads({0, 2, 4, 0});
  EXPECT_EQ(stack.pick_eligible({}, loads.view(), [](size_t c) { return c != 0; }), 1u);
  EXPECT_EQ(stack.pick({}, loads.view()), 0u);
}

TEST(ScoredStackTest, MisbehavingScoresAreClamped) {
  SeededRandom random(6);
  LoadsFixture loads(3);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto stack = two_fixed({nan, 50.0, 0.9}, 1.0, {0, 0, 0.2}, 1.0, random);
  // NaN counts as 0 and 50 as 1: candidate 2 (1.1) beats 1 (1.0) and 0 (0).
  EXPECT_EQ(stack.pick({}, loads.view()), 2u);
}

TEST(ScoredStackTest, ObserveReachesEveryScorer) {
  SeededRandom random(7);
  std::atomic<int> observed{0};
  std::vector<ScoredStack::Entry> entries;
  entries.push_back({std::make_unique<FixedScorer>(std::vector<double>{1, 0}, &observed), 1.0});
  entries.push_back({std::make_unique<FixedScorer>(std::vector<double>{0, 1}, &observed), 1.0});
  entries.push_back({std::make_unique<FixedScorer>(std::vector<double>{0, 0}, &observed), 1.0});
  ScoredStack stack("test", 2, std::move(entries), random);
  stack.observe(1, {});
  EXPECT_EQ(observed.load(), 3);
}

TEST(ScoredStackTest, SameSeedSameSequence) {
  SeededRandom a_random(11);
  SeededRandom b_random(11);
  auto a = two_fixed({1, 1, 1, 1}, 1.0, {0, 0, 0, 0}, 1.0, a_random);
  auto b = two_fixed({1, 1, 1, 1}, 1.0, {0, 0, 0, 0}, 1.0, b_random);
  LoadsFixture loads(4);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.pick({}, loads.view()), b.pick({}, loads.view()));
}

}  // namespace
}  // namespace rolter
