#include "balance/scorer_registry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

TEST(ScorerRegistryTest, EveryKnownNameBuildsThatScorer) {
  const auto candidates = make_candidates({1, 2, 3});
  ManualClock clock;
  SeededRandom random(1);
  const ScorerDeps deps{.candidates = candidates, .random = &random, .clock = &clock};
  ASSERT_FALSE(known_scorers().empty());
  for (std::string_view name : known_scorers()) {
    EXPECT_TRUE(is_known_scorer(name)) << name;
    auto scorer = make_scorer(name, deps);
    ASSERT_NE(scorer, nullptr) << name;
    EXPECT_EQ(scorer->name(), name);
    // Built for these candidates: scores every one of them within [0, 1].
    LoadsFixture loads({0, 3, 1});
    std::vector<double> out(3, -1);
    scorer->score(
        {}, loads.view(), [](size_t) { return true; }, out);
    for (double v : out) {
      EXPECT_GE(v, 0.0) << name;
      EXPECT_LE(v, 1.0) << name;
    }
  }
}

TEST(ScorerRegistryTest, TheSpecScorersAreRegistered) {
  // prefix_affinity joins this list when its scorer is registered.
  for (std::string_view name : {"session_affinity", "static_weight", "least_load",
                                "predicted_latency", "fastest", "cheapest", "adapter_residency",
                                "lmcache_headroom"}) {
    EXPECT_TRUE(is_known_scorer(name)) << name;
  }
}

TEST(ScorerRegistryTest, UnknownNamesBuildNothing) {
  const auto candidates = make_candidates(2);
  const ScorerDeps deps{.candidates = candidates};
  for (std::string_view name : {"", "nonsense", "Least_Load", "least_load ", "pipeline"}) {
    EXPECT_FALSE(is_known_scorer(name)) << '"' << name << '"';
    EXPECT_EQ(make_scorer(name, deps), nullptr) << '"' << name << '"';
  }
}

TEST(ScorerRegistryTest, NullDepsMeanTheProcessDefaults) {
  const auto candidates = make_candidates(2);
  const ScorerDeps deps{.candidates = candidates, .random = nullptr, .clock = nullptr};
  for (std::string_view name : known_scorers()) EXPECT_NE(make_scorer(name, deps), nullptr) << name;
}

}  // namespace
}  // namespace rolter
