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


// Candidate 0 was given 6 of the last 9 requests, candidate 1 3. With equal weights the ceiling
// is 1.05 x 10 / 2 = 5.25 each, so 0 is above it. Weighted 3:1, 0's ceiling is 1.05 x 10 x 3/4 =
// 7.875 and 1's is 2.625, so 1 is above its share instead.
TEST(ClearAboveShareTest, CeilingsFollowTheWeights) {
  const std::array<uint32_t, 2> recent{6, 3};
  const auto anywhere = [](size_t) { return true; };
  std::array<char, 2> mask{1, 1};
  EXPECT_EQ(clear_above_share(mask, recent, {}, anywhere), 1u);
  EXPECT_EQ(mask, (std::array<char, 2>{0, 1}));

  mask = {1, 1};
  const std::array<double, 2> weights{3, 1};
  EXPECT_EQ(clear_above_share(mask, recent, weights, anywhere), 1u);
  EXPECT_EQ(mask, (std::array<char, 2>{1, 0}));

  mask = {1, 1};
  const std::array<double, 2> none{0, 0};
  EXPECT_EQ(clear_above_share(mask, recent, none, anywhere), 1u) << "weights summing to 0: equal";
  EXPECT_EQ(mask, (std::array<char, 2>{0, 1}));
}

// Nothing is cleared when no candidate below its ceiling loses nothing, or when one is eligible;
// an ineligible candidate neither counts nor is cleared.
TEST(ClearAboveShareTest, ClearsOnlyWhenABelowCandidateLosesNothing) {
  const std::array<uint32_t, 3> recent{6, 3, 100};
  std::array<char, 3> mask{1, 1, 0};
  EXPECT_EQ(clear_above_share(mask, recent, {}, [](size_t i) { return i == 0; }), 0u);
  EXPECT_EQ(mask, (std::array<char, 3>{1, 1, 0}));
  EXPECT_EQ(clear_above_share(mask, recent, {}, [](size_t i) { return i == 1; }), 1u);
  EXPECT_EQ(mask, (std::array<char, 3>{0, 1, 0})) << "candidate 2's count is not in the mean";
  mask = {1, 0, 0};
  EXPECT_EQ(clear_above_share(mask, recent, {}, [](size_t) { return true; }), 0u);
}

}  // namespace
}  // namespace rolter
