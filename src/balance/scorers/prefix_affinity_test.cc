#include "balance/scorers/prefix_affinity.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "balance/scored_stack.h"
#include "balance/scorers/least_load.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

RouteContext context(std::string_view prompt) {
  RouteContext ctx;
  ctx.prompt = prompt;
  ctx.prompt_len = prompt.size();
  return ctx;
}

std::vector<double> run(PrefixAffinityScorer& scorer, std::string_view prompt, Eligible eligible) {
  LoadsFixture loads(scorer.tree().candidate_count());
  std::vector<double> out(loads.size(), -1);
  scorer.score(context(prompt), loads.view(), eligible, out);
  return out;
}

TEST(PrefixAffinityScorerTest, ScoresEachCandidatesMatchRatio) {
  PrefixAffinityScorer scorer(4);
  scorer.observe(0, context("abcdefghij"));
  scorer.observe(1, context("abcdeXXXXX"));
  scorer.observe(9, context("abcdefghij"));  // out of range: ignored
  struct Case {
    std::string_view prompt;
    std::vector<double> scores;
  };
  const Case cases[] = {
      {"abcdefghij", {1.0, 0.5, 0, 0}},
      {"abcdefghijklmnopqrst", {0.5, 0.25, 0, 0}},
      {"abXY", {0.5, 0.5, 0, 0}},
      {"zzz", {0, 0, 0, 0}},
      {"", {0, 0, 0, 0}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(run(scorer, c.prompt, [](size_t) { return true; }), c.scores) << c.prompt;
  }
  // A match is a fact about the tree: eligibility does not change it.
  EXPECT_EQ(run(scorer, "abcdefghij", [](size_t i) { return i != 0; }),
            (std::vector<double>{1.0, 0.5, 0, 0}));
}

TEST(PrefixAffinityScorerTest, InAStackAffinityAndLoadAddUp) {
  SeededRandom random(1);
  std::vector<ScoredStack::Entry> entries;
  entries.push_back({std::make_unique<PrefixAffinityScorer>(3), 1.0});
  entries.push_back({std::make_unique<LeastLoadScorer>(), 1.0});
  ScoredStack stack("pipeline", 3, std::move(entries), random);
  const std::string prompt = "a conversation that candidate 2 has already served";
  stack.observe(2, context(prompt));
  // Candidate 2: 1.0 + (1 - 2/4) = 1.5 beats the idle candidate 0's 0 + 1 = 1.0.
  LoadsFixture loads({0, 4, 2});
  EXPECT_EQ(stack.pick(context(prompt), loads.view()), 2u);
  // A prompt nobody served: every prefix score is 0 and the least loaded wins.
  EXPECT_EQ(stack.pick(context("something new"), loads.view()), 0u);
}

TEST(PrefixAffinityScorerTest, BoundedByItsNodeCap) {
  PrefixAffinityScorer scorer(2, {.max_nodes = 50});
  for (int i = 0; i < 500; ++i) {
    scorer.observe(i % 2, context("prompt number " + std::to_string(i * 31) + " of many"));
    ASSERT_LE(scorer.tree().node_count(), 50u);
  }
}

}  // namespace
}  // namespace rolter
