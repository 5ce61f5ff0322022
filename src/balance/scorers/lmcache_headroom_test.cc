#include "balance/scorers/lmcache_headroom.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <vector>

#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

// One candidate's signal as the poller would leave it.
struct Signal {
  bool configured = true;  // false: the candidate has no LmcacheSignal at all
  bool fresh = true;
  bool available = true;
  double occupancy = 0;
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Scores `signals` as one candidate list, all eligible.
std::vector<double> score(const std::vector<Signal>& signals) {
  const size_t n = signals.size();
  auto storage = std::make_unique<LmcacheSignal[]>(n);
  auto candidates = make_candidates(n);
  for (size_t i = 0; i < n; ++i) {
    storage[i].fresh = signals[i].fresh;
    storage[i].available = signals[i].available;
    storage[i].occupancy = signals[i].occupancy;
    if (signals[i].configured) candidates[i].lmcache = &storage[i];
  }
  LmcacheHeadroomScorer scorer(candidates);
  LoadsFixture loads(n);
  std::vector<double> out(n, -1);
  scorer.score(
      {}, loads.view(), [](size_t) { return true; }, out);
  return out;
}

TEST(LmcacheHeadroomScorerTest, HeadroomOfUsableCachesNeutralOtherwise) {
  struct Case {
    const char* name;
    Signal signal;
    double expected;
  };
  const Case cases[] = {
      {"partly filled", {.occupancy = 0.42}, 0.58},
      {"nearly empty", {.occupancy = 0.01}, 0.99},
      {"three quarters full", {.occupancy = 0.75}, 0.25},
      {"empty: neutral", {.occupancy = 0}, 0},
      {"below empty: neutral", {.occupancy = -0.5}, 0},
      {"saturated: neutral", {.occupancy = 1}, 0},
      {"over-full: neutral", {.occupancy = 1.5}, 0},
      {"NaN: neutral", {.occupancy = kNaN}, 0},
      {"unavailable: neutral", {.available = false, .occupancy = 0.3}, 0},
      {"failed or stale: neutral", {.fresh = false, .occupancy = 0.3}, 0},
      {"no lmcache endpoint: neutral", {.configured = false, .occupancy = 0.3}, 0},
  };
  for (const Case& c : cases) {
    const auto out = score({c.signal});
    EXPECT_DOUBLE_EQ(out[0], c.expected) << c.name;
  }
}

TEST(LmcacheHeadroomScorerTest, EachCandidateOnItsOwnValue) {
  // Not normalised over the candidates: an unusable one next to usable ones stays 0, and the
  // usable ones keep their absolute headroom.
  const auto out = score({{.occupancy = 0.25},
                          {.fresh = false, .occupancy = 0.1},
                          {.occupancy = 0.75},
                          {.configured = false}});
  EXPECT_DOUBLE_EQ(out[0], 0.75);
  EXPECT_DOUBLE_EQ(out[1], 0);
  EXPECT_DOUBLE_EQ(out[2], 0.25);
  EXPECT_DOUBLE_EQ(out[3], 0);
}

TEST(LmcacheHeadroomScorerTest, NoUsableValueIsAllNeutral) {
  const auto out = score({{.occupancy = 0},
                          {.available = false, .occupancy = 0.5},
                          {.fresh = false, .occupancy = 0.5},
                          {.occupancy = 1}});
  EXPECT_EQ(out, std::vector<double>(4, 0.0));
}

TEST(LmcacheHeadroomScorerTest, ReadsTheSignalAtEachScore) {
  LmcacheSignal signal;
  auto candidates = make_candidates(1);
  candidates[0].lmcache = &signal;
  LmcacheHeadroomScorer scorer(candidates);
  LoadsFixture loads(1);
  std::vector<double> out(1, -1);
  const auto all = [](size_t) { return true; };
  scorer.score({}, loads.view(), all, out);
  EXPECT_DOUBLE_EQ(out[0], 0) << "never polled";
  signal.occupancy = 0.6;
  signal.available = true;
  signal.fresh = true;
  scorer.score({}, loads.view(), all, out);
  EXPECT_DOUBLE_EQ(out[0], 0.4);
  signal.fresh = false;  // the poller found it stale
  scorer.score({}, loads.view(), all, out);
  EXPECT_DOUBLE_EQ(out[0], 0);
}

}  // namespace
}  // namespace rolter
