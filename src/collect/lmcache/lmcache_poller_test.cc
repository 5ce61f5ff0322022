#include "collect/lmcache/lmcache_poller.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "collect/testing/local_http_server.h"
#include "collect/testing/wait_for.h"
#include "observe/metrics.h"
#include "snapshot/snapshot_store.h"

namespace rolter {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// ---------------------------------------------------------------------------------------------
// Reading an endpoint's body.

TEST(ReadLmcacheReading, Table) {
  struct Case {
    const char* what;
    std::string body;
    bool ok;
    double occupancy;
    bool available;
  };
  const Case cases[] = {
      {"the SPEC's example", R"({"occupancy": 0.42, "cache_available": true})", true, 0.42, true},
      {"unavailable", R"({"occupancy": 0.1, "cache_available": false})", true, 0.1, false},
      {"an integer occupancy", R"({"occupancy": 1, "cache_available": true})", true, 1, true},
      {"out of range is read, the scorer judges it", R"({"occupancy": 1.7, "cache_available":
       true})",
       true, 1.7, true},
      {"other members ignored", R"({"cache_available": true, "x": [1, {}], "occupancy": 0})", true,
       0, true},
      {"occupancy missing", R"({"cache_available": true})", false, 0, false},
      {"cache_available missing", R"({"occupancy": 0.5})", false, 0, false},
      {"occupancy a string", R"({"occupancy": "0.5", "cache_available": true})", false, 0, false},
      {"occupancy null", R"({"occupancy": null, "cache_available": true})", false, 0, false},
      {"cache_available a number", R"({"occupancy": 0.5, "cache_available": 1})", false, 0, false},
      {"occupancy overflows to infinity", R"({"occupancy": 1e400, "cache_available": true})", false,
       0, false},
      {"an array", R"([0.5, true])", false, 0, false},
      {"a bare number", "0.5", false, 0, false},
      {"truncated", R"({"occupancy": 0.5, "cache_avail)", false, 0, false},
      {"an HTML error page", "<html><body>502 Bad Gateway</body></html>", false, 0, false},
      {"empty", "", false, 0, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const auto reading = read_lmcache_reading(c.body);
    ASSERT_EQ(reading.has_value(), c.ok);
    if (!c.ok) continue;
    EXPECT_EQ(reading->occupancy, c.occupancy);
    EXPECT_EQ(reading->cache_available, c.available);
  }
}

TEST(ReadLmcacheReading, DeepNestingIsRejectedWithoutCrashing) {
  const std::string deep = std::string(50000, '[') + std::string(50000, ']');
  EXPECT_FALSE(read_lmcache_reading(deep).has_value());
}

TEST(PollTiming, ForConfig) {
  const struct {
    uint32_t refresh, stale;
    int64_t timeout_ms;
  } cases[] = {
      {1, 1, 1000},
      {2, 10, 1000},  // the defaults
      {30, 5, 1000},  // the timeout's ceiling; stale_secs is taken as configured
  };
  for (const auto& c : cases) {
    const auto t = lmcache_poll_timing(c.refresh, c.stale);
    EXPECT_EQ(t.interval, seconds(c.refresh));
    EXPECT_EQ(t.timeout, milliseconds(c.timeout_ms)) << c.refresh;
    EXPECT_EQ(t.stale_after, seconds(c.stale)) << c.refresh;
  }
}

// ---------------------------------------------------------------------------------------------
// The decision logic, on simulated time.

class PolledCacheTest : public ::testing::Test {
 protected:
  static constexpr seconds kRefresh{2};
  static constexpr seconds kStale{10};

  void poll_ok(double occupancy, bool available = true) {
    ASSERT_TRUE(cache_.due());
    cache_.begin();
    cache_.succeed(LmcacheReading{.occupancy = occupancy, .cache_available = available});
  }
  void poll_failed() {
    ASSERT_TRUE(cache_.due());
    cache_.begin();
    cache_.fail();
  }

  ManualClock clock_;
  LmcacheSignal a_;
  LmcacheSignal b_;
  PolledCache cache_{clock_, lmcache_poll_timing(2, 10)};
};

TEST_F(PolledCacheTest, GoodPollIsFreshAndUsable) {
  cache_.set_instances({&a_});
  EXPECT_EQ(a_.usable_occupancy(), std::nullopt) << "never polled";
  poll_ok(0.42);
  EXPECT_TRUE(a_.fresh);
  EXPECT_EQ(a_.usable_occupancy(), 0.42);
  EXPECT_TRUE(cache_.fresh());
}

TEST_F(PolledCacheTest, UnavailableCacheIsFreshButNotUsable) {
  cache_.set_instances({&a_});
  poll_ok(0.3, /*available=*/false);
  EXPECT_TRUE(a_.fresh);
  EXPECT_FALSE(a_.available);
  EXPECT_EQ(a_.usable_occupancy(), std::nullopt);
  clock_.advance(kRefresh);
  poll_ok(0.3, /*available=*/true);
  EXPECT_EQ(a_.usable_occupancy(), 0.3);
}

TEST_F(PolledCacheTest, FailedPollIsNotUsableAtOnce) {
  cache_.set_instances({&a_});
  poll_ok(0.5);
  clock_.advance(kRefresh);
  poll_failed();
  EXPECT_FALSE(a_.fresh);
  EXPECT_EQ(a_.usable_occupancy(), std::nullopt);
  EXPECT_FALSE(cache_.fresh());
}

TEST_F(PolledCacheTest, StaleAfterStaleSecsWithoutAGoodPoll) {
  cache_.set_instances({&a_});
  poll_ok(0.5);
  // A poll begins and hangs: nothing is due meanwhile, and no answer comes.
  clock_.advance(kRefresh);
  cache_.begin();
  clock_.advance(kStale - kRefresh - milliseconds(1));
  EXPECT_FALSE(cache_.check_stale());
  EXPECT_EQ(a_.usable_occupancy(), 0.5) << "1 ms before the bound";
  EXPECT_FALSE(cache_.due()) << "one poll at a time";
  clock_.advance(milliseconds(1));
  EXPECT_TRUE(cache_.check_stale());
  EXPECT_EQ(a_.usable_occupancy(), std::nullopt);
  EXPECT_FALSE(cache_.check_stale()) << "reported once";
}

TEST_F(PolledCacheTest, RecoveryMakesItUsableAgain) {
  cache_.set_instances({&a_});
  poll_failed();
  clock_.advance(kRefresh);
  poll_failed();
  clock_.advance(kRefresh);
  poll_ok(0.25);
  EXPECT_EQ(a_.usable_occupancy(), 0.25);
  // Stale, then recovered too.
  clock_.advance(kStale);
  ASSERT_TRUE(cache_.check_stale());
  poll_ok(0.75);
  EXPECT_EQ(a_.usable_occupancy(), 0.75);
}

TEST_F(PolledCacheTest, DueEveryRefreshOneAtATime) {
  EXPECT_TRUE(cache_.due()) << "the first poll at once";
  cache_.begin();
  EXPECT_FALSE(cache_.due());
  clock_.advance(kRefresh * 2);
  EXPECT_FALSE(cache_.due()) << "still in flight";
  cache_.fail();
  EXPECT_TRUE(cache_.due()) << "the interval counts from the last begin";
  cache_.begin();
  cache_.fail();
  clock_.advance(kRefresh - milliseconds(1));
  EXPECT_FALSE(cache_.due());
  clock_.advance(milliseconds(1));
  EXPECT_TRUE(cache_.due());
}

TEST_F(PolledCacheTest, OnePollServesEveryInstanceThatNamesTheEndpoint) {
  cache_.set_instances({&a_, &b_});
  poll_ok(0.6);
  EXPECT_EQ(a_.usable_occupancy(), 0.6);
  EXPECT_EQ(b_.usable_occupancy(), 0.6);
}

TEST_F(PolledCacheTest, InstanceThatLeavesIsClearedAndNotRevivedByAPollInFlight) {
  cache_.set_instances({&a_, &b_});
  poll_ok(0.2);
  clock_.advance(kRefresh);
  cache_.begin();
  cache_.set_instances({&a_});  // a reload drops b meanwhile
  EXPECT_FALSE(b_.fresh) << "cleared at once";
  cache_.succeed(LmcacheReading{.occupancy = 0.4, .cache_available = true});
  EXPECT_EQ(a_.usable_occupancy(), 0.4);
  EXPECT_FALSE(b_.fresh);
  EXPECT_EQ(b_.occupancy, 0.2) << "untouched";
}

TEST_F(PolledCacheTest, RetireClearsAndLaterOutcomesChangeNothing) {
  cache_.set_instances({&a_});
  poll_ok(0.3);
  clock_.advance(kRefresh);
  cache_.begin();
  cache_.retire();
  EXPECT_FALSE(a_.fresh);
  EXPECT_EQ(cache_.instance_count(), 0u);
  EXPECT_FALSE(cache_.succeed(LmcacheReading{.occupancy = 0.9, .cache_available = true}));
  EXPECT_FALSE(a_.fresh);
  EXPECT_EQ(a_.occupancy, 0.3);
  EXPECT_FALSE(cache_.fail());
}

TEST_F(PolledCacheTest, DestructionClearsItsInstances) {
  LmcacheSignal c;
  {
    PolledCache cache(clock_, lmcache_poll_timing(1, 5));
    cache.set_instances({&c});
    cache.begin();
    cache.succeed(LmcacheReading{.occupancy = 0.5, .cache_available = true});
    ASSERT_TRUE(c.fresh);
  }
  EXPECT_FALSE(c.fresh);
}

// succeed() and fail() say when a run of outcomes starts, so the poller logs each change once.
TEST_F(PolledCacheTest, OutcomesReportEachChangeOnce) {
  cache_.set_instances({&a_});
  const struct {
    bool ok;
    bool stale_first;  // let it go stale before this poll
    bool reported;
  } steps[] = {
      {false, false, true}, {false, false, false}, {true, false, true}, {true, false, false},
      {false, false, true}, {true, false, true},   {true, true, true},  {false, false, true},
  };
  for (size_t i = 0; i < std::size(steps); ++i) {
    const auto& s = steps[i];
    clock_.advance(s.stale_first ? kStale : kRefresh);
    if (s.stale_first) {
      ASSERT_TRUE(cache_.check_stale()) << i;
    }
    ASSERT_TRUE(cache_.due()) << i;
    cache_.begin();
    const bool reported =
        s.ok ? cache_.succeed(LmcacheReading{.occupancy = 0.5, .cache_available = true})
             : cache_.fail();
    EXPECT_EQ(reported, s.reported) << "step " << i;
  }
}

// ---------------------------------------------------------------------------------------------
// The real thread against a local HTTP server.

// A provider with one instance at `base_url`, polling `lmcache_url` when it is not empty.
ProviderConfig provider(std::string name, std::string base_url, std::string lmcache_url) {
  ProviderConfig p;
  p.name = std::move(name);
  InstanceConfig instance{.base_url = std::move(base_url)};
  if (!lmcache_url.empty()) {
    instance.lmcache =
        LmcacheConfig{.endpoint = std::move(lmcache_url), .refresh_secs = 1, .stale_secs = 3};
  }
  p.instances.push_back(std::move(instance));
  return p;
}

class LmcachePollerThreadTest : public ::testing::Test {
 protected:
  // Publishes a snapshot of `providers`, each also a target of route "m".
  void publish(std::vector<ProviderConfig> providers) {
    Config config;
    RouteConfig route{.name = "m", .strategy = "lmcache_aware"};
    for (const auto& p : providers) route.targets.push_back(TargetConfig{p.name, "up", {}});
    config.providers = std::move(providers);
    config.routes.push_back(std::move(route));
    auto snapshot =
        build_snapshot(std::move(config), tracker_, BalancerDeps{}, ++version_, &metrics_);
    ASSERT_TRUE(snapshot);
    store_.publish(*snapshot);
  }
  LmcacheSignal& signal(std::string_view provider, const std::string& base_url) {
    return tracker_.instance(provider, base_url).lmcache;
  }
  bool fresh(std::string_view provider, const std::string& base_url) {
    return signal(provider, base_url).fresh.load();
  }
  std::string rendered() { return metrics_.render(tracker_); }

  FixedHttpServer server_;  // the LMCache endpoint, on a path of its own
  // Base URLs the pollers never dial: the endpoint is a URL of its own.
  const std::string base_p_ = "http://127.0.0.1:9/p";
  const std::string base_q_ = "http://127.0.0.1:9/q";
  ManualClock clock_;  // due() and staleness: each advance of one refresh lets one poll go
  LoadTracker tracker_;
  Metrics metrics_;
  SnapshotStore store_;
  uint64_t version_ = 0;
};

TEST_F(LmcachePollerThreadTest, PollsFollowsFailuresAndReloads) {
  server_.answer(200, R"({"occupancy": 0.42, "cache_available": true})");
  const std::string endpoint = server_.url() + "/lmcache/occupancy";
  // p and q name the same endpoint; r has no lmcache table.
  publish({provider("p", base_p_, endpoint), provider("q", base_q_, endpoint),
           provider("r", "http://127.0.0.1:9/r", "")});
  LmcachePoller poller(store_, clock_);
  poller.start();

  ASSERT_TRUE(wait_for([&] { return fresh("p", base_p_) && fresh("q", base_q_); }));
  EXPECT_EQ(server_.requests(), 1) << "one poll for the endpoint both instances name";
  EXPECT_EQ(server_.last_target(), "/lmcache/occupancy");
  EXPECT_EQ(signal("p", base_p_).usable_occupancy(), 0.42);
  EXPECT_EQ(signal("q", base_q_).usable_occupancy(), 0.42);
  EXPECT_FALSE(fresh("r", "http://127.0.0.1:9/r"));
  const std::string instance = "{endpoint=\"p@" + base_p_ + "\"}";
  EXPECT_NE(rendered().find("rolter_lmcache_occupancy_ratio" + instance + " 0.42\n"),
            std::string::npos)
      << rendered();
  EXPECT_EQ(rendered().find("rolter_lmcache_occupancy_ratio{endpoint=\"r@"), std::string::npos)
      << "not polled";

  // A 500 fails the poll at once. prometheus-cpp writes NaN as "Nan", which Prometheus reads.
  server_.answer(500, "{}");
  clock_.advance(seconds(1));
  ASSERT_TRUE(wait_for([&] { return !fresh("p", base_p_) && !fresh("q", base_q_); }));
  EXPECT_EQ(server_.requests(), 2);
  EXPECT_NE(rendered().find("rolter_lmcache_occupancy_ratio" + instance + " Nan\n"),
            std::string::npos)
      << rendered();
  EXPECT_NE(rendered().find("rolter_lmcache_poll_failures_total" + instance + " 1\n"),
            std::string::npos);

  // Recovery.
  server_.answer(200, R"({"occupancy": 0.5, "cache_available": true})");
  clock_.advance(seconds(1));
  ASSERT_TRUE(wait_for([&] { return fresh("p", base_p_); }));
  EXPECT_EQ(signal("p", base_p_).usable_occupancy(), 0.5);

  // A body that is not the object fails it too.
  server_.answer(200, R"({"occupancy": "half"})");
  clock_.advance(seconds(1));
  ASSERT_TRUE(wait_for([&] { return !fresh("p", base_p_); }));
  EXPECT_NE(rendered().find("rolter_lmcache_poll_failures_total" + instance + " 2\n"),
            std::string::npos);

  // Fresh but unavailable: polled fine, not usable, shown as NaN.
  server_.answer(200, R"({"occupancy": 0.5, "cache_available": false})");
  clock_.advance(seconds(1));
  ASSERT_TRUE(wait_for([&] { return fresh("p", base_p_); }));
  EXPECT_EQ(signal("p", base_p_).usable_occupancy(), std::nullopt);
  EXPECT_NE(rendered().find("rolter_lmcache_occupancy_ratio" + instance + " Nan\n"),
            std::string::npos);

  // A reload that drops p's lmcache table: p stops being polled and is cleared at once, and its
  // LMCache series leave /metrics.
  server_.answer(200, R"({"occupancy": 0.5, "cache_available": true})");
  clock_.advance(seconds(1));
  ASSERT_TRUE(wait_for([&] { return signal("p", base_p_).usable_occupancy() == 0.5; }));
  publish({provider("p", base_p_, ""), provider("q", base_q_, endpoint)});
  ASSERT_TRUE(wait_for([&] { return !fresh("p", base_p_); }));
  EXPECT_TRUE(fresh("q", base_q_));
  EXPECT_EQ(rendered().find("rolter_lmcache_occupancy_ratio" + instance), std::string::npos)
      << rendered();
  EXPECT_EQ(rendered().find("rolter_lmcache_poll_failures_total" + instance), std::string::npos);
  EXPECT_NE(rendered().find("rolter_lmcache_occupancy_ratio{endpoint=\"q@"), std::string::npos);
  publish({provider("q", base_q_, "")});
  ASSERT_TRUE(wait_for([&] { return !fresh("q", base_q_); }));
  EXPECT_EQ(server_.requests(), 6) << "no poll without time passing";
  poller.stop();
}

TEST_F(LmcachePollerThreadTest, StaleWithoutAGoodPollThenRecovers) {
  server_.answer(200, R"({"occupancy": 0.3, "cache_available": true})");
  // stale_secs below refresh_secs: the signal goes stale between two polls, with no poll sent.
  ProviderConfig p = provider("p", base_p_, server_.url());
  p.instances[0].lmcache->refresh_secs = 2;
  p.instances[0].lmcache->stale_secs = 1;
  publish({p});
  LmcachePoller poller(store_, clock_);
  poller.start();
  ASSERT_TRUE(wait_for([&] { return fresh("p", base_p_); }));
  EXPECT_EQ(server_.last_target(), "/") << "an endpoint URL without a path";
  clock_.advance(seconds(1));
  ASSERT_TRUE(wait_for([&] { return !fresh("p", base_p_); }));
  EXPECT_EQ(server_.requests(), 1) << "stale, not failed: no poll was due";
  EXPECT_EQ(signal("p", base_p_).usable_occupancy(), std::nullopt);
  server_.answer(200, R"({"occupancy": 0.6, "cache_available": true})");
  clock_.advance(seconds(1));
  ASSERT_TRUE(wait_for([&] { return fresh("p", base_p_); }));
  EXPECT_EQ(server_.requests(), 2);
  EXPECT_EQ(signal("p", base_p_).usable_occupancy(), 0.6);
  poller.stop();
}

TEST_F(LmcachePollerThreadTest, UnreachableEndpointIsNeverUsableAndStopClears) {
  const std::string unreachable = "http://127.0.0.1:1/occupancy";  // nothing listens on port 1
  server_.answer(200, R"({"occupancy": 0.3, "cache_available": true})");
  publish({provider("dead", base_q_, unreachable), provider("p", base_p_, server_.url())});
  LmcachePoller poller(store_, clock_);
  poller.start();
  ASSERT_TRUE(wait_for([&] { return fresh("p", base_p_); }));
  const std::string failures =
      "rolter_lmcache_poll_failures_total{endpoint=\"dead@" + base_q_ + "\"} 1\n";
  ASSERT_TRUE(wait_for([&] { return rendered().find(failures) != std::string::npos; }));
  EXPECT_FALSE(fresh("dead", base_q_));
  poller.stop();
  EXPECT_FALSE(fresh("p", base_p_)) << "a stopped poller leaves no occupancy to go stale";
  poller.stop();  // idempotent
}

}  // namespace
}  // namespace rolter
