#include "balance/scorers/kv_residency.h"

#include <gtest/gtest.h>

#include <vector>

#include "balance/kv_match.h"
#include "balance/stacks.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/kv_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

struct Fleet {
  explicit Fleet(size_t n) : kv(n), candidates(make_candidates(n)) {
    for (size_t i = 0; i < n; ++i) candidates[i].kv = &kv[i];
  }
  std::vector<KvResidency> kv;
  std::vector<CandidateSpec> candidates;
};

std::vector<double> scores(Fleet& fleet, const RouteContext& ctx) {
  KvResidencyScorer scorer(fleet.candidates);
  LoadsFixture loads(fleet.candidates.size());
  std::vector<double> out(fleet.candidates.size(), -1);
  scorer.score(ctx, loads.view(), [](size_t) { return true; }, out);
  return out;
}

RouteContext with_tokens(const std::vector<uint32_t>& tokens) {
  RouteContext ctx;
  ctx.token_ids = std::span<const uint32_t>(tokens);
  return ctx;
}

// 10 full blocks of 16 plus 5 tokens: candidate 0 holds all 10, 1 the first 4, 2 the first 2 and
// 3 nothing.
TEST(KvResidencyScorerTest, LeadingFractionIsExact) {
  Fleet fleet(4);
  const auto prompt = token_run(1000, 165);
  store_blocks(fleet.kv[0], prompt, 100);
  store_blocks(fleet.kv[1], std::span(prompt).first(64), 200);
  store_blocks(fleet.kv[2], std::span(prompt).first(32), 300);
  fleet.kv[3].state.store(KvStreamState::kLive);
  const auto out = scores(fleet, with_tokens(prompt));
  EXPECT_DOUBLE_EQ(out[0], 1.0);
  EXPECT_DOUBLE_EQ(out[1], 0.4);
  EXPECT_DOUBLE_EQ(out[2], 0.2);
  EXPECT_DOUBLE_EQ(out[3], 0.0);
}

TEST(KvResidencyScorerTest, LeadingRunStopsAtTheFirstMissingBlock) {
  Fleet fleet(1);
  const auto prompt = token_run(1, 64);  // 4 blocks
  store_blocks(fleet.kv[0], prompt, 100);
  KvBatch remove;
  KvEventRecord ev;
  ev.kind = KvEventRecord::Kind::kBlockRemoved;
  ev.removed.block_hashes = {101};  // the second block
  remove.events.push_back(ev);
  fleet.kv[0].index.apply(remove, 16);
  EXPECT_DOUBLE_EQ(scores(fleet, with_tokens(prompt))[0], 0.25);
}

TEST(KvResidencyScorerTest, NeutralWithoutTokenIds) {
  Fleet fleet(2);
  const auto prompt = token_run(1, 64);
  store_blocks(fleet.kv[0], prompt, 100);
  RouteContext ctx;
  ctx.prompt = "some text";
  EXPECT_EQ(scores(fleet, ctx), (std::vector<double>{0, 0}));
  // Shorter than one block: no key to match.
  const auto short_prompt = token_run(1, 15);
  EXPECT_EQ(scores(fleet, with_tokens(short_prompt)), (std::vector<double>{0, 0}));
}

TEST(KvResidencyScorerTest, NeutralUnlessTheStreamIsLive) {
  const auto prompt = token_run(1, 64);
  for (KvStreamState state :
       {KvStreamState::kDisconnected, KvStreamState::kStale, KvStreamState::kGap}) {
    Fleet fleet(2);
    store_blocks(fleet.kv[0], prompt, 100);
    store_blocks(fleet.kv[1], prompt, 100);
    fleet.kv[0].state.store(state);
    EXPECT_EQ(scores(fleet, with_tokens(prompt)), (std::vector<double>{0, 1}))
        << static_cast<int>(state);
  }
}

TEST(KvResidencyScorerTest, NoIndexIsNeutral) {
  auto candidates = make_candidates(2);
  KvResidencyScorer scorer(candidates);
  LoadsFixture loads(2);
  const auto prompt = token_run(1, 64);
  std::vector<double> out(2, -1);
  scorer.score(with_tokens(prompt), loads.view(), [](size_t) { return true; }, out);
  EXPECT_EQ(out, (std::vector<double>{0, 0}));
}

TEST(KvResidencyScorerTest, AdapterBlocksAreKeyedApart) {
  Fleet fleet(2);
  const auto prompt = token_run(1, 64);
  store_blocks(fleet.kv[0], prompt, 100, 16, "adapter-x");
  store_blocks(fleet.kv[1], prompt, 100);
  RouteContext ctx = with_tokens(prompt);
  EXPECT_EQ(scores(fleet, ctx), (std::vector<double>{0, 1}));
  ctx.adapter = "adapter-x";
  EXPECT_EQ(scores(fleet, ctx), (std::vector<double>{1, 0}));
}

TEST(KvResidencyScorerTest, BlockSizeIsPerInstance) {
  Fleet fleet(2);
  const auto prompt = token_run(1, 64);
  store_blocks(fleet.kv[0], prompt, 100, 32);
  store_blocks(fleet.kv[1], std::span(prompt).first(16), 100, 16);
  EXPECT_EQ(scores(fleet, with_tokens(prompt)), (std::vector<double>{1, 0.25}));
}

TEST(PreciseCacheAwareTest, HeldPrefixWinsUntilLoadOutweighsIt) {
  Fleet fleet(3);
  const auto prompt = token_run(1, 160);
  store_blocks(fleet.kv[1], prompt, 100);
  fleet.kv[0].state.store(KvStreamState::kLive);
  fleet.kv[2].state.store(KvStreamState::kLive);
  auto lb = make_precise_cache_aware(fleet.candidates, BalancerDeps{});
  ASSERT_TRUE(lb.has_value()) << lb.error();
  const RouteContext ctx = with_tokens(prompt);
  // Equal loads: 1.0 + 0.25 beats 0 + 0.25.
  LoadsFixture idle(3);
  for (int k = 0; k < 20; ++k) EXPECT_EQ((*lb)->pick(ctx, idle.view()), 1u);
  // Busy holder: 1.0 + 0.25 * (1 - 8/8) = 1.0 still beats 0.25 * (1 - 0) = 0.25.
  LoadsFixture busy({0, 8, 0});
  EXPECT_EQ((*lb)->pick(ctx, busy.view()), 1u);
  // Ineligible holder: never returned.
  auto pick = (*lb)->pick_eligible(ctx, idle.view(), [](size_t i) { return i != 1; });
  ASSERT_TRUE(pick.has_value());
  EXPECT_NE(*pick, 1u);
}

TEST(PreciseCacheAwareTest, TiesGoToTheCandidateThatServedTheFewest) {
  // New conversations on an idle fleet: every total ties, and the served counts keep the shares
  // exactly even where random draws would let them drift.
  Fleet fleet(4);
  for (auto& kv : fleet.kv) kv.state.store(KvStreamState::kLive);
  auto lb = make_precise_cache_aware(fleet.candidates, BalancerDeps{});
  ASSERT_TRUE(lb.has_value()) << lb.error();
  LoadsFixture idle(4);
  std::vector<int> count(4);
  for (int k = 0; k < 400; ++k) {
    const auto prompt = token_run(static_cast<uint32_t>(k) * 1000, 64);
    const RouteContext ctx = with_tokens(prompt);
    const auto pick = (*lb)->pick(ctx, idle.view());
    ASSERT_TRUE(pick.has_value());
    ++count[*pick];
    (*lb)->observe(*pick, ctx);
  }
  EXPECT_EQ(count, (std::vector<int>{100, 100, 100, 100}));
}

TEST(KvMatchTest, UncachedTokensCountWhatTheIndexDoesNotHold) {
  Fleet fleet(2);
  const auto prompt = token_run(1, 100);  // 6 full blocks + 4
  store_blocks(fleet.kv[0], std::span(prompt).first(48), 100);
  const RouteContext ctx = with_tokens(prompt);
  RequestBlockKeys keys(ctx);
  EXPECT_DOUBLE_EQ(uncached_ktokens(ctx, &fleet.kv[0], keys), 0.052);
  EXPECT_DOUBLE_EQ(uncached_ktokens(ctx, &fleet.kv[1], keys), 0.1);
  EXPECT_DOUBLE_EQ(uncached_ktokens(ctx, nullptr, keys), 0.1);
  RouteContext text;
  text.prompt_len = 4000;
  RequestBlockKeys none(text);
  EXPECT_DOUBLE_EQ(uncached_ktokens(text, &fleet.kv[0], none), 1.0);
}

}  // namespace
}  // namespace rolter
