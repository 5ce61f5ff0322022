#include "balance/strategies/consistent_hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

constexpr size_t kCandidates = 10;
constexpr int kKeys = 10000;

RouteContext session(const std::string& key) {
  RouteContext ctx;
  ctx.session_key = key;
  return ctx;
}

std::string key_name(int k) { return "session-" + std::to_string(k); }

TEST(ConsistentHashTest, RemovingACandidateMovesOnlyItsKeys) {
  const auto all = make_candidates(kCandidates);
  constexpr size_t kRemoved = 3;
  std::vector<CandidateSpec> rest = all;
  rest.erase(rest.begin() + kRemoved);
  ConsistentHashBalancer full(all);
  ConsistentHashBalancer reduced(rest);
  LoadsFixture full_loads(all.size());
  LoadsFixture reduced_loads(rest.size());

  int moved = 0;
  for (int k = 0; k < kKeys; ++k) {
    const std::string key = key_name(k);
    const size_t before = *full.pick(session(key), full_loads.view());
    const size_t after = *reduced.pick(session(key), reduced_loads.view());
    if (all[before].identity != rest[after].identity) {
      ++moved;
      EXPECT_EQ(before, kRemoved) << key << " moved although its owner stayed";
    } else {
      EXPECT_NE(before, kRemoved);
    }
  }
  // The removed candidate owned roughly a tenth of the keys; all of those (and only those) moved.
  EXPECT_GT(moved, kKeys / 20);
  EXPECT_LT(moved, kKeys / 5);
}

TEST(ConsistentHashTest, IneligibleOwnerWalksToTheNextEligible) {
  // Walking clockwise past an ineligible owner lands where the key would go if that owner were
  // removed from the ring.
  const auto all = make_candidates(kCandidates);
  ConsistentHashBalancer lb(all);
  LoadsFixture loads(all.size());
  for (size_t excluded = 0; excluded < kCandidates; ++excluded) {
    std::vector<CandidateSpec> rest = all;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(excluded));
    ConsistentHashBalancer without(rest);
    LoadsFixture rest_loads(rest.size());
    for (int k = 0; k < 1000; ++k) {
      const std::string key = key_name(k);  // session_key is a view: the key must outlive ctx
      const RouteContext ctx = session(key);
      const auto idx = lb.pick_eligible(ctx, loads.view(), [&](size_t c) { return c != excluded; });
      ASSERT_TRUE(idx.has_value());
      EXPECT_EQ(all[*idx].identity, rest[*without.pick(ctx, rest_loads.view())].identity);
    }
  }
  EXPECT_EQ(lb.pick_eligible(session("x"), loads.view(), [](size_t) { return false; }),
            std::nullopt);
}

// Bounded loads: an owner above the ceiling passes its keys on along the ring, exactly as if it
// were ineligible, and gets them back once its load falls (SPEC §6.16).
TEST(ConsistentHashTest, OwnerAboveTheBoundedLoadPassesItsKeysOn) {
  const auto all = make_candidates(kCandidates);
  ConsistentHashBalancer lb(all);
  LoadsFixture idle(kCandidates);
  for (int k = 0; k < 300; ++k) {
    const std::string key = key_name(k);  // session_key is a view: the key must outlive ctx
    const RouteContext ctx = session(key);
    const size_t owner = *lb.pick(ctx, idle.view());
    // Every candidate 1 deep and the owner 9: 18 in flight, so only loads below
    // ceil(1.25 x 19 / 10) = 3 may take the next request.
    LoadsFixture busy(std::vector<uint32_t>(kCandidates, 1));
    busy.set(owner, 9);
    const auto moved = lb.pick(ctx, busy.view());
    const auto walked = lb.pick_eligible(ctx, idle.view(), [&](size_t c) { return c != owner; });
    ASSERT_TRUE(moved && walked);
    EXPECT_EQ(*moved, *walked) << key;
    // One deeper than the rest is already above it (11 in flight: only loads below
    // ceil(1.25 x 12 / 10) = 2); as deep as the rest, the key stays home.
    busy.set(owner, 2);
    EXPECT_NE(lb.pick(ctx, busy.view()), owner) << key;
    busy.set(owner, 1);
    EXPECT_EQ(lb.pick(ctx, busy.view()), owner) << key;
  }
}

TEST(ConsistentHashTest, SameKeySameCandidateRegardlessOfListOrder) {
  const auto all = make_candidates(kCandidates);
  std::vector<CandidateSpec> reversed(all.rbegin(), all.rend());
  ConsistentHashBalancer lb(all);
  ConsistentHashBalancer other(reversed);
  LoadsFixture loads(kCandidates);
  for (int k = 0; k < 2000; ++k) {
    const std::string key = key_name(k);  // session_key is a view: the key must outlive ctx
    const RouteContext ctx = session(key);
    const size_t first = *lb.pick(ctx, loads.view());
    EXPECT_EQ(lb.pick(ctx, loads.view()), first);
    EXPECT_EQ(lb.pick_eligible(ctx, loads.view(), [](size_t) { return true; }), first);
    EXPECT_EQ(reversed[*other.pick(ctx, loads.view())].identity, all[first].identity);
  }
}

TEST(ConsistentHashTest, KeysSpreadOverAllCandidates) {
  const auto all = make_candidates(kCandidates);
  ConsistentHashBalancer lb(all);
  LoadsFixture loads(kCandidates);
  std::vector<int> counts(kCandidates, 0);
  for (int k = 0; k < kKeys; ++k) ++counts[*lb.pick(session(key_name(k)), loads.view())];
  // 100 virtual nodes keep every share within a few tens of percent of the mean.
  for (size_t c = 0; c < kCandidates; ++c) {
    EXPECT_GT(counts[c], kKeys / static_cast<int>(kCandidates) / 2) << c;
    EXPECT_LT(counts[c], 2 * kKeys / static_cast<int>(kCandidates)) << c;
  }
}

TEST(ConsistentHashTest, KeyPrecedenceSessionThenDigestThenBody) {
  const auto all = make_candidates(kCandidates);
  ConsistentHashBalancer lb(all);
  LoadsFixture loads(kCandidates);
  int digest_differs_from_body = 0;
  for (uint64_t k = 0; k < 500; ++k) {
    const std::string key = key_name(static_cast<int>(k));
    RouteContext only_session = session(key);
    RouteContext everything = only_session;
    everything.prompt_digest = k * 7919;
    everything.body_hash = k * 104729;
    EXPECT_EQ(lb.pick(everything, loads.view()), lb.pick(only_session, loads.view()));

    RouteContext digest_and_body;
    digest_and_body.prompt_digest = everything.prompt_digest;
    digest_and_body.body_hash = everything.body_hash;
    RouteContext only_digest;
    only_digest.prompt_digest = everything.prompt_digest;
    RouteContext only_body;
    only_body.body_hash = everything.body_hash;
    EXPECT_EQ(lb.pick(digest_and_body, loads.view()), lb.pick(only_digest, loads.view()));
    digest_differs_from_body +=
        lb.pick(digest_and_body, loads.view()) != lb.pick(only_body, loads.view());
  }
  EXPECT_GT(digest_differs_from_body, 0) << "the body hash must not be what decided";
}

TEST(ConsistentHashTest, NoKeyFallsBackToRoundRobin) {
  const auto all = make_candidates(4);
  ConsistentHashBalancer lb(all);
  LoadsFixture loads(4);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(lb.pick({}, loads.view()), i % 4);
  const auto idx = lb.pick_eligible({}, loads.view(), [](size_t c) { return c == 2; });
  EXPECT_EQ(idx, 2u);
}

}  // namespace
}  // namespace rolter
