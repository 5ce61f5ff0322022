#include "bench/tenants.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "bench/replay_result.h"
#include "bench/report.h"

namespace rolter::bench {
namespace {

TEST(TenantsTest, ZipfShares) {
  const auto shares = zipf_shares(3);
  ASSERT_EQ(shares.size(), 3u);
  EXPECT_NEAR(shares[0], 6.0 / 11, 1e-12);
  EXPECT_NEAR(shares[1], 3.0 / 11, 1e-12);
  EXPECT_NEAR(shares[2], 2.0 / 11, 1e-12);
  EXPECT_DOUBLE_EQ(zipf_shares(1)[0], 1.0);
}

TEST(TenantsTest, AssignmentIsDeterministicForASeed) {
  const auto shares = zipf_shares(3);
  const auto a = assign_tenants(5000, shares, 7);
  EXPECT_EQ(a, assign_tenants(5000, shares, 7));
  EXPECT_NE(a, assign_tenants(5000, shares, 8));
  // The first draws of seed 1, pinned as first computed: the same on every platform
  // (mt19937_64 is specified and the draw uses no library distribution).
  const auto first = assign_tenants(12, shares, 1);
  const std::vector<uint32_t> pinned = {0, 0, 0, 0, 0, 2, 0, 0, 1, 1, 0, 1};
  EXPECT_EQ(first, pinned);
}

// Each tenant's count matches its share within 1.5 points (about 4 standard deviations at 20,000
// draws), for several tenant counts and seeds.
TEST(TenantsTest, AssignmentMatchesShares) {
  struct Case {
    size_t tenants;
    uint64_t seed;
  };
  const Case cases[] = {{1, 1}, {2, 1}, {3, 1}, {3, 42}, {5, 9}, {8, 123}};
  constexpr size_t kRequests = 20000;
  for (const Case& c : cases) {
    const auto tenants = make_tenants(c.tenants, c.seed);
    const auto who = assign_tenants(kRequests, tenant_shares(tenants), c.seed);
    ASSERT_EQ(who.size(), kRequests);
    std::vector<size_t> counts(c.tenants);
    for (uint32_t t : who) {
      ASSERT_LT(t, c.tenants);
      ++counts[t];
    }
    for (size_t i = 0; i < c.tenants; ++i) {
      EXPECT_NEAR(static_cast<double>(counts[i]) / kRequests, tenants[i].share, 0.015)
          << c.tenants << " tenants, seed " << c.seed << ", tenant " << i;
    }
  }
}

TEST(TenantsTest, TenantsHaveBandsNamesAndDistinctKeys) {
  const auto tenants = make_tenants(4, 3);
  ASSERT_EQ(tenants.size(), 4u);
  EXPECT_EQ(tenants[0].priority, kBatchBand);
  std::set<std::string> secrets, envs;
  for (size_t i = 0; i < tenants.size(); ++i) {
    if (i > 0) {
      EXPECT_EQ(tenants[i].priority, kInteractiveBand);
    }
    EXPECT_EQ(tenants[i].name, "tenant-" + std::to_string(i));
    secrets.insert(tenants[i].secret);
    envs.insert(tenants[i].key_env);
  }
  EXPECT_EQ(secrets.size(), 4u);
  EXPECT_EQ(envs.size(), 4u);
  EXPECT_EQ(make_tenants(4, 3)[2].secret, tenants[2].secret);
}

TEST(TenantsTest, KeysAndQueueToml) {
  const auto tenants = make_tenants(2, 1);
  EXPECT_EQ(
      tenant_keys_toml(tenants),
      "[[keys]]\nname = \"tenant-0\"\nkey_env = \"ROLTER_BENCH_TENANT_0_KEY\"\npriority = 1\n\n"
      "[[keys]]\nname = \"tenant-1\"\nkey_env = \"ROLTER_BENCH_TENANT_1_KEY\"\npriority = 6\n\n");
  EXPECT_EQ(
      queue_toml(
          {.max_in_flight_per_instance = 8, .queue_max_requests = 256, .queue_max_wait_ms = 5000}),
      "[queue]\nmax_requests = 256\nmax_wait_ms = 5000\n\n");
}

// Each request's end lands in one column: served (with its TTFT), shed (429) or failed.
TEST(TenantsTest, PerTenantAggregation) {
  struct End {
    uint32_t tenant;
    bool ok;
    int status;
    double ttft_ms;
  };
  const End ends[] = {
      {0, true, 200, 10}, {0, true, 200, 30}, {0, false, 429, 0}, {0, false, 429, 0},
      {1, true, 200, 5},  {1, false, 503, 0}, {1, false, 0, 0},   {1, true, 200, 7},
      {0, false, 429, 0}, {0, true, 200, 20},
  };
  std::vector<TenantSamples> samples(3);
  for (const End& e : ends) samples[e.tenant].add(e.ok, e.status, e.ttft_ms);
  const auto tenants = make_tenants(3, 1);
  const auto r = summarize_tenants(tenants, samples);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].tenant, "tenant-0");
  EXPECT_EQ(r[0].priority, kBatchBand);
  EXPECT_EQ(r[0].sent, 6u);
  EXPECT_EQ(r[0].served, 3u);
  EXPECT_EQ(r[0].shed, 3u);
  EXPECT_EQ(r[0].errors, 0u);
  EXPECT_DOUBLE_EQ(r[0].shed_rate, 0.5);
  EXPECT_DOUBLE_EQ(r[0].ttft_p50_ms, 20);
  EXPECT_DOUBLE_EQ(r[0].ttft_p99_ms, 29.8);
  EXPECT_EQ(r[1].sent, 4u);
  EXPECT_EQ(r[1].served, 2u);
  EXPECT_EQ(r[1].shed, 0u);
  EXPECT_EQ(r[1].errors, 2u);
  EXPECT_DOUBLE_EQ(r[1].shed_rate, 0);
  EXPECT_DOUBLE_EQ(r[1].ttft_p50_ms, 6);
  EXPECT_EQ(r[2].sent, 0u);
  EXPECT_DOUBLE_EQ(r[2].shed_rate, 0);
  EXPECT_DOUBLE_EQ(r[2].share, tenants[2].share);
  for (const auto& t : r) EXPECT_EQ(t.served + t.shed + t.errors, t.sent) << t.tenant;
}

// The report carries one row per strategy and tenant, in the table and in the JSON.
TEST(TenantsTest, ReportHasPerTenantRows) {
  ReplayReport report;
  report.flow_control =
      "on (max_in_flight_per_instance 8, queue max_requests 64, max_wait_ms 5000)";
  StrategyResult s;
  s.strategy = "cache_aware";
  std::vector<TenantSamples> samples(2);
  samples[0].add(true, 200, 12);
  samples[0].add(false, 429, 0);
  samples[1].add(true, 200, 4);
  s.tenants = summarize_tenants(make_tenants(2, 1), samples);
  report.results.push_back(s);
  const std::string md = render_markdown(report);
  EXPECT_NE(md.find("| cache_aware | tenant-0 | 1 | 66.7% | 2 | 1 | 1 | 50.0% | 0 | 12.0 | 12.0 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| cache_aware | tenant-1 | 6 | 33.3% | 1 | 1 | 0 | 0.0% | 0 | 4.0 | 4.0 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- flow control: on (max_in_flight_per_instance 8"), std::string::npos);
  const std::string json = render_json(report);
  EXPECT_NE(json.find("\"tenants\""), std::string::npos);
  EXPECT_NE(json.find("\"shed_rate\": 0.5"), std::string::npos) << json;
}

}  // namespace
}  // namespace rolter::bench
