#include "limits/local_limiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <string>
#include <thread>
#include <vector>

#include "limits/rate_limit_headers.h"

namespace rolter {
namespace {

constexpr int64_t kT0 = 1'796'396'400'000;  // 2026-12-04T15:00:00Z, a Friday

LimitSpec rpm_spec(uint64_t rpm, uint64_t burst) {
  LimitSpec s;
  s.rpm = rpm;
  s.burst = burst;
  return s;
}
LimitSpec tpm_spec(uint64_t tpm) {
  LimitSpec s;
  s.tpm = tpm;
  return s;
}

class LocalLimiterTest : public ::testing::Test {
 protected:
  LimitRule& add(const std::string& id, const std::string& label, LimitSpec spec) {
    auto rule = std::make_unique<LimitRule>();
    rule->id = id;
    rule->label = label;
    rule->spec = spec;
    rule->cell = limiter_.cells().cell(id);
    owned_.push_back(std::move(rule));
    return *owned_.back();
  }
  std::vector<const LimitRule*> rules() const {
    std::vector<const LimitRule*> out;
    for (const auto& r : owned_) out.push_back(r.get());
    return out;
  }
  Admission admit(uint64_t tokens, int64_t now_ms, double usd = 0) {
    demand_.tokens = tokens;
    demand_.usd = usd;
    return limiter_.admit_now(rules(), demand_, now_ms);
  }
  uint64_t tokens_used(const LimitRule& r, int64_t now_ms) {
    MutexLock lock(r.cell->mu);
    return r.cell->tokens.summary(now_ms).used;
  }
  uint64_t requests_left(const LimitRule& r, int64_t now_ms) {
    MutexLock lock(r.cell->mu);
    return r.cell->gcra.remaining(r.spec.rpm, r.spec.effective_burst(), now_ms);
  }

  LocalLimiter limiter_{[] { return kT0; }};
  std::vector<std::unique_ptr<LimitRule>> owned_;
  Demand demand_;
};

TEST_F(LocalLimiterTest, RpmBurstThenOnePerSecond) {
  add("key:a", "key 'a'", rpm_spec(60, 60));
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(admit(0, kT0).admitted()) << i;
  const Admission refused = admit(0, kT0);
  EXPECT_EQ(refused.refusal, Refusal::kRateLimit);
  EXPECT_EQ(refused.message, "key 'a': 60 requests per minute");
  EXPECT_EQ(refused.retry_after_ms, 1000);
  EXPECT_EQ(refused.at_ms, kT0);
  EXPECT_TRUE(admit(0, kT0 + 1000).admitted());
  EXPECT_FALSE(admit(0, kT0 + 1000).admitted());
}

// Key, team and route rules: the route refuses, so nothing is reserved in the key or the team.
TEST_F(LocalLimiterTest, OneRefusingRuleReservesNothingAnywhere) {
  LimitSpec key_spec = rpm_spec(100, 100);
  key_spec.tpm = 10'000;
  LimitRule& key = add("key:a", "key 'a'", key_spec);
  LimitRule& team = add("team:t", "team 't'", tpm_spec(1'000));
  LimitRule& route = add("key:a|route:qwen*", "key 'a' on 'qwen*'", rpm_spec(2, 2));
  ASSERT_TRUE(admit(100, kT0).admitted());
  ASSERT_TRUE(admit(100, kT0).admitted());
  const Admission refused = admit(100, kT0);
  EXPECT_EQ(refused.refusal, Refusal::kRateLimit);
  EXPECT_EQ(refused.message, "key 'a' on 'qwen*': 2 requests per minute");
  EXPECT_EQ(refused.retry_after_ms, 30'000);
  EXPECT_EQ(tokens_used(key, kT0), 200u);
  EXPECT_EQ(tokens_used(team, kT0), 200u);
  EXPECT_EQ(requests_left(key, kT0), 98u);
  EXPECT_EQ(requests_left(route, kT0), 0u);

  // Now the team's tpm refuses a big estimate: the key's rpm is untouched.
  const Admission too_many = admit(900, kT0 + 30'000);
  EXPECT_EQ(too_many.message, "team 't': 1000 tokens per minute");
  EXPECT_EQ(requests_left(key, kT0 + 30'000), 100u);  // 99 had the refused request counted
  EXPECT_EQ(tokens_used(key, kT0 + 30'000), 200u);
}

TEST_F(LocalLimiterTest, RetryAfterCoversEveryRefusingLimit) {
  add("key:a", "key 'a'", rpm_spec(2, 1));  // one request per 30 s
  add("team:t", "team 't'", tpm_spec(1'000));
  ASSERT_TRUE(admit(800, kT0).admitted());
  const Admission refused = admit(800, kT0 + 10'000);
  EXPECT_EQ(refused.message, "key 'a': 2 requests per minute");  // the first refusing rule
  EXPECT_EQ(refused.retry_after_ms, 50'000);  // the key would pass in 20 s, the team in 50 s
  EXPECT_FALSE(admit(800, kT0 + 59'999).admitted());
  EXPECT_TRUE(admit(800, kT0 + 60'000).admitted());
}

TEST_F(LocalLimiterTest, EstimateAboveTpmIsRefusedWithAFullWindow) {
  add("key:a", "key 'a'", tpm_spec(1'000));
  const Admission a = admit(1'001, kT0);
  EXPECT_EQ(a.refusal, Refusal::kRateLimit);
  EXPECT_EQ(a.message,
            "key 'a': the request's estimate of 1001 tokens exceeds 1000 tokens per minute");
  EXPECT_EQ(a.retry_after_ms, 60'000);
}

TEST_F(LocalLimiterTest, BudgetRefusesUntilThePeriodEnds) {
  LimitSpec spec;
  spec.budget = BudgetSpec{1.0, BudgetPeriod::kDay};
  add("team:t", "team 't'", spec);
  ASSERT_TRUE(admit(0, kT0, 0.6).admitted());
  const Admission a = admit(0, kT0, 0.6);
  EXPECT_EQ(a.refusal, Refusal::kBudget);
  EXPECT_EQ(a.message, "team 't': budget of $1 per day");
  EXPECT_EQ(a.retry_after_ms, 9 * 3'600'000);  // 15:00 to midnight
  EXPECT_TRUE(a.reading_count == 0);
  EXPECT_TRUE(admit(0, kT0 + 9 * 3'600'000, 0.6).admitted());
}

TEST_F(LocalLimiterTest, BudgetBeforeRateDecidesTheKind) {
  LimitSpec spec = rpm_spec(60, 1);
  spec.budget = BudgetSpec{1.0, BudgetPeriod::kMonth};
  add("key:a", "key 'a'", spec);
  ASSERT_TRUE(admit(0, kT0, 1.0).admitted());
  const Admission a = admit(0, kT0, 0.5);
  EXPECT_EQ(a.refusal, Refusal::kBudget);
  EXPECT_EQ(a.message, "key 'a': budget of $1 per month");
}

TEST_F(LocalLimiterTest, BudgetSettlesRefundAndRollsOverDecemberToJanuary) {
  LimitSpec spec;
  spec.budget = BudgetSpec{1.0, BudgetPeriod::kMonth};
  add("key:a", "key 'a'", spec);
  const int64_t dec31 = 1'798'761'599'000;  // 2026-12-31T23:59:59Z
  demand_.usd = 0.8;
  const Admission a = admit(0, dec31, 0.8);
  ASSERT_TRUE(a.admitted());
  limiter_.settle_now(rules(), demand_, a, Settlement{0, 0.3, false}, dec31);
  EXPECT_TRUE(admit(0, dec31, 0.7).admitted());  // 0.3 + 0.7 = 1.0
  EXPECT_FALSE(admit(0, dec31 + 999, 0.01).admitted());
  EXPECT_TRUE(admit(0, dec31 + 1000, 1.0).admitted());  // January
}

TEST_F(LocalLimiterTest, TokenSettlementRefundsOvershootsAndKeepsEstimates) {
  LimitRule& key = add("key:a", "key 'a'", tpm_spec(1'000));
  const Admission a = admit(600, kT0);
  limiter_.settle_now(rules(), demand_, a, Settlement{100, 0, false}, kT0 + 5'000);
  EXPECT_EQ(tokens_used(key, kT0 + 5'000), 100u);
  const Admission b = admit(600, kT0 + 6'000);
  limiter_.settle_now(rules(), demand_, b, Settlement{1'500, 0, false}, kT0 + 7'000);
  EXPECT_EQ(tokens_used(key, kT0 + 7'000), 1'600u);
  EXPECT_FALSE(admit(1, kT0 + 7'000).admitted());
  // Both buckets have left by 66 s; a stream without usage keeps its reservation.
  const Admission c = admit(300, kT0 + 66'000);
  limiter_.settle_now(rules(), demand_, c, Settlement{0, 0, true}, kT0 + 67'000);
  EXPECT_EQ(tokens_used(key, kT0 + 67'000), 300u);
}

TEST_F(LocalLimiterTest, InFlight) {
  LimitSpec spec;
  spec.max_in_flight = 2;
  add("key:a", "key 'a'", spec);
  const Admission a = admit(0, kT0);
  ASSERT_TRUE(a.admitted());
  ASSERT_TRUE(admit(0, kT0).admitted());
  const Admission refused = admit(0, kT0);
  EXPECT_EQ(refused.refusal, Refusal::kRateLimit);
  EXPECT_EQ(refused.message, "key 'a': 2 requests in flight");
  EXPECT_EQ(refused.retry_after_ms, LocalLimiter::kInFlightRetryMs);
  limiter_.settle_now(rules(), demand_, refused, Settlement{}, kT0);  // refused: no effect
  EXPECT_FALSE(admit(0, kT0).admitted());
  limiter_.settle_now(rules(), demand_, a, Settlement{}, kT0);
  EXPECT_TRUE(admit(0, kT0).admitted());
  EXPECT_FALSE(admit(0, kT0).admitted());
}

TEST_F(LocalLimiterTest, ReadingsMostRestrictiveFirst) {
  add("key:a", "key 'a'", rpm_spec(60, 60));
  add("team:t", "team 't'", tpm_spec(1'000));
  LimitSpec flight;
  flight.max_in_flight = 100;
  add("team:t|route:*", "team 't' on '*'", flight);  // no rpm or tpm: no reading
  for (int i = 0; i < 29; ++i) ASSERT_TRUE(admit(10, kT0).admitted());
  const Admission a = admit(610, kT0);  // team: 900 of 1000 used; key: 30 of 60
  ASSERT_TRUE(a.admitted());
  ASSERT_EQ(a.reading_count, 2u);
  EXPECT_EQ(a.readings[0].rule->id, "team:t");
  EXPECT_EQ(a.readings[0].token_quota, 1'000u);
  EXPECT_EQ(a.readings[0].tokens_remaining, 100u);
  EXPECT_EQ(a.readings[0].tokens_reset_ms, 60'000);
  EXPECT_EQ(a.readings[1].rule->id, "key:a");
  EXPECT_EQ(a.readings[1].request_quota, 60u);
  EXPECT_EQ(a.readings[1].requests_remaining, 30u);
  EXPECT_EQ(a.readings[1].requests_reset_ms, 30'000);

  std::string headers;
  append_rate_limit_headers(a, headers);
  EXPECT_EQ(headers,
            "RateLimit-Policy: \"team-tpm\";q=1000;w=60, \"key-rpm\";q=60;w=60\r\n"
            "RateLimit: \"team-tpm\";r=100;t=60, \"key-rpm\";r=30;t=30\r\n"
            "x-ratelimit-limit-requests: 60\r\n"
            "x-ratelimit-remaining-requests: 30\r\n"
            "x-ratelimit-reset-requests: 30s\r\n"
            "x-ratelimit-limit-tokens: 1000\r\n"
            "x-ratelimit-remaining-tokens: 100\r\n"
            "x-ratelimit-reset-tokens: 1m0s\r\n");
}

TEST_F(LocalLimiterTest, AtMostFourReadingsKeepingTheTightest) {
  for (int i = 0; i < 6; ++i) {
    add("key:r" + std::to_string(i), "r", rpm_spec(60, 10 + static_cast<uint64_t>(i)));
  }
  // Rule i leaves (9 + i) / (10 + i): rule 0 is the tightest, rule 5 the loosest.
  const Admission a = admit(0, kT0);
  ASSERT_EQ(a.reading_count, Admission::kMaxReadings);
  for (size_t i = 0; i < Admission::kMaxReadings; ++i) {
    EXPECT_EQ(a.readings[i].rule->id, "key:r" + std::to_string(i));
  }
}

TEST_F(LocalLimiterTest, StateSurvivesAReloadWithChangedSpecs) {
  add("key:a", "key 'a'", rpm_spec(60, 60));
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(admit(0, kT0).admitted());
  ASSERT_FALSE(admit(0, kT0).admitted());

  // The reloaded snapshot: a new rule object, same id, a larger burst.
  std::vector<std::unique_ptr<LimitRule>> old = std::move(owned_);
  owned_.clear();
  LimitRule& reloaded = add("key:a", "key 'a'", rpm_spec(60, 100));
  EXPECT_EQ(reloaded.cell, old[0]->cell);
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(admit(0, kT0).admitted()) << i;
  EXPECT_FALSE(admit(0, kT0).admitted());

  // A rule built without its cell finds the same state by id.
  LimitRule bare;
  bare.id = "key:a";
  bare.label = "key 'a'";
  bare.spec = rpm_spec(60, 100);
  const LimitRule* bare_rules[] = {&bare};
  EXPECT_FALSE(limiter_.admit_now(bare_rules, demand_, kT0).admitted());

  // Cells no rule holds are forgotten; held ones stay.
  add("key:b", "key 'b'", rpm_spec(1, 1));
  EXPECT_EQ(limiter_.cells().size(), 2u);
  old.clear();
  EXPECT_EQ(limiter_.cells().prune(), 0u);
  owned_.pop_back();
  EXPECT_EQ(limiter_.cells().prune(), 1u);
  EXPECT_EQ(limiter_.cells().size(), 1u);
}

TEST_F(LocalLimiterTest, RulesSharingACellLockItOnce) {
  add("key:a", "key 'a'", rpm_spec(60, 3));
  add("key:a", "key 'a' again", tpm_spec(1'000));
  EXPECT_TRUE(admit(10, kT0).admitted());  // would deadlock if the cell were locked twice
  EXPECT_EQ(limiter_.cells().size(), 1u);
}

TEST(LocalLimiterConcurrency, FrozenClockAdmitsExactlyTheBurst) {
  LocalLimiter limiter([] { return kT0; });
  LimitRule key;
  key.id = "key:a";
  key.label = "key 'a'";
  key.spec = rpm_spec(60, 60);
  key.spec.tpm = 1'000'000;
  key.cell = limiter.cells().cell(key.id);
  LimitRule team;
  team.id = "team:t";
  team.label = "team 't'";
  team.spec.max_in_flight = 1'000;
  team.cell = limiter.cells().cell(team.id);
  const LimitRule* rules[] = {&key, &team};

  constexpr int kThreads = 8;
  constexpr int kAttempts = 200;
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Demand demand;
      demand.tokens = 10;
      for (int i = 0; i < kAttempts; ++i) {
        const Admission a = limiter.admit_now(rules, demand, kT0);
        if (!a.admitted()) continue;
        admitted.fetch_add(1);
        limiter.settle_now(rules, demand, a, Settlement{5, 0, false}, kT0);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(admitted.load(), 60);
  MutexLock lock(key.cell->mu);
  EXPECT_EQ(key.cell->tokens.summary(kT0).used, 300u);
  MutexLock team_lock(team.cell->mu);
  EXPECT_EQ(team.cell->in_flight, 0u);
}

TEST(LocalLimiterAsync, AdmitCompletesWithTheInjectedClock) {
  int64_t now = kT0;
  LocalLimiter limiter([&now] { return now; });
  LimitRule key;
  key.id = "key:a";
  key.label = "key 'a'";
  key.spec = rpm_spec(60, 1);
  key.cell = limiter.cells().cell(key.id);
  const LimitRule* rules[] = {&key};
  Demand demand;

  std::vector<Admission> results;
  boost::asio::io_context io;
  auto run = [&] {
    boost::asio::co_spawn(io, limiter.admit(rules, demand), [&](std::exception_ptr, Admission a) {
      results.push_back(std::move(a));
    });
    io.restart();
    io.run();
  };
  run();
  run();
  now += 1'000;
  run();
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].admitted());
  EXPECT_EQ(results[0].at_ms, kT0);
  EXPECT_FALSE(results[1].admitted());
  EXPECT_TRUE(results[2].admitted());
  EXPECT_EQ(results[2].at_ms, kT0 + 1'000);
  limiter.settle(rules, demand, results[2], Settlement{});
}

}  // namespace
}  // namespace rolter
