#include "balance/recent_shares.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>

#include "common/clock.h"

namespace rolter {
namespace {

using std::chrono::seconds;

std::array<uint32_t, 3> read(RecentShares& shares) {
  std::array<uint32_t, 3> out{};
  shares.read(out);
  return out;
}

TEST(RecentSharesTest, CountsEachCandidatesRequests) {
  ManualClock clock;
  RecentShares shares(3, clock);
  shares.add(0);
  shares.add(2);
  shares.add(2);
  shares.add(3);  // out of range: ignored
  EXPECT_EQ(read(shares), (std::array<uint32_t, 3>{1, 0, 2}));
}

TEST(RecentSharesTest, ARequestLeavesTheWindowAMinuteLater) {
  ManualClock clock;
  RecentShares shares(3, clock);
  shares.add(0);
  clock.advance(seconds(30));
  shares.add(1);
  clock.advance(seconds(29));
  EXPECT_EQ(read(shares), (std::array<uint32_t, 3>{1, 1, 0})) << "59 s: both still in";
  clock.advance(seconds(1));
  EXPECT_EQ(read(shares), (std::array<uint32_t, 3>{0, 1, 0})) << "60 s: the first one is out";
  clock.advance(seconds(30));
  EXPECT_EQ(read(shares), (std::array<uint32_t, 3>{0, 0, 0}));
}

TEST(RecentSharesTest, ALongSilenceEmptiesEveryBucket) {
  ManualClock clock;
  RecentShares shares(3, clock);
  for (int s = 0; s < 60; ++s) {
    shares.add(static_cast<size_t>(s % 3));
    clock.advance(seconds(1));
  }
  EXPECT_EQ(read(shares), (std::array<uint32_t, 3>{19, 20, 20})) << "the second-0 request left";
  clock.advance(seconds(3600));
  EXPECT_EQ(read(shares), (std::array<uint32_t, 3>{0, 0, 0}));
  shares.add(1);
  EXPECT_EQ(read(shares), (std::array<uint32_t, 3>{0, 1, 0}));
}

TEST(RecentSharesTest, ReadsIntoAShorterSpan) {
  ManualClock clock;
  RecentShares shares(3, clock);
  shares.add(0);
  shares.add(2);
  std::array<uint32_t, 1> one{};
  shares.read(one);
  EXPECT_EQ(one[0], 1u);
}

}  // namespace
}  // namespace rolter
