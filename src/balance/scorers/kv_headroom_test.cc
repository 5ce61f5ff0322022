#include "balance/scorers/kv_headroom.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "balance/stacks.h"
#include "balance/testing/candidates_fixture.h"

namespace rolter {
namespace {

struct Engines {
  explicit Engines(std::vector<int> permille) : signals(permille.size()) {
    for (size_t i = 0; i < permille.size(); ++i) {
      signals[i].engine_fresh.store(true);
      signals[i].engine_kv_permille.store(permille[i] < 0 ? LoadSignals::kNoKvUsage
                                                          : static_cast<uint16_t>(permille[i]));
      pointers.push_back(&signals[i]);
    }
  }
  Loads view() const { return Loads(pointers); }
  std::vector<LoadSignals> signals;
  std::vector<const LoadSignals*> pointers;
};

TEST(KvHeadroomScorerTest, ScoresTheRoomLeftInEachCache) {
  Engines engines({250, 900, 0});
  KvHeadroomScorer scorer;
  std::array<double, 3> out{};
  scorer.score({}, engines.view(), [](size_t) { return true; }, out);
  EXPECT_DOUBLE_EQ(out[0], 0.75);
  EXPECT_NEAR(out[1], 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(out[2], 1.0);
}

TEST(KvHeadroomScorerTest, NeutralUnlessEveryEligibleEngineIsMeasured) {
  Engines engines({250, -1, 500});
  KvHeadroomScorer scorer;
  std::array<double, 3> out{};
  scorer.score({}, engines.view(), [](size_t) { return true; }, out);
  EXPECT_EQ(out, (std::array<double, 3>{0, 0, 0}));
  // The unmeasured one cannot be picked: the others are compared.
  scorer.score({}, engines.view(), [](size_t i) { return i != 1; }, out);
  EXPECT_DOUBLE_EQ(out[0], 0.75);
  EXPECT_DOUBLE_EQ(out[2], 0.5);
  // A stale scrape is as good as none.
  engines.signals[0].engine_fresh.store(false);
  scorer.score({}, engines.view(), [](size_t i) { return i != 1; }, out);
  EXPECT_EQ(out, (std::array<double, 3>{0, 0, 0}));
}

TEST(KvHeadroomScorerTest, TheStrategyPicksTheEmptiestCacheThenTheLeastLoaded) {
  Engines engines({600, 100, 400});
  // 1 has the most room (0.9 against 0.4 and 0.6), which outweighs its load (3 against 0).
  engines.signals[1].in_flight.store(3);
  auto specs = make_candidates(3);
  auto lb = make_least_kv_usage(specs, {});
  ASSERT_TRUE(lb.has_value()) << lb.error();
  EXPECT_EQ((*lb)->pick({}, engines.view()), 1u);
  // Unknown usage everywhere: the least loaded wins.
  for (auto& s : engines.signals) s.engine_fresh.store(false);
  engines.signals[0].in_flight.store(2);
  engines.signals[2].in_flight.store(1);
  EXPECT_EQ((*lb)->pick({}, engines.view()), 2u);
}

}  // namespace
}  // namespace rolter
