#include "balance/split_decider.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "balance/testing/kv_fixture.h"
#include "kv/kv_residency.h"

namespace rolter {
namespace {

RouteContext with_tokens(const std::vector<uint32_t>& tokens) {
  RouteContext ctx;
  ctx.token_ids = std::span<const uint32_t>(tokens);
  ctx.prompt_len = tokens.size() * 4;
  return ctx;
}

TEST(SplitDeciderTest, TokenCountWithoutALiveIndexAtAndAroundTheThreshold) {
  const std::array<const KvResidency*, 2> none = {nullptr, nullptr};
  for (const auto& [tokens, split] : std::vector<std::pair<size_t, bool>>{
           {511, false}, {512, true}, {513, true}, {0, false}}) {
    const auto prompt = token_run(1, tokens);
    const SplitDecision d = decide_split(with_tokens(prompt), none, 512);
    EXPECT_EQ(d.disaggregate, split) << tokens << " tokens";
    EXPECT_EQ(d.uncached_tokens, tokens);
    EXPECT_EQ(d.source, tokens == 0 ? PromptCount::kBytes : PromptCount::kTokens);
  }
}

TEST(SplitDeciderTest, TheBestDecodeCandidatesResidentPrefixIsNotCounted) {
  // 1040 tokens = 65 blocks of 16. Candidate 1 holds the first 33 blocks (528 tokens): 512 left.
  const auto prompt = token_run(100, 1040);
  std::vector<KvResidency> kv(2);
  store_blocks(kv[0], std::span<const uint32_t>(prompt).first(160), 1000);  // 10 blocks
  store_blocks(kv[1], std::span<const uint32_t>(prompt).first(528), 2000);
  const std::array<const KvResidency*, 2> both = {&kv[0], &kv[1]};
  SplitDecision d = decide_split(with_tokens(prompt), both, 512);
  EXPECT_EQ(d.source, PromptCount::kKvIndex);
  EXPECT_EQ(d.uncached_tokens, 512u);
  EXPECT_TRUE(d.disaggregate);
  // One block more resident on candidate 1: 496 left, below the threshold.
  std::vector<KvResidency> more(1);
  store_blocks(more[0], std::span<const uint32_t>(prompt).first(544), 3000);
  const std::array<const KvResidency*, 2> with_more = {&kv[0], &more[0]};
  d = decide_split(with_tokens(prompt), with_more, 512);
  EXPECT_EQ(d.uncached_tokens, 496u);
  EXPECT_FALSE(d.disaggregate);
}

TEST(SplitDeciderTest, AnIndexThatIsNotLiveCountsNothing) {
  const auto prompt = token_run(100, 1040);
  std::vector<KvResidency> kv(1);
  store_blocks(kv[0], prompt, 1000);
  kv[0].state.store(KvStreamState::kStale);
  const std::array<const KvResidency*, 1> one = {&kv[0]};
  const SplitDecision d = decide_split(with_tokens(prompt), one, 512);
  EXPECT_EQ(d.source, PromptCount::kTokens);
  EXPECT_EQ(d.uncached_tokens, 1040u);
  EXPECT_TRUE(d.disaggregate);
}

TEST(SplitDeciderTest, BytesOverFourAsTheLastResort) {
  RouteContext ctx;
  ctx.prompt_len = 2047;
  SplitDecision d = decide_split(ctx, {}, 512);
  EXPECT_EQ(d.source, PromptCount::kBytes);
  EXPECT_EQ(d.uncached_tokens, 511u);
  EXPECT_FALSE(d.disaggregate);
  ctx.prompt_len = 2048;
  d = decide_split(ctx, {}, 512);
  EXPECT_EQ(d.uncached_tokens, 512u);
  EXPECT_TRUE(d.disaggregate);
}

}  // namespace
}  // namespace rolter
