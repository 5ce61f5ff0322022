#include "bench/block_text.h"

#include <gtest/gtest.h>

#include "bench/synthetic.h"
#include "tokenizer/tokenizer.h"

namespace rolter::bench {
namespace {

TraceRequest request(std::vector<uint64_t> ids, uint32_t input_length) {
  TraceRequest r;
  r.hash_ids = std::move(ids);
  r.input_length = input_length;
  return r;
}

TEST(BlockTextTest, ExpansionIsDeterministicAndExactLength) {
  const TraceRequest r = request({7, 8, 9}, 1100);
  std::string a, b;
  std::vector<uint32_t> ta, tb;
  expand_prompt(r, &a, &ta);
  expand_prompt(r, &b, &tb);
  EXPECT_EQ(a, b);
  EXPECT_EQ(ta, tb);
  EXPECT_EQ(ta.size(), 1100u);
  EXPECT_EQ(tokenizer::count_tokens(a), 1100u);
}

TEST(BlockTextTest, TokensAreWhatTheTokenizerReads) {
  std::string text;
  std::vector<uint32_t> tokens, read;
  expand_prompt(request({1, 2}, 700), &text, &tokens);
  tokenizer::tokenize(text, read);
  EXPECT_EQ(tokens, read);
  EXPECT_EQ(block_token(2, 3), tokenizer::token_id(block_word(2, 3)));
}

TEST(BlockTextTest, SharedIdsGiveSharedTokenPrefixes) {
  std::vector<uint32_t> a, b;
  expand_prompt(request({1, 2, 3}, 1536), nullptr, &a);
  expand_prompt(request({1, 2, 4}, 1300), nullptr, &b);
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + 1024, b.begin()));
  EXPECT_NE(std::vector<uint32_t>(a.begin() + 1024, a.begin() + 1040),
            std::vector<uint32_t>(b.begin() + 1024, b.begin() + 1040));
  // A truncated last block is a prefix of the full one.
  std::vector<uint32_t> c;
  expand_prompt(request({1, 2, 3}, 1100), nullptr, &c);
  EXPECT_TRUE(std::equal(c.begin(), c.end(), a.begin()));
}

TEST(BlockTextTest, BlocksAre512DistinctLookingWords) {
  std::vector<uint32_t> t;
  expand_prompt(request({42}, 512), nullptr, &t);
  std::sort(t.begin(), t.end());
  // Drawn from an 8192-word vocabulary: repeats happen, but a block is far from constant.
  EXPECT_GT(std::unique(t.begin(), t.end()) - t.begin(), 400);
}

TEST(SyntheticTest, TurnsExtendTheirSessionsPrefix) {
  auto trace = generate_synthetic({.sessions = 3, .turns = 3, .system_prompts = 1, .seed = 5});
  ASSERT_EQ(trace.size(), 9u);
  EXPECT_TRUE(std::is_sorted(trace.begin(), trace.end(), [](const auto& a, const auto& b) {
    return a.timestamp_ms < b.timestamp_ms;
  }));
  std::map<std::string, std::vector<const TraceRequest*>> by_session;
  for (const auto& r : trace) by_session[r.session].push_back(&r);
  ASSERT_EQ(by_session.size(), 3u);
  for (const auto& [name, turns] : by_session) {
    for (size_t t = 1; t < turns.size(); ++t) {
      const auto& prev = turns[t - 1]->hash_ids;
      EXPECT_TRUE(std::equal(prev.begin(), prev.end(), turns[t]->hash_ids.begin()));
    }
  }
  EXPECT_EQ(generate_synthetic({.sessions = 3, .turns = 3, .seed = 5})[4].hash_ids,
            generate_synthetic({.sessions = 3, .turns = 3, .seed = 5})[4].hash_ids);
}

}  // namespace
}  // namespace rolter::bench
