#include "flow/priority.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

TEST(PriorityTest, HeaderClampedThenDefaultsInOrder) {
  struct Case {
    const char* name;
    const char* header;
    PriorityDefaults defaults;
    uint8_t band;
  };
  const Case cases[] = {
      {"nothing set", "", {}, 4},
      {"header", "6", {}, 6},
      {"header with spaces", " 2 ", {}, 2},
      {"header clamped to the key's ceiling", "7", {.max_priority = 5}, 5},
      {"header under the ceiling", "3", {.max_priority = 5, .key = 1}, 3},
      {"key default", "", {.key = 1, .route = 6}, 1},
      {"route default", "", {.route = 6}, 6},
      {"bad header falls back", "9", {.route = 2}, 2},
      {"non-number falls back", "high", {.key = 0}, 0},
      {"two digits falls back", "07", {}, 4},
  };
  for (const Case& c : cases) EXPECT_EQ(priority_band(c.header, c.defaults), c.band) << c.name;
}

}  // namespace
}  // namespace rolter
