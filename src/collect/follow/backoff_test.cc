#include "collect/follow/backoff.h"

#include <gtest/gtest.h>

#include <vector>

namespace rolter {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// Always the same draw: all ones is the top of [0, ceiling), zero its bottom.
class FixedRandom final : public Random {
 public:
  explicit FixedRandom(uint64_t value) : value_(value) {}
  uint64_t next_u64() override { return value_; }

 private:
  uint64_t value_;
};

// The ceiling doubles from min to max and stays there; reset() starts over.
TEST(BackoffTest, CeilingDoublesUpToMaxAndResets) {
  FixedRandom top(~uint64_t{0});
  Backoff backoff(milliseconds(250), milliseconds(10000), top);
  const std::vector<int64_t> ceilings_ms = {250, 500, 1000, 2000, 4000, 8000, 10000, 10000};
  for (size_t i = 0; i < ceilings_ms.size(); ++i) {
    EXPECT_EQ(backoff.ceiling(), milliseconds(ceilings_ms[i])) << "failure " << i;
    const microseconds wait = backoff.next();
    // The top draw is just under the ceiling.
    EXPECT_LE(wait, milliseconds(ceilings_ms[i])) << "failure " << i;
    EXPECT_GE(wait, milliseconds(ceilings_ms[i]) - microseconds(1)) << "failure " << i;
  }
  EXPECT_EQ(backoff.failures(), ceilings_ms.size());
  backoff.reset();
  EXPECT_EQ(backoff.failures(), 0u);
  EXPECT_EQ(backoff.ceiling(), milliseconds(250));
}

TEST(BackoffTest, FullJitterSpansZeroToCeiling) {
  FixedRandom bottom(0);
  Backoff low(milliseconds(250), milliseconds(10000), bottom);
  EXPECT_EQ(low.next(), microseconds(0));

  FixedRandom middle(uint64_t{1} << 63);  // uniform_double() = 0.5
  Backoff mid(milliseconds(250), milliseconds(10000), middle);
  EXPECT_EQ(mid.next(), microseconds(125000));
  EXPECT_EQ(mid.next(), microseconds(250000));

  SeededRandom seeded(7);
  Backoff spread(milliseconds(100), milliseconds(400), seeded);
  for (int i = 0; i < 100; ++i) {
    const microseconds ceiling = spread.ceiling();
    const microseconds wait = spread.next();
    EXPECT_GE(wait, microseconds(0));
    EXPECT_LT(wait, ceiling);
  }
}

}  // namespace
}  // namespace rolter
