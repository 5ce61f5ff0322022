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
      {"ranked", {100, 300, 200}, {}, {1, 0, 0.5}},
      {"all equal", {80, 80}, {}, {1, 1}},
      {"unknown gets the known mean", {100, -1, 300}, {}, {1, 0.5, 0}},
      {"one known: neutral", {100, -1, -1}, {}, {0, 0, 0}},
      {"none known: neutral", {-1, -1}, {}, {0, 0}},
      {"fastest ineligible", {10, 100, 300}, {false, true, true}, {0, 1, 0}},
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

TEST(LatencyScorerTest, NoEvidenceIsUnknown) {
  InstanceEvidence fast;
  InstanceEvidence slow;
  fast.latency.record(50);
  slow.latency.record(150);
  auto candidates = make_candidates(3);
  candidates[0].evidence = &fast;
  candidates[2].evidence = &slow;
  LatencyScorer scorer(candidates);
  LoadsFixture loads(3);
  std::vector<double> out(3, -1);
  scorer.score(
      {}, loads.view(), [](size_t) { return true; }, out);
  EXPECT_EQ(out, std::vector<double>({1, 0.5, 0}));
}

}  // namespace
}  // namespace rolter
