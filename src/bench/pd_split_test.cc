#include "bench/pd_split.h"

#include <gtest/gtest.h>

namespace rolter::bench {
namespace {

TEST(PdSplitTest, GoodForms) {
  struct Case {
    const char* text;
    size_t engines;
    std::vector<PdSplit> want;
  };
  const Case cases[] = {
      {"2:6", 8, {{2, 6}}},
      {"1:1", 2, {{1, 1}}},
      {"2:6,3:5", 8, {{2, 6}, {3, 5}}},
      {"", 8, {}},
  };
  for (const Case& c : cases) {
    auto got = parse_pd_list(c.text, c.engines);
    ASSERT_TRUE(got) << c.text << ": " << got.error();
    EXPECT_EQ(*got, c.want) << c.text;
  }
}

// Each bad form is refused with a message that says what is wrong.
TEST(PdSplitTest, BadFormsSayWhy) {
  struct Case {
    const char* text;
    size_t engines;
    const char* says;
  };
  const Case cases[] = {
      {"2", 8, "expected P:D"},
      {"0:8", 8, "at least one prefill and one decode engine"},
      {"8:0", 8, "at least one prefill and one decode engine"},
      {"2:6", 4, "P + D = 8 but --engines is 4"},
      {"2:x", 8, "whole numbers"},
      {"-1:9", 8, "whole numbers"},
      {"2:6,", 8, "expected P:D"},
      {"2:6,2:6", 8, "listed twice"},
      {"2:6,3:6", 8, "P + D = 9"},
  };
  for (const Case& c : cases) {
    auto got = parse_pd_list(c.text, c.engines);
    ASSERT_FALSE(got) << c.text;
    EXPECT_NE(got.error().find(c.says), std::string::npos) << c.text << ": " << got.error();
  }
}

TEST(PdSplitTest, Label) {
  EXPECT_EQ(pd_label({2, 6}, "cache_aware"), "pd 2:6 (cache_aware/least load)");
}

}  // namespace
}  // namespace rolter::bench
