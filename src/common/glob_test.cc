#include "common/glob.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

TEST(Glob, LiteralsAndStars) {
  EXPECT_TRUE(glob_match("qwen3", "qwen3"));
  EXPECT_FALSE(glob_match("qwen3", "qwen3-8b"));
  EXPECT_TRUE(glob_match("fleet/*", "fleet/Qwen/Qwen3-8B"));
  EXPECT_FALSE(glob_match("fleet/*", "fleetx/a"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*-8b", "qwen3-8b"));
  EXPECT_TRUE(glob_match("a*b*c", "axxbyyc"));
  EXPECT_FALSE(glob_match("a*b*c", "axxbyy"));
  EXPECT_FALSE(glob_match("", "a"));
}

}  // namespace
}  // namespace rolter
