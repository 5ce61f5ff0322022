#include "trace/sampler.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

// A trace id whose random part (its last 7 bytes) is `random_part`.
TraceId with_random_part(uint64_t random_part) {
  TraceId id;
  id.bytes[0] = 0xff;  // the leading bytes play no part
  for (int i = 15; i >= 9; --i) {
    id.bytes[i] = static_cast<uint8_t>(random_part);
    random_part >>= 8;
  }
  return id;
}

TraceParent parent(bool sampled) {
  TraceParent p;
  p.trace_id = with_random_part(1);
  p.parent_id.bytes[0] = 1;
  p.flags = sampled ? kSampledFlag : 0;
  return p;
}

TEST(Sampler, TheParentDecides) {
  const TraceId low = with_random_part(0);  // sampled by any ratio above 0
  const TraceId high = with_random_part((uint64_t{1} << 56) - 1);
  EXPECT_TRUE(should_sample(parent(true), high, 0.0));
  EXPECT_FALSE(should_sample(parent(false), low, 1.0));
}

TEST(Sampler, WithoutAParentTheRatioDecidesByTraceId) {
  const uint64_t half = uint64_t{1} << 55;
  struct Case {
    uint64_t random_part;
    double ratio;
    bool sampled;
  };
  const Case cases[] = {
      {0, 0.0, false},
      {0, 1e-9, true},
      {(uint64_t{1} << 56) - 1, 1.0, true},
      {(uint64_t{1} << 56) - 1, 0.999999, false},
      {half - 1, 0.5, true},
      {half, 0.5, false},
      {0, -1.0, false},
      {0, 2.0, true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(should_sample(std::nullopt, with_random_part(c.random_part), c.ratio), c.sampled)
        << c.random_part << " at " << c.ratio;
  }
}

TEST(Sampler, RatioHoldsOverRandomIds) {
  SeededRandom random(11);
  int sampled = 0;
  constexpr int kIds = 20000;
  for (int i = 0; i < kIds; ++i) sampled += sampled_by_ratio(random_trace_id(random), 0.25);
  EXPECT_NEAR(sampled / double(kIds), 0.25, 0.015);
}

}  // namespace
}  // namespace rolter
