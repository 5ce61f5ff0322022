#include "tokenizer/tokenizer.h"

#include <gtest/gtest.h>

namespace rolter::tokenizer {
namespace {

TEST(Tokenizer, SplitsOnAnyWhitespace) {
  std::vector<uint32_t> ids;
  tokenize("  the\tcat\n sat  ", ids);
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[0], token_id("the"));
  EXPECT_EQ(ids[1], token_id("cat"));
  EXPECT_EQ(ids[2], token_id("sat"));
  EXPECT_EQ(count_tokens("  the\tcat\n sat  "), 3u);
}

TEST(Tokenizer, EqualTextPrefixesGiveEqualIdPrefixes) {
  std::vector<uint32_t> shorter, longer;
  tokenize("a shared system prompt", shorter);
  tokenize("a shared system prompt and then a question", longer);
  ASSERT_GT(longer.size(), shorter.size());
  EXPECT_TRUE(std::equal(shorter.begin(), shorter.end(), longer.begin()));
}

TEST(Tokenizer, IdsAreStableAcrossVersions) {
  // Recorded traces and tests rely on these exact values never changing.
  EXPECT_EQ(token_id("hello"), 298723008u);
  EXPECT_EQ(token_id("world"), 4035454663u);
  EXPECT_NE(token_id("hello"), token_id("hellp"));
  std::vector<uint32_t> ids;
  tokenize("", ids);
  EXPECT_TRUE(ids.empty());
}

}  // namespace
}  // namespace rolter::tokenizer
