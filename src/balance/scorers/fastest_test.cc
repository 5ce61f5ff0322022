#include "balance/scorers/fastest.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "balance/evidence/instance_evidence.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

TEST(LatencyScorerTest, LowerAverageIsBetterUnknownNeutral) {
  struct Case {
    const char* name;
    std::vector<double> latency_ms;  // < 0: no sample yet
    std::vector<bool> eligible;      // empty: all eligible
    std::vector<double> expected;    // for eligible candidates
  };
  const Case cases[] = {
      // (best + 1) / (latency + 1): lower_is_better.h's kRatioToBest.
      {"ranked", {99, 299, 199}, {}, {1, 1.0 / 3, 0.5}},
      {"all equal", {80, 80}, {}, {1, 1}},
      {"unknown gets the known mean", {99, -1, 299}, {}, {1, 2.0 / 3, 1.0 / 3}},
      {"one known: neutral", {100, -1, -1}, {}, {0, 0, 0}},
      {"none known: neutral", {-1, -1}, {}, {0, 0}},
      {"fastest ineligible", {9, 99, 299}, {false, true, true}, {0, 1, 1.0 / 3}},
  };
  for (const Case& c : cases) {
    const size_t n = c.latency_ms.size();
    auto evidence = std::make_unique<InstanceEvidence[]>(n);
    auto candidates = make_candidates(n);
    for (size_t i = 0; i < n; ++i) {
      candidates[i].evidence = &evidence[i];
      if (c.latency_ms[i] >= 0) evidence[i].latency.record(c.latency_ms[i]);
    }
    LatencyScorer scorer(candidates);
    LoadsFixture loads(n);
    std::vector<double> out(n, -1);
    const auto eligible = [&c](size_t i) { return c.eligible.empty() || c.eligible[i]; };
    scorer.score({}, loads.view(), eligible, out);
    for (size_t i = 0; i < n; ++i) {
      if (eligible(i)) {
        EXPECT_DOUBLE_EQ(out[i], c.expected[i]) << c.name << ", candidate " << i;
      }
    }
  }
}

// The latency a request would meet now: the per-place average x (current load + 1).
TEST(LatencyScorerTest, ScoresTheLatencyAtTheCurrentQueue) {
  InstanceEvidence steady;
  InstanceEvidence quick;
  steady.latency.record(99);
  quick.latency.record(60);  // at an empty queue: 60 ms per place
  auto candidates = make_candidates(2);
  candidates[0].evidence = &steady;
  candidates[1].evidence = &quick;
  LatencyScorer scorer(candidates);
  LoadsFixture loads({0, 1});  // quick now has one ahead: 120 ms
  std::vector<double> out(2, -1);
  scorer.score({}, loads.view(), [](size_t) { return true; }, out);
  EXPECT_DOUBLE_EQ(out[0], 1.0);
  EXPECT_DOUBLE_EQ(out[1], 100.0 / 121);
  loads.set(1, 0);  // idle again: 60 ms beats 99
  scorer.score({}, loads.view(), [](size_t) { return true; }, out);
  EXPECT_DOUBLE_EQ(out[0], 61.0 / 100);
  EXPECT_DOUBLE_EQ(out[1], 1.0);
}

TEST(LatencyScorerTest, NoEvidenceIsUnknown) {
  InstanceEvidence fast;
  InstanceEvidence slow;
  fast.latency.record(49);
  slow.latency.record(149);
  auto candidates = make_candidates(3);
  candidates[0].evidence = &fast;
  candidates[2].evidence = &slow;
  LatencyScorer scorer(candidates);
  LoadsFixture loads(3);
  std::vector<double> out(3, -1);
  scorer.score(
      {}, loads.view(), [](size_t) { return true; }, out);
  EXPECT_DOUBLE_EQ(out[0], 1.0);
  EXPECT_DOUBLE_EQ(out[1], 2.0 / 3);  // the mean of the known
  EXPECT_DOUBLE_EQ(out[2], 1.0 / 3);
}

}  // namespace
}  // namespace rolter
