#include "balance/scorers/session_affinity.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

using std::chrono::seconds;

constexpr size_t kCandidates = 4;

RouteContext with_session(std::string_view key) {
  RouteContext ctx;
  ctx.session_key = key;
  return ctx;
}

std::vector<double> scores(SessionAffinityScorer& scorer, const RouteContext& ctx,
                           Eligible eligible) {
  LoadsFixture loads(kCandidates);
  std::vector<double> out(kCandidates, -1);
  scorer.score(ctx, loads.view(), eligible, out);
  return out;
}

std::vector<double> scores(SessionAffinityScorer& scorer, const RouteContext& ctx) {
  return scores(scorer, ctx, [](size_t) { return true; });
}

// `count` distinct session keys that all live in shard `shard`.
std::vector<std::string> keys_in_shard(size_t shard, size_t count, std::string_view prefix) {
  std::vector<std::string> keys;
  for (size_t i = 0; keys.size() < count; ++i) {
    std::string key = std::string(prefix) + std::to_string(i);
    if (SessionAffinityScorer::shard_of(key) == shard) keys.push_back(std::move(key));
  }
  return keys;
}

TEST(SessionAffinityScorerTest, OneForTheLastServerZeroForOthers) {
  ManualClock clock;
  SessionAffinityScorer scorer(clock);
  const auto ctx = with_session("user-1");
  EXPECT_EQ(scores(scorer, ctx), std::vector<double>({0, 0, 0, 0})) << "unknown session";
  scorer.observe(2, ctx);
  EXPECT_EQ(scores(scorer, ctx), std::vector<double>({0, 0, 1, 0}));
  // Served elsewhere later: the affinity follows the last server.
  scorer.observe(1, ctx);
  EXPECT_EQ(scores(scorer, ctx), std::vector<double>({0, 1, 0, 0}));
  EXPECT_EQ(scores(scorer, with_session("user-2")), std::vector<double>({0, 0, 0, 0}));
}

TEST(SessionAffinityScorerTest, NoSessionIsNeutralAndNotRecorded) {
  ManualClock clock;
  SessionAffinityScorer scorer(clock);
  scorer.observe(1, RouteContext{});
  EXPECT_EQ(scorer.size(), 0u);
  EXPECT_EQ(scores(scorer, RouteContext{}), std::vector<double>({0, 0, 0, 0}));
}

TEST(SessionAffinityScorerTest, IneligibleOwnerLeavesAllNeutral) {
  ManualClock clock;
  SessionAffinityScorer scorer(clock);
  const auto ctx = with_session("user-1");
  scorer.observe(3, ctx);
  EXPECT_EQ(scores(scorer, ctx, [](size_t i) { return i != 3; }),
            std::vector<double>({0, 0, 0, 0}));
  // Still remembered for the next request that may use candidate 3.
  EXPECT_EQ(scorer.lookup("user-1"), 3u);
}

TEST(SessionAffinityScorerTest, ExpiresThreeHundredSecondsAfterLastServed) {
  struct Case {
    seconds age;
    bool sticky;
  };
  const Case cases[] = {{seconds(0), true},
                        {seconds(299), true},
                        {seconds(300), true},
                        {seconds(301), false},
                        {seconds(3600), false}};
  for (const Case& c : cases) {
    ManualClock clock;
    SessionAffinityScorer scorer(clock);
    scorer.observe(2, with_session("user-1"));
    clock.advance(c.age);
    EXPECT_EQ(scorer.lookup("user-1").has_value(), c.sticky) << c.age.count() << " s";
    // An expired entry is dropped, not kept neutral.
    EXPECT_EQ(scorer.size(), c.sticky ? 1u : 0u) << c.age.count() << " s";
  }
}

TEST(SessionAffinityScorerTest, ServingRefreshesTheTtlButScoringDoesNot) {
  ManualClock clock;
  SessionAffinityScorer scorer(clock);
  const auto ctx = with_session("user-1");
  scorer.observe(0, ctx);
  clock.advance(seconds(200));
  EXPECT_EQ(scorer.lookup("user-1"), 0u);  // a pick alone...
  clock.advance(seconds(101));
  EXPECT_EQ(scorer.lookup("user-1"), std::nullopt);  // ...does not extend the session

  scorer.observe(0, ctx);
  clock.advance(seconds(200));
  scorer.observe(0, ctx);  // served again: 300 s from now
  clock.advance(seconds(200));
  EXPECT_EQ(scorer.lookup("user-1"), 0u);
}

TEST(SessionAffinityScorerTest, FullShardEvictsItsLeastRecentlyServed) {
  // Capacity 32 over 16 shards: 2 sessions per shard. Three sessions of one shard: a and b fill
  // it, a is served again (b is now least recent), then c evicts b.
  ManualClock clock;
  SessionAffinityScorer scorer(clock, 32);
  const auto keys = keys_in_shard(5, 3, "s-");
  const auto a = with_session(keys[0]);
  const auto b = with_session(keys[1]);
  const auto c = with_session(keys[2]);
  scorer.observe(0, a);
  scorer.observe(1, b);
  scorer.observe(2, a);
  scorer.observe(3, c);
  EXPECT_EQ(scorer.lookup(keys[0]), 2u);
  EXPECT_EQ(scorer.lookup(keys[1]), std::nullopt);
  EXPECT_EQ(scorer.lookup(keys[2]), 3u);
  EXPECT_EQ(scorer.size(), 2u);
}

TEST(SessionAffinityScorerTest, DefaultCapacityHoldsOneHundredThousandSessions) {
  // 6,250 sessions in each of the 16 shards: exactly 100,000, all remembered. The 100,001st
  // evicts the least recently served session of its own shard and nothing else.
  ManualClock clock;
  SessionAffinityScorer scorer(clock);
  const size_t per_shard = SessionAffinityScorer::kCapacity / SessionAffinityScorer::kShards;
  // keys[s]: per_shard session keys of shard s, and one more for shard 0.
  std::vector<std::vector<std::string>> keys(SessionAffinityScorer::kShards);
  size_t filled = 0;
  for (size_t i = 0; filled < SessionAffinityScorer::kShards; ++i) {
    std::string key = "session-" + std::to_string(i);
    auto& shard = keys[SessionAffinityScorer::shard_of(key)];
    const size_t want = &shard == &keys[0] ? per_shard + 1 : per_shard;
    if (shard.size() == want) continue;
    shard.push_back(std::move(key));
    if (shard.size() == want) ++filled;
  }
  // Shard 0 last: the session served longest ago is in shard 15, so evicting shard 0's oldest
  // shows the LRU is per shard.
  for (size_t s = SessionAffinityScorer::kShards; s-- > 0;) {
    for (size_t k = 0; k < per_shard; ++k) {
      scorer.observe(k % kCandidates, with_session(keys[s][k]));
    }
  }
  ASSERT_EQ(scorer.size(), SessionAffinityScorer::kCapacity);

  scorer.observe(1, with_session(keys[0][per_shard]));
  EXPECT_EQ(scorer.size(), SessionAffinityScorer::kCapacity);
  EXPECT_EQ(scorer.lookup(keys[0][0]), std::nullopt) << "the least recently served is evicted";
  EXPECT_EQ(scorer.lookup(keys[0][per_shard]), 1u);
  for (size_t s = 0; s < SessionAffinityScorer::kShards; ++s) {
    for (size_t k = s == 0 ? 1 : 0; k < per_shard; ++k) {
      ASSERT_EQ(scorer.lookup(keys[s][k]), k % kCandidates) << "shard " << s << " session " << k;
    }
  }
}

}  // namespace
}  // namespace rolter
