#include "collect/engine_metrics/engine_scraper.h"

#include <gtest/gtest.h>

#include <chrono>
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

// ---------------------------------------------------------------------------------------------
// Reading a /metrics body.

TEST(ReadEngineSample, Table) {
  constexpr double kUnset = -1;  // expected gpu_cache_usage absent
  struct Case {
    const char* what;
    std::string text;
    bool ok;
    double running, waiting, cache;
  };
  const Case cases[] = {
      {"rolter-sim's and vLLM's names",
       "# TYPE vllm:num_requests_running gauge\n"
       "vllm:num_requests_running{model_name=\"m\"} 3\n"
       "vllm:num_requests_waiting{model_name=\"m\"} 2\n"
       "vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.25\n",
       true, 3, 2, 0.25},
      {"series of two models summed",
       "vllm:num_requests_running{model_name=\"a\"} 1\nvllm:num_requests_running{model_name=\"b\"} "
       "2\nvllm:num_requests_waiting{model_name=\"a\"} 0\nvllm:num_requests_waiting{model_name="
       "\"b\"} 5\n",
       true, 3, 5, kUnset},
      {"the cache gauge under its vLLM 0.10 name",
       "vllm:num_requests_running 0\nvllm:num_requests_waiting 0\nvllm:kv_cache_usage_perc 0.5\n",
       true, 0, 0, 0.5},
      {"a NaN cache gauge is left out, the sample kept",
       "vllm:num_requests_running 1\nvllm:num_requests_waiting 1\nvllm:gpu_cache_usage_perc NaN\n",
       true, 1, 1, kUnset},
      {"running missing", "vllm:num_requests_waiting 1\n", false, 0, 0, 0},
      {"waiting missing", "vllm:num_requests_running 1\n", false, 0, 0, 0},
      {"running NaN", "vllm:num_requests_running NaN\nvllm:num_requests_waiting 1\n", false, 0, 0,
       0},
      {"waiting +Inf", "vllm:num_requests_running 1\nvllm:num_requests_waiting +Inf\n", false, 0, 0,
       0},
      {"running unreadable", "vllm:num_requests_running{x} 1\nvllm:num_requests_waiting 1\n", false,
       0, 0, 0},
      {"an HTML error page", "<html><body>502 Bad Gateway</body></html>", false, 0, 0, 0},
      {"empty", "", false, 0, 0, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const auto sample = read_engine_sample(c.text);
    ASSERT_EQ(sample.has_value(), c.ok);
    if (!c.ok) continue;
    EXPECT_EQ(sample->running, c.running);
    EXPECT_EQ(sample->waiting, c.waiting);
    if (c.cache == kUnset) {
      EXPECT_FALSE(sample->gpu_cache_usage.has_value());
    } else {
      EXPECT_EQ(sample->gpu_cache_usage, c.cache);
    }
  }
}

TEST(ReadEngineSample, PrefixCacheCountersOnlyAsAPair) {
  const std::string base = "vllm:num_requests_running 0\nvllm:num_requests_waiting 0\n";
  const auto both = read_engine_sample(base +
                                       "vllm:prefix_cache_queries_total{model_name=\"m\"} 40\n"
                                       "vllm:prefix_cache_hits_total{model_name=\"m\"} 10\n");
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->prefix_cache_queries, 40);
  EXPECT_EQ(both->prefix_cache_hits, 10);
  const auto one = read_engine_sample(base + "vllm:prefix_cache_hits_total 10\n");
  ASSERT_TRUE(one.has_value());
  EXPECT_FALSE(one->prefix_cache_hits.has_value());
  EXPECT_FALSE(one->prefix_cache_queries.has_value());
}

TEST(CounterIncrease, Table) {
  const struct {
    std::optional<double> before, now;
    double increase;
  } cases[] = {
      {10, 25, 15},
      {10, 10, 0},
      {10, 4, 4},  // the engine restarted: it counts from zero again
      {std::nullopt, 25, 0},
      {10, std::nullopt, 0},
      {std::nullopt, std::nullopt, 0},
  };
  for (const auto& c : cases) EXPECT_EQ(counter_increase(c.before, c.now), c.increase);
}

TEST(EngineSample, LoadIsRoundedAndClamped) {
  const struct {
    double running, waiting;
    uint32_t load;
  } cases[] = {
      {3, 4, 7},
      {2.4, 0, 2},
      {2.5, 0, 3},
      {0.2, 0.3, 1},
      {-5, 2, 0},
      {-0.4, 0, 0},
      {4294967295.0, 0, UINT32_MAX},
      {1e12, 1e12, UINT32_MAX},
  };
  for (const auto& c : cases) {
    EXPECT_EQ((EngineSample{.running = c.running, .waiting = c.waiting}.load()), c.load)
        << c.running << " + " << c.waiting;
  }
}

TEST(ScrapeTiming, ForInterval) {
  const struct {
    int64_t interval_ms, timeout_ms, stale_ms;
  } cases[] = {
      {1, 50, 51},          // the timeout's floor; stale after interval + timeout
      {20, 50, 70},         //
      {25, 50, 75},         // the two bounds meet
      {40, 50, 120},        // 3 intervals from here on
      {250, 250, 750},      // the default
      {1000, 1000, 3000},   //
      {5000, 1000, 15000},  // the timeout's ceiling
  };
  for (const auto& c : cases) {
    const auto t = scrape_timing(milliseconds(c.interval_ms));
    EXPECT_EQ(t.interval, milliseconds(c.interval_ms));
    EXPECT_EQ(t.timeout, milliseconds(c.timeout_ms)) << c.interval_ms;
    EXPECT_EQ(t.stale_after, milliseconds(c.stale_ms)) << c.interval_ms;
  }
}

// ---------------------------------------------------------------------------------------------
// The decision logic, on simulated time.

class ScrapedEngineTest : public ::testing::Test {
 protected:
  static constexpr milliseconds kInterval{100};  // stale after 300 ms

  // A request this gateway sends the instance (and keeps in flight).
  static void send(LoadSignals& s, uint32_t n = 1) {
    s.in_flight += n;
    s.sent_total += n;
  }
  // One whole scrape that read `running` + `waiting`, with `sent_during` requests sent between
  // its request going out and its answer.
  void scrape_ok(double running, double waiting, uint32_t sent_during = 0) {
    ASSERT_TRUE(engine_.due());
    engine_.begin();
    engine_.sending();
    send(a_, sent_during);
    engine_.succeed(EngineSample{.running = running, .waiting = waiting});
  }
  void scrape_failed() {
    ASSERT_TRUE(engine_.due());
    engine_.begin();
    engine_.fail();
  }

  ManualClock clock_;
  LoadSignals a_;
  LoadSignals b_;
  ScrapedEngine engine_{clock_, scrape_timing(kInterval)};
};

TEST_F(ScrapedEngineTest, FreshLoadIsTheEnginesPlusWhatWasSentSinceTheScrape) {
  engine_.set_instances({&a_});
  send(a_, 5);  // in flight before the scrape: the engine counts them
  scrape_ok(/*running=*/4, /*waiting=*/3, /*sent_during=*/2);
  EXPECT_TRUE(a_.engine_fresh);
  EXPECT_EQ(a_.engine_load, 7u);
  EXPECT_EQ(a_.sent_at_scrape, 5u) << "sent_total just before the request went out";
  EXPECT_EQ(a_.current(), 7u + 2u) << "the engine's count plus the two sent since";
  send(a_);
  EXPECT_EQ(a_.current(), 10u);
  EXPECT_EQ(a_.in_flight, 8u) << "local in-flight is kept, unused while fresh";
}

TEST_F(ScrapedEngineTest, FailedScrapeFallsBackToLocalInFlightAtOnce) {
  engine_.set_instances({&a_});
  scrape_ok(20, 0);
  send(a_, 3);
  ASSERT_EQ(a_.current(), 23u);
  clock_.advance(kInterval);
  scrape_failed();
  EXPECT_FALSE(a_.engine_fresh);
  EXPECT_FALSE(engine_.fresh());
  EXPECT_EQ(a_.current(), 3u);
}

TEST_F(ScrapedEngineTest, StaleScrapeFallsBackAfterStaleAfter) {
  engine_.set_instances({&a_});
  scrape_ok(9, 0);
  // A scrape begins and hangs: nothing is due meanwhile, and no answer comes.
  clock_.advance(kInterval);
  engine_.begin();
  clock_.advance(engine_.timing().stale_after - kInterval - milliseconds(1));
  EXPECT_FALSE(engine_.check_stale());
  EXPECT_TRUE(a_.engine_fresh) << "1 ms before the bound";
  EXPECT_FALSE(engine_.due()) << "one scrape at a time";
  clock_.advance(milliseconds(1));
  EXPECT_TRUE(engine_.check_stale());
  EXPECT_FALSE(a_.engine_fresh);
  EXPECT_EQ(a_.current(), 0u) << "local in-flight";
  EXPECT_FALSE(engine_.check_stale()) << "reported once";
}

TEST_F(ScrapedEngineTest, RecoveryMakesItFreshAgain) {
  engine_.set_instances({&a_});
  scrape_failed();
  EXPECT_FALSE(a_.engine_fresh) << "never scraped";
  clock_.advance(kInterval);
  scrape_failed();
  clock_.advance(kInterval);
  send(a_, 2);
  scrape_ok(5, 1);
  EXPECT_TRUE(a_.engine_fresh);
  EXPECT_EQ(a_.current(), 6u);
  // Stale, then recovered too.
  clock_.advance(engine_.timing().stale_after);
  ASSERT_TRUE(engine_.check_stale());
  scrape_ok(2, 0);
  EXPECT_TRUE(a_.engine_fresh);
  EXPECT_EQ(a_.current(), 2u);
}

TEST_F(ScrapedEngineTest, DueEveryIntervalOneAtATime) {
  EXPECT_TRUE(engine_.due()) << "the first scrape at once";
  engine_.begin();
  EXPECT_FALSE(engine_.due());
  clock_.advance(kInterval * 2);
  EXPECT_FALSE(engine_.due()) << "still in flight";
  engine_.fail();
  EXPECT_TRUE(engine_.due()) << "the interval counts from the last begin";
  engine_.begin();
  engine_.fail();
  clock_.advance(kInterval - milliseconds(1));
  EXPECT_FALSE(engine_.due());
  clock_.advance(milliseconds(1));
  EXPECT_TRUE(engine_.due());
}

TEST_F(ScrapedEngineTest, OneScrapeServesEveryInstanceOfTheEngine) {
  engine_.set_instances({&a_, &b_});
  send(a_, 1);
  send(b_, 4);
  scrape_ok(3, 0);
  EXPECT_EQ(a_.current(), 3u);
  EXPECT_EQ(b_.current(), 3u) << "each with its own sent_at_scrape";
  send(b_);
  EXPECT_EQ(a_.current(), 3u);
  EXPECT_EQ(b_.current(), 4u);
}

TEST_F(ScrapedEngineTest, InstanceThatLeavesIsClearedAndNotRevivedByAScrapeInFlight) {
  engine_.set_instances({&a_, &b_});
  scrape_ok(3, 0);
  ASSERT_TRUE(b_.engine_fresh);
  clock_.advance(kInterval);
  engine_.begin();
  engine_.sending();             // the request goes out for a and b
  engine_.set_instances({&a_});  // a reload drops b meanwhile
  EXPECT_FALSE(b_.engine_fresh) << "cleared at once";
  engine_.succeed(EngineSample{.running = 8});
  EXPECT_TRUE(a_.engine_fresh);
  EXPECT_EQ(a_.engine_load, 8u);
  EXPECT_FALSE(b_.engine_fresh);
  EXPECT_EQ(b_.engine_load, 3u) << "untouched";
}

TEST_F(ScrapedEngineTest, InstanceThatJoinsMidScrapeWaitsForTheNext) {
  engine_.set_instances({&a_});
  engine_.begin();
  engine_.sending();
  engine_.set_instances({&a_, &b_});
  engine_.succeed(EngineSample{.running = 2});
  EXPECT_TRUE(a_.engine_fresh);
  EXPECT_FALSE(b_.engine_fresh) << "its sent_total was not read before the request";
  clock_.advance(kInterval);
  scrape_ok(2, 0);
  EXPECT_TRUE(b_.engine_fresh);
}

TEST_F(ScrapedEngineTest, RetireClearsAndLaterOutcomesChangeNothing) {
  engine_.set_instances({&a_});
  scrape_ok(3, 0);
  clock_.advance(kInterval);
  engine_.begin();
  engine_.sending();
  engine_.retire();
  EXPECT_FALSE(a_.engine_fresh);
  EXPECT_EQ(engine_.instance_count(), 0u);
  EXPECT_FALSE(engine_.succeed(EngineSample{.running = 1}));
  EXPECT_FALSE(a_.engine_fresh);
  EXPECT_FALSE(engine_.fail());
}

TEST_F(ScrapedEngineTest, DestructionClearsItsInstances) {
  LoadSignals c;
  {
    ScrapedEngine engine(clock_, scrape_timing(kInterval));
    engine.set_instances({&c});
    engine.begin();
    engine.sending();
    engine.succeed(EngineSample{.running = 1});
    ASSERT_TRUE(c.engine_fresh);
  }
  EXPECT_FALSE(c.engine_fresh);
}

// succeed() and fail() say when a run of outcomes starts, so the scraper logs each change once.
TEST_F(ScrapedEngineTest, OutcomesReportEachChangeOnce) {
  engine_.set_instances({&a_});
  const struct {
    bool ok;
    bool stale_first;  // let it go stale before this scrape
    bool reported;
  } steps[] = {
      {false, false, true}, {false, false, false}, {true, false, true}, {true, false, false},
      {false, false, true}, {true, false, true},   {true, true, true},  {false, false, true},
  };
  for (size_t i = 0; i < std::size(steps); ++i) {
    const auto& s = steps[i];
    clock_.advance(s.stale_first ? engine_.timing().stale_after : kInterval);
    if (s.stale_first) {
      ASSERT_TRUE(engine_.check_stale()) << i;
    }
    ASSERT_TRUE(engine_.due()) << i;
    engine_.begin();
    engine_.sending();
    const bool reported = s.ok ? engine_.succeed(EngineSample{.running = 1}) : engine_.fail();
    EXPECT_EQ(reported, s.reported) << "step " << i;
  }
}

// ---------------------------------------------------------------------------------------------
// The real thread against a local HTTP server.

constexpr const char* kGoodMetrics =
    "# HELP vllm:num_requests_running Number of requests currently running on GPU.\n"
    "# TYPE vllm:num_requests_running gauge\n"
    "vllm:num_requests_running{model_name=\"a\"} 1.0\n"
    "vllm:num_requests_running{model_name=\"b\"} 2.0\n"
    "vllm:num_requests_waiting{model_name=\"a\"} 4.0\n"
    "vllm:gpu_cache_usage_perc{model_name=\"a\"} 0.5\n";

ProviderConfig provider(std::string name, std::string url, std::string load_source) {
  ProviderConfig p;
  p.name = std::move(name);
  p.instances.push_back(InstanceConfig{.base_url = std::move(url)});
  p.load_source = std::move(load_source);
  p.metrics_interval_ms = 20;
  return p;
}

class EngineScraperThreadTest : public ::testing::Test {
 protected:
  // Publishes a snapshot of `providers`, each also a target of route "m".
  void publish(std::vector<ProviderConfig> providers) {
    Config config;
    RouteConfig route{.name = "m", .strategy = "power_of_two"};
    for (const auto& p : providers) route.targets.push_back(TargetConfig{p.name, "up", {}});
    config.providers = std::move(providers);
    config.routes.push_back(std::move(route));
    auto snapshot =
        build_snapshot(std::move(config), tracker_, BalancerDeps{}, ++version_, &metrics_);
    ASSERT_TRUE(snapshot);
    store_.publish(*snapshot);
  }
  LoadSignals& load(std::string_view provider) {
    return tracker_.instance(provider, server_.url()).load;
  }
  bool fresh(std::string_view provider) { return load(provider).engine_fresh.load(); }

  FixedHttpServer server_;
  ManualClock clock_;  // due() and staleness: each advance of one interval lets one scrape go
  LoadTracker tracker_;
  Metrics metrics_;
  SnapshotStore store_;
  uint64_t version_ = 0;
};

TEST_F(EngineScraperThreadTest, ScrapesFollowsFailuresAndReloads) {
  server_.answer(200, kGoodMetrics);
  // p and q name the same engine; r does too but reads its load locally.
  publish({provider("p", server_.url(), "engine_metrics"),
           provider("q", server_.url(), "engine_metrics"), provider("r", server_.url(), "local")});
  load("p").sent_total = 5;
  EngineScraper scraper(store_, clock_);
  scraper.start();

  ASSERT_TRUE(wait_for([&] { return fresh("p") && fresh("q"); }));
  EXPECT_EQ(server_.requests(), 1) << "one scrape for the engine both providers name";
  EXPECT_EQ(server_.last_target(), "/metrics");
  EXPECT_EQ(load("p").engine_load, 7u) << "1 + 2 running, 4 waiting";
  EXPECT_EQ(load("p").sent_at_scrape, 5u);
  EXPECT_EQ(load("p").current(), 7u);
  EXPECT_FALSE(fresh("r"));
  const std::string text = metrics_.render(tracker_);
  const std::string endpoint = "{endpoint=\"p@" + server_.url() + "\"}";
  EXPECT_NE(text.find("rolter_engine_load" + endpoint + " 7\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rolter_engine_load_fresh" + endpoint + " 1\n"), std::string::npos);
  EXPECT_NE(text.find("rolter_engine_gpu_cache_usage_ratio" + endpoint + " 0.5\n"),
            std::string::npos);
  EXPECT_NE(text.find("rolter_engine_prefix_cache_hits_total" + endpoint + " 0\n"),
            std::string::npos)
      << "counted from the first scrape on";
  EXPECT_EQ(text.find("rolter_engine_load{endpoint=\"r@"), std::string::npos) << "not scraped";

  server_.answer(500, kGoodMetrics);
  clock_.advance(milliseconds(20));
  ASSERT_TRUE(wait_for([&] { return !fresh("p") && !fresh("q"); })) << "a 500 fails the scrape";
  EXPECT_EQ(server_.requests(), 2);
  EXPECT_NE(
      metrics_.render(tracker_).find("rolter_engine_scrape_failures_total" + endpoint + " 1\n"),
      std::string::npos);

  server_.answer(200, std::string(kGoodMetrics) +
                                       "vllm:prefix_cache_queries_total 100\n"
                                       "vllm:prefix_cache_hits_total 30\n");
  clock_.advance(milliseconds(20));
  ASSERT_TRUE(wait_for([&] { return fresh("p") && fresh("q"); })) << "recovered";
  server_.answer(200, std::string(kGoodMetrics) +
                                       "vllm:prefix_cache_queries_total 160\n"
                                       "vllm:prefix_cache_hits_total 50\n");
  clock_.advance(milliseconds(20));
  ASSERT_TRUE(wait_for([&] {
    const std::string now = metrics_.render(tracker_);
    return now.find("rolter_engine_prefix_cache_queries_total" + endpoint + " 60\n") !=
           std::string::npos;
  })) << "what the engine's counter gained between two good scrapes";
  EXPECT_NE(
      metrics_.render(tracker_).find("rolter_engine_prefix_cache_hits_total" + endpoint + " 20\n"),
      std::string::npos);

  // A reload that turns p local: p stops being scraped and is cleared at once, and its engine
  // series leave /metrics; q goes on.
  publish({provider("p", server_.url(), "local"), provider("q", server_.url(), "engine_metrics")});
  ASSERT_TRUE(wait_for([&] { return !fresh("p"); }));
  EXPECT_TRUE(fresh("q"));
  const std::string after = metrics_.render(tracker_);
  EXPECT_EQ(after.find("rolter_engine_load_fresh" + endpoint), std::string::npos) << after;
  EXPECT_EQ(after.find("rolter_engine_scrape_failures_total" + endpoint), std::string::npos);
  EXPECT_NE(after.find("rolter_engine_load_fresh{endpoint=\"q@"), std::string::npos);
  publish({provider("q", server_.url(), "local")});
  ASSERT_TRUE(wait_for([&] { return !fresh("q"); }));
  EXPECT_EQ(server_.requests(), 4) << "no scrape without time passing";
  scraper.stop();
}

TEST_F(EngineScraperThreadTest, UnreachableEngineIsNeverFreshAndStopClears) {
  const std::string unreachable = "http://127.0.0.1:1";  // nothing listens on port 1
  ProviderConfig dead = provider("dead", unreachable, "engine_metrics");
  server_.answer(200, kGoodMetrics);
  publish({dead, provider("p", server_.url(), "engine_metrics")});
  EngineScraper scraper(store_, clock_);
  scraper.start();
  ASSERT_TRUE(wait_for([&] { return fresh("p"); }));
  const std::string failures =
      "rolter_engine_scrape_failures_total{endpoint=\"dead@" + unreachable + "\"} 1\n";
  ASSERT_TRUE(
      wait_for([&] { return metrics_.render(tracker_).find(failures) != std::string::npos; }));
  EXPECT_FALSE(tracker_.instance("dead", unreachable).load.engine_fresh);
  scraper.stop();
  EXPECT_FALSE(fresh("p")) << "a stopped scraper leaves no load to go stale";
  scraper.stop();  // idempotent
}

}  // namespace
}  // namespace rolter
