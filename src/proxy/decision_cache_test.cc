#include "proxy/decision_cache.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

DecisionVerdict verdict(std::string choice) {
  DecisionVerdict v;
  v.choice = choice;
  v.probabilities = {{std::move(choice), 1.0}};
  v.confidence = 0.9;
  return v;
}

TEST(DecisionCache, FreshFor60SecondsPerRouteAndKey) {
  ManualClock clock;
  DecisionCache cache(clock);
  cache.put("r", "s1", verdict("big"));
  ASSERT_TRUE(cache.find("r", "s1"));
  EXPECT_EQ(cache.find("r", "s1")->choice, "big");
  EXPECT_FALSE(cache.find("r", "s2")) << "another session";
  EXPECT_FALSE(cache.find("other", "s1")) << "another route";
  clock.advance(DecisionCache::kTtl - std::chrono::milliseconds(1));
  EXPECT_TRUE(cache.find("r", "s1"));
  clock.advance(std::chrono::milliseconds(1));
  EXPECT_FALSE(cache.find("r", "s1")) << "60 s after it was put";
}

// A session key longer than kMaxStoredKeyBytes is kept as a digest: still found by the same key,
// never by another long key that shares its first bytes, and distinct from a short key.
TEST(DecisionCache, LongKeysAreDigestedButStillDistinct) {
  ManualClock clock;
  DecisionCache cache(clock);
  const std::string long_a(DecisionCache::kMaxStoredKeyBytes + 1000, 'a');
  std::string long_b = long_a;
  long_b.back() = 'b';
  const std::string at_bound(DecisionCache::kMaxStoredKeyBytes, 'a');
  cache.put("r", long_a, verdict("big"));
  cache.put("r", at_bound, verdict("small"));
  ASSERT_TRUE(cache.find("r", long_a));
  EXPECT_EQ(cache.find("r", long_a)->choice, "big");
  EXPECT_FALSE(cache.find("r", long_b)) << "differs only in its last byte";
  ASSERT_TRUE(cache.find("r", at_bound));
  EXPECT_EQ(cache.find("r", at_bound)->choice, "small");
  EXPECT_FALSE(cache.find("other", long_a));
}

TEST(DecisionCache, PutRefreshesAndReplaces) {
  ManualClock clock;
  DecisionCache cache(clock);
  cache.put("r", "s", verdict("a"));
  clock.advance(std::chrono::seconds(50));
  cache.put("r", "s", verdict("b"));
  clock.advance(std::chrono::seconds(50));
  ASSERT_TRUE(cache.find("r", "s"));
  EXPECT_EQ(cache.find("r", "s")->choice, "b");
  EXPECT_EQ(cache.size(), 1u);
}

TEST(DecisionCache, NoKeyNoCaching) {
  ManualClock clock;
  DecisionCache cache(clock);
  cache.put("r", "", verdict("a"));
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_FALSE(cache.find("r", ""));
}

TEST(DecisionCache, BoundedExpiredFirstThenOldest) {
  ManualClock clock;
  DecisionCache cache(clock, 3);
  cache.put("r", "old", verdict("a"));
  clock.advance(DecisionCache::kTtl);  // "old" expires
  cache.put("r", "k1", verdict("a"));
  cache.put("r", "k2", verdict("a"));
  cache.put("r", "k3", verdict("a"));  // full: the expired one goes first
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_TRUE(cache.find("r", "k1"));
  cache.put("r", "k4", verdict("a"));  // full, none expired: the oldest (k1) goes
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_FALSE(cache.find("r", "k1"));
  EXPECT_TRUE(cache.find("r", "k2"));
  EXPECT_TRUE(cache.find("r", "k4"));
  // A key route pair cannot be forged by moving bytes between route and key.
  cache.put("ab", "c", verdict("x"));
  EXPECT_FALSE(cache.find("a", "bc"));
}

}  // namespace
}  // namespace rolter
