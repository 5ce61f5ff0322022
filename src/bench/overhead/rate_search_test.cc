#include "bench/overhead/rate_search.h"

#include <gtest/gtest.h>

namespace rolter::bench::overhead {
namespace {

// A fake server: p99 stays at 1 ms up to `capacity` req/s, then explodes.
ProbeFn server_with_capacity(double capacity, std::vector<double>* asked = nullptr) {
  return [=](double rps) {
    if (asked) asked->push_back(rps);
    ProbeOutcome o;
    o.requests = static_cast<uint64_t>(rps);
    o.p99_ms = rps <= capacity ? 1.0 : 50.0;
    return o;
  };
}

TEST(RateSearchTest, StepsUpThenBisectsToWithinPrecision) {
  RateSearchOptions o;
  o.start_rps = 1000;
  o.growth = 2;
  o.precision = 0.05;
  o.max_probes = 20;
  o.p99_bound_ms = 2;
  std::vector<double> asked;
  auto r = search_max_rate(o, server_with_capacity(5000, &asked));
  EXPECT_LE(r.max_rps, 5000);
  EXPECT_GE(r.max_rps, 5000 / 1.05);
  // Up: 1000, 2000, 4000 pass, 8000 fails; then bisection between 4000 and 8000.
  ASSERT_GE(asked.size(), 4u);
  EXPECT_DOUBLE_EQ(asked[0], 1000);
  EXPECT_DOUBLE_EQ(asked[3], 8000);
  EXPECT_EQ(r.probes.size(), asked.size());
  EXPECT_TRUE(r.probes[0].passed);
  EXPECT_FALSE(r.probes[3].passed);
}

TEST(RateSearchTest, StepsDownWhenTheStartFails) {
  RateSearchOptions o;
  o.start_rps = 10000;
  o.max_probes = 20;
  o.p99_bound_ms = 2;
  auto r = search_max_rate(o, server_with_capacity(900));
  EXPECT_LE(r.max_rps, 900);
  EXPECT_GE(r.max_rps, 900 / 1.05);
}

TEST(RateSearchTest, ErrorsFailAProbeWhateverTheLatency) {
  RateSearchOptions o;
  o.start_rps = 100;
  o.max_probes = 20;
  o.p99_bound_ms = 2;
  auto r = search_max_rate(o, [](double rps) {
    ProbeOutcome out;
    out.p99_ms = 0.5;
    out.errors = rps > 700 ? 1 : 0;
    return out;
  });
  EXPECT_LE(r.max_rps, 700);
  EXPECT_GE(r.max_rps, 700 / 1.05);
}

TEST(RateSearchTest, StaysWithinTheProbeBudget) {
  RateSearchOptions o;
  o.start_rps = 1000;
  o.max_probes = 3;
  o.p99_bound_ms = 2;
  auto r = search_max_rate(o, server_with_capacity(1e9));
  EXPECT_EQ(r.probes.size(), 3u);
  EXPECT_DOUBLE_EQ(r.max_rps, 4000);  // 1000, 2000, 4000 all passed
}

TEST(RateSearchTest, NothingSustainableIsZero) {
  RateSearchOptions o;
  o.start_rps = 1000;
  o.min_rps = 100;
  o.max_probes = 50;
  o.p99_bound_ms = 2;
  auto r = search_max_rate(o, server_with_capacity(10));
  EXPECT_EQ(r.max_rps, 0);
  EXPECT_LE(r.probes.size(), 5u);  // 1000, 500, 250, 125, then below the floor
}

TEST(RateSearchTest, CeilingStopsTheWalkUp) {
  RateSearchOptions o;
  o.start_rps = 1000;
  o.max_rps = 3000;
  o.max_probes = 20;
  o.p99_bound_ms = 2;
  auto r = search_max_rate(o, server_with_capacity(1e9));
  EXPECT_DOUBLE_EQ(r.max_rps, 3000);
  EXPECT_EQ(r.probes.size(), 3u);  // 1000, 2000, 3000
}

}  // namespace
}  // namespace rolter::bench::overhead
