#include "balance/strategies/cache_aware.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "balance/explain.h"
#include "balance/testing/loads_fixture.h"
#include "common/clock.h"

namespace rolter {
namespace {

constexpr auto kAll = [](size_t) { return true; };

RouteContext context(std::string_view prompt) {
  RouteContext ctx;
  ctx.prompt = prompt;
  ctx.prompt_len = prompt.size();
  return ctx;
}

// 100 bytes; `shared` leading bytes equal kStored's, the rest differs from it at every byte.
const std::string kStored(100, 's');
std::string query(size_t shared) {
  return kStored.substr(0, shared) + std::string(100 - shared, 'q');
}

// The load guard: the warm candidate keeps affinity until its load is both > mean + 2 and
// > 1.5 x mean, the mean taken over the eligible candidates (the warm one included). Candidates:
// the warm one, one at `least` and two at least + 1, so a spread goes to candidate 1.
TEST(CacheAwareTest, WarmCandidateKeepsAffinityUntilBothGuardPartsHold) {
  struct Case {
    uint32_t least;
    uint32_t warm_load;
    size_t expected;
    const char* why;
  };
  const Case cases[] = {
      {0, 0, 0, "warm is the least loaded"},
      {0, 3, 0, "mean 1.25: 3 > 3.25 fails"},
      {0, 4, 1, "mean 1.5: 4 > 3.5 and 4 > 2.25"},
      {2, 5, 0, "mean 3.25: 5 > 5.25 fails though 5 > 4.875: the absolute part decides"},
      {2, 6, 1, "mean 3.5: 6 > 5.5 and 6 > 5.25"},
      {10, 16, 0, "mean 12: 16 > 18 fails though 16 > 14: the relative part decides"},
      {10, 20, 1, "mean 13: 20 > 15 and 20 > 19.5"},
  };
  for (const Case& c : cases) {
    SeededRandom random(1);
    CacheAwareBalancer lb(4, random);
    lb.observe(0, context(kStored));
    LoadsFixture loads({c.warm_load, c.least, c.least + 1, c.least + 1});
    EXPECT_EQ(lb.pick(context(kStored), loads.view()), c.expected)
        << "least " << c.least << ", warm load " << c.warm_load << ": " << c.why;
  }
}

// Several gateway nodes reading the engines' scraped load: an engine other nodes have just sent
// work to still reads 0 until the next scrape. Against that least every warm engine with 3
// requests would look overloaded; against the mean (3.5) the warm one keeps its conversation.
TEST(CacheAwareTest, OneEngineReadingIdleDoesNotSpreadAWarmConversation) {
  SeededRandom random(2);
  CacheAwareBalancer lb(8, random);
  lb.observe(0, context(kStored));
  LoadsFixture loads({4, 4, 4, 4, 4, 4, 4, 0});
  EXPECT_EQ(lb.pick(context(kStored), loads.view()), 0u);
}

// The ratio: candidate 0 served kStored and carries load 2 (not overloaded against min 0); below
// half the prompt the idle candidate 1 wins instead.
TEST(CacheAwareTest, MatchBelowHalfGoesToTheLeastLoaded) {
  struct Case {
    size_t shared;
    size_t expected;
  };
  const Case cases[] = {{100, 0}, {51, 0}, {50, 0}, {49, 1}, {40, 1}, {10, 1}, {0, 1}};
  for (const Case& c : cases) {
    SeededRandom random(2);
    CacheAwareBalancer lb(3, random);
    lb.observe(0, context(kStored));
    LoadsFixture loads({2, 0, 1});
    const std::string prompt = query(c.shared);
    EXPECT_EQ(lb.pick(context(prompt), loads.view()), c.expected) << c.shared << "% shared";
  }
}

TEST(CacheAwareTest, IneligibleWarmCandidateDoesNotShapeTheChoice) {
  SeededRandom random(3);
  CacheAwareBalancer lb(3, random);
  lb.observe(0, context(kStored));    // 100% match, idle, but ineligible
  lb.observe(1, context(query(60)));  // 60% match, load 5
  LoadsFixture loads({0, 5, 3});
  const auto not_zero = [](size_t i) { return i != 0; };
  // min_load is 3 (candidate 0's 0 does not count): 5 > 3 + 2 fails, so 1 keeps affinity. Were
  // candidate 0's load counted, 5 > 0 + 2 and 5 > 0 would spread the request to 2.
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(lb.pick_eligible(context(kStored), loads.view(), not_zero), 1u);
  // Candidate 1's match is under half of this prompt: the least loaded eligible (2) wins, not 0.
  const std::string prompt = query(40);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(lb.pick_eligible(context(prompt), loads.view(), not_zero), 2u);
}

TEST(CacheAwareTest, TiesAreRandom) {
  constexpr int kPicks = 20000;
  SeededRandom random(4);
  CacheAwareBalancer lb(3, random);
  lb.observe(0, context(kStored));
  lb.observe(1, context(kStored));
  // Two warm candidates with equal matches: either keeps affinity, the idle cold one never wins.
  LoadsFixture warm_loads({1, 1, 0});
  std::vector<int> counts(3, 0);
  for (int i = 0; i < kPicks; ++i) ++counts[*lb.pick(context(kStored), warm_loads.view())];
  EXPECT_EQ(counts[2], 0);
  EXPECT_NEAR(counts[0] / static_cast<double>(kPicks), 0.5, 0.02);
  // An empty prompt: the least loaded; among equally loaded ones that have served as many
  // requests, at random.
  CacheAwareBalancer fresh(3, random);
  LoadsFixture loads({1, 0, 0});
  counts.assign(3, 0);
  for (int i = 0; i < kPicks; ++i) ++counts[*fresh.pick(context(""), loads.view())];
  EXPECT_EQ(counts[0], 0);
  EXPECT_NEAR(counts[1] / static_cast<double>(kPicks), 0.5, 0.02);
}

TEST(CacheAwareTest, AmongEqualMatchesTheLessLoadedKeepsAffinity) {
  SeededRandom random(6);
  CacheAwareBalancer lb(3, random);
  lb.observe(0, context(kStored));
  lb.observe(1, context(kStored));
  // Both hold the whole prompt; candidate 1 is less loaded, and neither is overloaded (min 0).
  LoadsFixture loads({2, 1, 0});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(lb.pick(context(kStored), loads.view()), 1u);
}

TEST(CacheAwareTest, LoadTiesGoToTheCandidateThatServedFewest) {
  SeededRandom random(5);
  CacheAwareBalancer lb(3, random);
  LoadsFixture loads({0, 0, 0});
  // Served counts 2, 1, 0: equal loads, so the one that served fewest wins, every time.
  lb.observe(0, context(""));
  lb.observe(0, context(""));
  lb.observe(1, context(""));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(lb.pick(context(""), loads.view()), 2u);
  // Load still comes first: candidate 2 busier than the others loses despite serving fewest.
  loads.set(2, 1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(lb.pick(context(query(30)), loads.view()), 1u);
  // Counts served through observe() only; a pick alone changes nothing.
  loads.set(2, 0);
  EXPECT_EQ(lb.pick(context(""), loads.view()), 2u);
}

TEST(CacheAwareTest, NeverPicksIneligible) {
  SeededRandom masks(99);
  SeededRandom random(100);
  const std::string prompts[] = {kStored, query(70), query(30), ""};
  for (int round = 0; round < 500; ++round) {
    const size_t n = 1 + masks.uniform(12);
    CacheAwareBalancer lb(n, random);
    for (size_t i = 0; i < n; ++i) lb.observe(i, context(prompts[masks.uniform(3)]));
    std::vector<uint32_t> load_values(n);
    for (auto& load : load_values) load = static_cast<uint32_t>(masks.uniform(6));
    LoadsFixture loads(load_values);
    std::vector<char> mask(n);
    size_t eligible_count = 0;
    for (auto& m : mask) eligible_count += (m = masks.uniform(3) != 0 || round % 5 == 0);
    const auto eligible = [&](size_t i) { return mask[i] != 0; };
    for (const std::string& prompt : prompts) {
      const auto idx = lb.pick_eligible(context(prompt), loads.view(), eligible);
      if (eligible_count == 0) {
        ASSERT_EQ(idx, std::nullopt);
      } else {
        ASSERT_TRUE(idx.has_value());
        ASSERT_TRUE(mask[*idx]) << "round " << round << " picked ineligible " << *idx;
      }
    }
  }
}

TEST(CacheAwareTest, NoCandidatesOrMismatchedLoads) {
  SeededRandom random(5);
  CacheAwareBalancer none(0, random);
  LoadsFixture no_loads(0);
  EXPECT_EQ(none.pick(context(kStored), no_loads.view()), std::nullopt);
  CacheAwareBalancer two(2, random);
  LoadsFixture three_loads(3);
  EXPECT_EQ(two.pick(context(kStored), three_loads.view()), std::nullopt);
  two.observe(7, context(kStored));  // out of range: ignored
  EXPECT_EQ(two.tree().node_count(), 0u);
}

TEST(CacheAwareTest, AConversationStaysOnItsReplicaTurnAfterTurn) {
  SeededRandom random(6);
  CacheAwareBalancer lb(8, random);
  LoadsFixture loads(8);
  std::string conversation = "system: " + std::string(200, 'x');
  const auto first = lb.pick(context(conversation), loads.view());
  ASSERT_TRUE(first.has_value());
  lb.observe(*first, context(conversation));
  loads.set(*first, 2);  // busier than the idle others, but within the guard's slack
  for (int turn = 0; turn < 20; ++turn) {
    // Each turn appends to the conversation, so the previous turn is most of the new prompt.
    conversation += " user: question " + std::to_string(turn) + ". assistant: an answer.";
    const auto idx = lb.pick(context(conversation), loads.view());
    EXPECT_EQ(idx, first) << "turn " << turn;
    lb.observe(*idx, context(conversation));
  }
}

TEST(CacheAwareTest, TreeStaysUnderItsCapWithTenTimesAsManyPrompts) {
  constexpr size_t kCap = 1000;
  SeededRandom random(7);
  CacheAwareBalancer lb(4, random, {.max_nodes = kCap});
  LoadsFixture loads(4);
  std::vector<std::string> prompts;
  for (int i = 0; i < 10 * static_cast<int>(kCap); ++i) {
    prompts.push_back(std::to_string(i * 7919) + " a distinct conversation " + std::to_string(i));
    lb.observe(i % 4, context(prompts.back()));
    ASSERT_LE(lb.tree().node_count(), kCap) << "after prompt " << i;
  }
  // The most recent prompts still find the candidate that served them, with every load equal.
  for (int i = static_cast<int>(prompts.size()) - 50; i < static_cast<int>(prompts.size()); ++i) {
    EXPECT_EQ(lb.pick(context(prompts[i]), loads.view()), static_cast<size_t>(i % 4)) << i;
  }
}

TEST(CacheAwareTest, SameSeedSameSequenceAndPickIsPickEligible) {
  SeededRandom a_random(77);
  SeededRandom b_random(77);
  CacheAwareBalancer a(4, a_random);
  CacheAwareBalancer b(4, b_random);
  LoadsFixture loads({1, 1, 0, 0});
  const std::string prompts[] = {kStored, query(60), ""};
  for (int i = 0; i < 300; ++i) {
    const RouteContext ctx = context(prompts[i % 3]);
    const auto x = a.pick(ctx, loads.view());
    ASSERT_EQ(x, b.pick_eligible(ctx, loads.view(), kAll)) << i;
    a.observe(*x, ctx);
    b.observe(*x, ctx);
  }
}

// Even shares. Candidate 0 was given ten requests in the last minute, 1 and 2 none, and 0 and 1
// both served kStored. A turn both hold goes to 1 (0 would win on load); a turn only 0 holds stays
// on 0. A new conversation goes below its share when a candidate there is no busier than the mean,
// else to the least loaded. A minute later the counts are gone and load decides again.
TEST(CacheAwareTest, RequestsThatLoseNothingGoBelowTheirShare) {
  SeededRandom random(9);
  ManualClock clock;
  CacheAwareBalancer lb(3, random, {}, clock);
  for (int k = 0; k < 10; ++k) lb.observe(0, context(query(0) + std::to_string(k)));
  lb.observe(0, context(kStored));
  CacheAwareBalancer held_by_0(3, random, {}, clock);
  for (int k = 0; k < 10; ++k) held_by_0.observe(0, context(query(0) + std::to_string(k)));
  held_by_0.observe(0, context(kStored));

  RouteContext both = context(kStored);
  lb.observe(1, both);  // 1 holds it too; 0 is still far above its share (11 of 12)
  LoadsFixture warm_loads({0, 1, 1});
  Explain explain(3);
  both.explain = &explain;
  EXPECT_EQ(lb.pick(both, warm_loads.view()), 1u);
  ASSERT_EQ(explain.reasons().size(), 2u);
  EXPECT_EQ(explain.reasons()[0],
            "1 candidate(s) above their share of the last minute's requests passed over: one "
            "below matched as much of the prompt");
  EXPECT_TRUE(explain.rows()[0].eligible) << "passed over, not ineligible";
  EXPECT_EQ(held_by_0.pick(context(kStored), warm_loads.view()), 0u) << "only 0 holds it";

  LoadsFixture one_at_mean({0, 1, 2});  // mean 1: candidate 1 is no busier
  LoadsFixture both_above({0, 2, 2});   // mean 1.33: 1 and 2 are busier
  EXPECT_EQ(lb.pick(context(query(10)), one_at_mean.view()), 1u) << "new: below its share";
  EXPECT_EQ(lb.pick(context(query(10)), both_above.view()), 0u) << "new: the least loaded";
  clock.advance(std::chrono::seconds(61));
  EXPECT_EQ(lb.pick(context(query(10)), one_at_mean.view()), 0u) << "the counts left the window";
  EXPECT_EQ(lb.pick(context(kStored), warm_loads.view()), 0u) << "the least loaded match wins";
}

// The explanation: rows for every candidate and one reason per decision path.
TEST(CacheAwareTest, ExplainsEachDecision) {
  struct Case {
    std::string prompt;
    std::vector<uint32_t> loads;
    std::vector<std::string> reasons;
  };
  const Case cases[] = {
      {kStored, {3, 3, 4}, {"candidate 0 matched 100% of the prompt (>= 50%) and keeps affinity"}},
      {kStored,
       {9, 3, 4},
       {"warm candidate 0 is overloaded: load 9 > mean 5.33 + 2 and > 1.5 x 5.33; spread to the "
        "least loaded"}},
      // Candidate 0 served the one request of the last minute, so it is above its share, and a
      // request no match keeps goes below it: 1 is at the mean load.
      {query(12),
       {3, 3, 4},
       {"1 candidate(s) above their share of the last minute's requests passed over: no match "
        "keeps the request, and one below is no busier than the mean",
        "best match 12% < 50%: least loaded wins"}},
      {"",
       {3, 3, 4},
       {"1 candidate(s) above their share of the last minute's requests passed over: no match "
        "keeps the request, and one below is no busier than the mean",
        "empty prompt: least loaded wins"}},
  };
  for (const Case& c : cases) {
    SeededRandom random(8);
    CacheAwareBalancer lb(3, random);
    lb.observe(0, context(kStored));
    LoadsFixture loads(c.loads);
    Explain explain(3);
    RouteContext ctx = context(c.prompt);
    ctx.explain = &explain;
    lb.pick(ctx, loads.view());
    EXPECT_EQ(explain.reasons(), c.reasons) << c.prompt;
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_TRUE(explain.rows()[i].eligible);
      EXPECT_EQ(explain.rows()[i].load, c.loads[i]);
    }
    const double ratio = c.prompt.empty() ? 0.0 : (c.prompt == kStored ? 1.0 : 0.12);
    EXPECT_EQ(explain.rows()[0].scores,
              (std::vector<std::pair<std::string, double>>{{"prefix", ratio}}));
  }
}

TEST(CacheAwareTest, ExplainsAnIneligibleLongerMatch) {
  SeededRandom random(9);
  CacheAwareBalancer lb(3, random);
  lb.observe(2, context(kStored));
  lb.observe(1, context(query(60)));
  LoadsFixture loads({0, 1, 0});
  Explain explain(3);
  RouteContext ctx = context(kStored);
  ctx.explain = &explain;
  EXPECT_EQ(lb.pick_eligible(ctx, loads.view(), [](size_t i) { return i != 2; }), 1u);
  EXPECT_EQ(explain.reasons(),
            (std::vector<std::string>{
                "ineligible candidate 2 matched 100% of the prompt, more than any eligible "
                "candidate, and was not considered",
                "candidate 1 matched 60% of the prompt (>= 50%) and keeps affinity"}));
  EXPECT_FALSE(explain.rows()[2].eligible);
  EXPECT_EQ(explain.rows()[1].scores[0].second, 0.6);
}

}  // namespace
}  // namespace rolter
