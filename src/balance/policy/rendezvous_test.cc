#include "balance/policy/rendezvous.h"

#include <gtest/gtest.h>

#include <set>

#include <algorithm>
#include <string>
#include <vector>

#include "balance/policy/policy_factory.h"
#include "balance/policy/policy_settings.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

const auto kAll = [](size_t) { return true; };

std::vector<double> vote(RendezvousPlugin& plugin, std::string_view key, size_t n,
                         Eligible eligible) {
  RouteContext ctx;
  ctx.policy_session_key = key;
  LoadsFixture loads(n);
  std::vector<double> out(n, -1);
  EXPECT_EQ(plugin.vote(ctx, loads.view(), eligible, out), 1.0);
  return out;
}

// The candidate a key's session lives on: the one session_affinity scores 1.
std::string owner(RendezvousPlugin& plugin, const std::vector<CandidateSpec>& candidates,
                  std::string_view key) {
  const auto scores = vote(plugin, key, candidates.size(), kAll);
  const auto top = std::max_element(scores.begin(), scores.end()) - scores.begin();
  return candidates[static_cast<size_t>(top)].identity;
}

TEST(RendezvousPluginTest, AbstainsWithoutASessionKey) {
  const auto candidates = make_candidates(3);
  RendezvousPlugin plugin(candidates);
  LoadsFixture loads(3);
  std::vector<double> out(3);
  EXPECT_EQ(plugin.vote({}, loads.view(), kAll, out), 0.0);
}

TEST(RendezvousPluginTest, RankKScoresTwoToTheMinusK) {
  const auto candidates = make_candidates(5);
  RendezvousPlugin plugin(candidates);
  for (std::string key : {"a", "session-42", "0f1e2d3c"}) {
    auto scores = vote(plugin, key, 5, kAll);
    std::sort(scores.begin(), scores.end(), std::greater<>());
    EXPECT_EQ(scores, (std::vector<double>{1, 0.5, 0.25, 0.125, 0.0625})) << key;
  }
}

TEST(RendezvousPluginTest, IneligibleCandidatesAreLeftOutOfTheRanking) {
  // Removing the owner promotes everyone below it by one rank and keeps their order.
  const auto candidates = make_candidates(4);
  RendezvousPlugin plugin(candidates);
  const auto all = vote(plugin, "session-7", 4, kAll);
  const size_t top = static_cast<size_t>(std::max_element(all.begin(), all.end()) - all.begin());
  const auto rest = vote(plugin, "session-7", 4, [top](size_t i) { return i != top; });
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(rest[i], i == top ? 0.0 : all[i] * 2) << i;
  }
}

TEST(RendezvousPluginTest, RendezvousWeightIsPinned) {
  // xxh3-64 of the key seeded with xxh3-64 of the identity: the same on every machine and in every
  // process. A change here would move every session in a running fleet.
  const auto candidates = make_candidates(1);
  RendezvousPlugin plugin(candidates);
  EXPECT_EQ(plugin.rendezvous_weight("session-1", 0), 12391329319604297946ULL);
}

// A key past kMaxRankedKeyBytes ranks like its digest: still sticky, still agreed on, and keys
// that differ only at their end still spread.
TEST(RendezvousPluginTest, LongKeysRankByTheirDigest) {
  const auto candidates = make_candidates(8);
  RendezvousPlugin plugin(candidates);
  LoadsFixture loads(8);
  std::vector<double> first(8), again(8);
  std::set<size_t> owners;
  for (char last = 'a'; last <= 'p'; ++last) {
    std::string key(1 << 20, 'k');
    key.back() = last;
    RouteContext ctx;
    ctx.policy_session_key = key;
    ASSERT_EQ(plugin.vote(ctx, loads.view(), [](size_t) { return true; }, first), 1.0);
    ASSERT_EQ(plugin.vote(ctx, loads.view(), [](size_t) { return true; }, again), 1.0);
    EXPECT_EQ(first, again);
    owners.insert(std::max_element(first.begin(), first.end()) - first.begin());
  }
  EXPECT_GE(owners.size(), 4u) << "16 long keys differing in their last byte all went to "
                               << owners.size() << " owners";
}

TEST(RendezvousPluginTest, TwoGatewayNodesAgreeOnEveryKey) {
  // Two nodes build their balancers independently, one even listing the candidates in another
  // order: they send every session to the same candidate.
  const auto node_a_candidates = make_candidates(6);
  auto node_b_candidates = make_candidates(6);
  std::reverse(node_b_candidates.begin(), node_b_candidates.end());
  PolicySettings settings;
  settings.session_affinity_weight = 1;
  auto node_a = make_policy_balancer(node_a_candidates, &settings, BalancerDeps{});
  auto node_b = make_policy_balancer(node_b_candidates, &settings, BalancerDeps{});
  LoadsFixture loads(6);
  for (int k = 0; k < 2000; ++k) {
    const std::string key = "session-" + std::to_string(k);
    RouteContext ctx;
    ctx.policy_session_key = key;
    const auto a = node_a->pick(ctx, loads.view());
    const auto b = node_b->pick(ctx, loads.view());
    ASSERT_TRUE(a && b);
    EXPECT_EQ(node_a_candidates[*a].identity, node_b_candidates[*b].identity) << key;
  }
}

TEST(RendezvousPluginTest, AddingAFifthTargetMovesAboutAFifthOfSessionsAllToIt) {
  const auto five = make_candidates(5);
  const std::vector<CandidateSpec> four(five.begin(), five.begin() + 4);
  RendezvousPlugin before(four);
  RendezvousPlugin after(five);
  constexpr int kSessions = 10000;
  int moved = 0;
  for (int k = 0; k < kSessions; ++k) {
    const std::string key = "user-" + std::to_string(k * 7919);
    const std::string old_owner = owner(before, four, key);
    const std::string new_owner = owner(after, five, key);
    if (old_owner == new_owner) continue;
    ++moved;
    EXPECT_EQ(new_owner, five[4].identity) << key << " moved between old targets";
  }
  // 1/5 in expectation; the bounds leave room for the hash's spread, not for a broken ranking.
  EXPECT_GE(moved, kSessions * 15 / 100);
  EXPECT_LE(moved, kSessions * 25 / 100);
}

TEST(RendezvousPluginTest, SpreadsSessionsEvenly) {
  const auto candidates = make_candidates(4);
  RendezvousPlugin plugin(candidates);
  std::vector<int> owners(4, 0);
  constexpr int kSessions = 8000;
  for (int k = 0; k < kSessions; ++k) {
    const auto scores = vote(plugin, "s" + std::to_string(k), 4, kAll);
    ++owners[static_cast<size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin())];
  }
  for (int count : owners) {
    EXPECT_GT(count, kSessions / 4 * 85 / 100);
    EXPECT_LT(count, kSessions / 4 * 115 / 100);
  }
}

}  // namespace
}  // namespace rolter
