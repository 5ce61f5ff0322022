#include "limits/redis/redis_limiter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>
#include <thread>

#include "limits/redis/testing/redis_server.h"

namespace rolter {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr auto kTimeout = 20ms;
// Generous: a loaded two-core machine may be slow, but never ten times the timeout slow.
constexpr auto kCallDeadline = 10 * kTimeout + 200ms;

LimitRule make_rule(std::string id, LimitSpec spec) {
  LimitRule rule;
  rule.label = "key '" + id + "'";
  rule.id = "key:" + std::move(id);
  rule.spec = spec;
  return rule;
}

Demand make_demand(uint64_t tokens = 0, double usd = 0, int64_t lease_ms = 60000) {
  static int next = 0;
  Demand d;
  d.tokens = tokens;
  d.usd = usd;
  d.request_id = "req-" + std::to_string(++next);
  d.lease_ms = lease_ms;
  return d;
}

// Runs the io_context until `done()` or the deadline; returns done().
template <typename Done>
bool run_until(asio::io_context& io, Done done, std::chrono::milliseconds deadline = 10s) {
  const auto end = SteadyClock::now() + deadline;
  while (!done() && SteadyClock::now() < end) io.run_for(2ms);
  return done();
}

// One admission, run to completion (or nullopt after the deadline), and how long it took.
std::optional<Admission> admit_now(asio::io_context& io, RedisLimiter& limiter,
                                   std::span<const LimitRule* const> rules, const Demand& demand,
                                   SteadyClock::duration* took = nullptr) {
  std::optional<Admission> result;
  const auto start = SteadyClock::now();
  asio::co_spawn(io, limiter.admit(rules, demand),
                 [&](std::exception_ptr, Admission a) { result = std::move(a); });
  run_until(io, [&] { return result.has_value(); });
  if (took) *took = SteadyClock::now() - start;
  return result;
}

// `count` admissions in flight at once; returns how many were admitted.
int admit_concurrently(asio::io_context& io, RedisLimiter& limiter,
                       std::span<const LimitRule* const> rules, int count,
                       std::vector<Admission>* refused = nullptr) {
  std::vector<Demand> demands;
  for (int i = 0; i < count; ++i) demands.push_back(make_demand());
  int done = 0, admitted = 0;
  for (int i = 0; i < count; ++i) {
    asio::co_spawn(io, limiter.admit(rules, demands[i]), [&](std::exception_ptr, Admission a) {
      ++done;
      EXPECT_FALSE(a.backend_error);
      if (a.admitted()) {
        ++admitted;
      } else if (refused) {
        refused->push_back(std::move(a));
      }
    });
  }
  EXPECT_TRUE(run_until(
      io, [&] { return done == count; }, 30s));
  return admitted;
}

class RedisLimiterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new RedisServer;
    ASSERT_TRUE(server_->start()) << server_->error();
  }
  static void TearDownTestSuite() { delete server_; }

  void SetUp() override {
    ASSERT_TRUE(server_ != nullptr);
    server_->query({"FLUSHALL"});
  }

  RedisLimiterOptions options(uint16_t port = 0) const {
    RedisLimiterOptions o;
    o.connection.port = port != 0 ? port : server_->port();
    o.connection.command_timeout = kTimeout;
    // A loaded machine must not make the tests that are not about the deadline flaky.
    if (port == 0) o.connection.command_timeout = 2s;
    return o;
  }

  std::unique_ptr<RedisLimiter> connected_limiter(asio::io_context& io,
                                                  RedisLimiterOptions o) const {
    auto limiter = std::make_unique<RedisLimiter>(io.get_executor(), std::move(o));
    EXPECT_TRUE(run_until(io, [&] { return limiter->connected(); }));
    return limiter;
  }

  static RedisServer* server_;
  asio::io_context io_;
};
RedisServer* RedisLimiterTest::server_ = nullptr;

TEST_F(RedisLimiterTest, GcraAdmitsExactlyTheBurstThenOnePerInterval) {
  const LimitRule rule = make_rule("gcra", {.rpm = 60, .burst = 60});
  const LimitRule* rules[] = {&rule};
  auto limiter = connected_limiter(io_, options());
  std::vector<Admission> refused;
  EXPECT_EQ(admit_concurrently(io_, *limiter, rules, 300, &refused), 60);
  ASSERT_EQ(refused.size(), 240u);
  int64_t wait_ms = 0;
  for (const Admission& a : refused) {
    EXPECT_EQ(a.refusal, Refusal::kRateLimit);
    EXPECT_EQ(a.message, "key 'gcra': 60 requests per minute");
    EXPECT_GT(a.retry_after_ms, 0);
    EXPECT_LE(a.retry_after_ms, 1000);
    ASSERT_EQ(a.reading_count, 1u);
    EXPECT_EQ(a.readings[0].request_quota, 60u);
    EXPECT_EQ(a.readings[0].requests_remaining, 0u);
    wait_ms = std::max(wait_ms, a.retry_after_ms);
  }
  // After the promised wait (Redis's clock), exactly one more passes.
  std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms + 50));
  EXPECT_EQ(admit_concurrently(io_, *limiter, rules, 5), 1);
}

TEST_F(RedisLimiterTest, AdmittedReadingsCountDown) {
  const LimitRule rule = make_rule("readings", {.rpm = 600, .burst = 10, .tpm = 1000});
  const LimitRule* rules[] = {&rule};
  auto limiter = connected_limiter(io_, options());
  auto a = admit_now(io_, *limiter, rules, make_demand(100));
  ASSERT_TRUE(a && a->admitted());
  ASSERT_EQ(a->reading_count, 1u);
  const LimitReading& r = a->readings[0];
  EXPECT_EQ(r.request_quota, 10u);
  EXPECT_EQ(r.requests_remaining, 9u);
  EXPECT_GT(r.requests_reset_ms, 0);
  EXPECT_LE(r.requests_reset_ms, 100);  // one emission interval
  EXPECT_EQ(r.token_quota, 1000u);
  EXPECT_EQ(r.tokens_remaining, 900u);
  EXPECT_GT(r.tokens_reset_ms, 59000);
  EXPECT_LE(r.tokens_reset_ms, 60000);
}

TEST_F(RedisLimiterTest, TwoNodesShareOneLimitExactly) {
  const LimitRule rule = make_rule("shared", {.rpm = 100, .burst = 100});
  const LimitRule* rules[] = {&rule};
  int admitted[2] = {0, 0};
  std::vector<std::thread> nodes;
  for (int n = 0; n < 2; ++n) {
    nodes.emplace_back([&, n] {
      asio::io_context io;
      auto limiter = connected_limiter(io, options());
      admitted[n] = admit_concurrently(io, *limiter, rules, 150);
    });
  }
  for (auto& t : nodes) t.join();
  EXPECT_EQ(admitted[0] + admitted[1], 100);
}

TEST_F(RedisLimiterTest, TokensAreReservedThenSettledToUsage) {
  const LimitRule rule = make_rule("tpm", {.tpm = 1000});
  const LimitRule* rules[] = {&rule};
  auto limiter = connected_limiter(io_, options());
  const Demand first = make_demand(600);
  auto a = admit_now(io_, *limiter, rules, first);
  ASSERT_TRUE(a && a->admitted());
  EXPECT_EQ(a->readings[0].tokens_remaining, 400u);

  auto refused = admit_now(io_, *limiter, rules, make_demand(600));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->refusal, Refusal::kRateLimit);
  EXPECT_EQ(refused->message, "key 'tpm': 1000 tokens per minute");
  EXPECT_GT(refused->retry_after_ms, 0);
  EXPECT_LE(refused->retry_after_ms, 60000);
  EXPECT_EQ(refused->readings[0].tokens_remaining, 400u);  // the refusal reserved nothing

  // The answer used 100: 500 come back.
  limiter->settle(rules, first, *a, Settlement{.tokens = 100});
  ASSERT_TRUE(run_until(io_, [&] { return limiter->settlements() == 1; }));
  const Demand second = make_demand(600);
  auto b = admit_now(io_, *limiter, rules, second);
  ASSERT_TRUE(b && b->admitted());
  EXPECT_EQ(b->readings[0].tokens_remaining, 300u);

  // This one used 900: 300 more are charged, the window is full.
  limiter->settle(rules, second, *b, Settlement{.tokens = 900});
  ASSERT_TRUE(run_until(io_, [&] { return limiter->settlements() == 2; }));
  auto full = admit_now(io_, *limiter, rules, make_demand(1));
  ASSERT_TRUE(full);
  EXPECT_EQ(full->refusal, Refusal::kRateLimit);

  // An estimate above the limit never fits.
  auto never = admit_now(io_, *limiter, rules, make_demand(1001));
  ASSERT_TRUE(never);
  EXPECT_EQ(never->refusal, Refusal::kRateLimit);
  EXPECT_EQ(never->retry_after_ms, 60000);
}

// The limits are inclusive: a demand that fills a limit exactly passes, one more does not.
TEST_F(RedisLimiterTest, ExactFitsPass) {
  const LimitRule tokens = make_rule("exact-tpm", {.tpm = 1000});
  const LimitRule money =
      make_rule("exact-usd", {.budget = BudgetSpec{.usd = 1.0, .period = BudgetPeriod::kWeek}});
  auto limiter = connected_limiter(io_, options());
  const LimitRule* token_rules[] = {&tokens};
  EXPECT_TRUE(admit_now(io_, *limiter, token_rules, make_demand(600))->admitted());
  EXPECT_TRUE(admit_now(io_, *limiter, token_rules, make_demand(400))->admitted());
  EXPECT_EQ(admit_now(io_, *limiter, token_rules, make_demand(1))->refusal, Refusal::kRateLimit);
  const LimitRule* money_rules[] = {&money};
  EXPECT_TRUE(admit_now(io_, *limiter, money_rules, make_demand(0, 0.5))->admitted());
  EXPECT_TRUE(admit_now(io_, *limiter, money_rules, make_demand(0, 0.5))->admitted());
  EXPECT_EQ(admit_now(io_, *limiter, money_rules, make_demand(0, 0.01))->refusal, Refusal::kBudget);
}

TEST_F(RedisLimiterTest, InFlightLeasesNeverExceedTheMaximum) {
  const LimitRule rule = make_rule("inflight", {.max_in_flight = 4});
  const LimitRule* rules[] = {&rule};
  auto limiter = connected_limiter(io_, options());
  std::vector<std::pair<Demand, Admission>> held;
  std::vector<Demand> demands;
  for (int i = 0; i < 20; ++i) demands.push_back(make_demand());
  int done = 0;
  for (const Demand& d : demands) {
    asio::co_spawn(io_, limiter->admit(rules, d), [&, d](std::exception_ptr, Admission a) {
      ++done;
      if (a.admitted()) held.emplace_back(d, a);
    });
  }
  ASSERT_TRUE(run_until(io_, [&] { return done == 20; }));
  ASSERT_EQ(held.size(), 4u);
  EXPECT_EQ(server_->query({"ZCARD", "rolter:limits:{key:inflight}:inflight"}), "4");

  // One ends: exactly one more fits.
  limiter->settle(rules, held[0].first, held[0].second, Settlement{});
  ASSERT_TRUE(run_until(io_, [&] { return limiter->settlements() == 1; }));
  EXPECT_EQ(admit_concurrently(io_, *limiter, rules, 10), 1);
}

TEST_F(RedisLimiterTest, LeasesOfADeadNodeExpire) {
  const LimitRule rule = make_rule("dead", {.max_in_flight = 2});
  const LimitRule* rules[] = {&rule};
  {
    asio::io_context dead_io;
    auto dead = connected_limiter(dead_io, options());
    for (int i = 0; i < 2; ++i) {
      auto a = admit_now(dead_io, *dead, rules, make_demand(0, 0, /*lease_ms=*/300));
      ASSERT_TRUE(a && a->admitted());
    }
  }  // the node dies without settling
  auto limiter = connected_limiter(io_, options());
  auto refused = admit_now(io_, *limiter, rules, make_demand());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->refusal, Refusal::kRateLimit);
  EXPECT_EQ(refused->message, "key 'dead': 2 requests in flight");
  EXPECT_GT(refused->retry_after_ms, 0);
  EXPECT_LE(refused->retry_after_ms, 300);
  // Within a few lease lengths (generous: the machine may be loaded), the slots come back.
  const auto end = SteadyClock::now() + 10s;
  std::optional<Admission> a;
  while (SteadyClock::now() < end) {
    a = admit_now(io_, *limiter, rules, make_demand());
    if (a && a->admitted()) break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(a && a->admitted());
}

TEST_F(RedisLimiterTest, BudgetRefusesOnceSpentAndRefundsOnSettlement) {
  const LimitRule rule =
      make_rule("budget", {.budget = BudgetSpec{.usd = 1.0, .period = BudgetPeriod::kDay}});
  const LimitRule* rules[] = {&rule};
  auto limiter = connected_limiter(io_, options());
  const Demand first = make_demand(0, 0.4);
  auto a = admit_now(io_, *limiter, rules, first);
  ASSERT_TRUE(a && a->admitted());
  ASSERT_TRUE(admit_now(io_, *limiter, rules, make_demand(0, 0.4))->admitted());
  auto refused = admit_now(io_, *limiter, rules, make_demand(0, 0.4));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->refusal, Refusal::kBudget);
  EXPECT_EQ(refused->message, "key 'budget': budget of $1.00 per day");
  EXPECT_GT(refused->retry_after_ms, 0);
  EXPECT_LE(refused->retry_after_ms, 86400000 + 1000);
  EXPECT_EQ(refused->reading_count, 0u);

  limiter->settle(rules, first, *a, Settlement{.usd = 0.1});
  ASSERT_TRUE(run_until(io_, [&] { return limiter->settlements() == 1; }));
  EXPECT_TRUE(admit_now(io_, *limiter, rules, make_demand(0, 0.4))->admitted());  // 0.9 spent
}

// A rule's budget is checked before its rates, as the local backend does: refused by both, the
// request hears of the budget.
TEST_F(RedisLimiterTest, BudgetBeforeRateDecidesTheKind) {
  const LimitRule rule = make_rule(
      "both",
      {.rpm = 60, .burst = 1, .budget = BudgetSpec{.usd = 1.0, .period = BudgetPeriod::kDay}});
  const LimitRule* rules[] = {&rule};
  auto limiter = connected_limiter(io_, options());
  ASSERT_TRUE(admit_now(io_, *limiter, rules, make_demand(0, 0.9))->admitted());
  auto refused = admit_now(io_, *limiter, rules, make_demand(0, 0.9));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->refusal, Refusal::kBudget);
  EXPECT_EQ(refused->message, "key 'both': budget of $1.00 per day");
}

// A refusal by one rule writes nothing in the others.
TEST_F(RedisLimiterTest, RefusalLeavesNoReservation) {
  const LimitRule requests = make_rule("atomic-a", {.rpm = 5, .burst = 5});
  const LimitRule slots = make_rule("atomic-b", {.max_in_flight = 1});
  const LimitRule* rules[] = {&requests, &slots};
  auto limiter = connected_limiter(io_, options());
  const Demand holder = make_demand();
  auto held = admit_now(io_, *limiter, rules, holder);
  ASSERT_TRUE(held && held->admitted());
  for (int i = 0; i < 10; ++i) {
    auto a = admit_now(io_, *limiter, rules, make_demand());
    ASSERT_TRUE(a);
    EXPECT_EQ(a->message, "key 'atomic-b': 1 requests in flight");
    EXPECT_EQ(a->readings[0].requests_remaining, 4u);
  }
  limiter->settle(rules, holder, *held, Settlement{});
  ASSERT_TRUE(run_until(io_, [&] { return limiter->settlements() == 1; }));
  // The rpm rule still has 4 of its burst of 5.
  const LimitRule* requests_only[] = {&requests};
  EXPECT_EQ(admit_concurrently(io_, *limiter, requests_only, 10), 4);
}

TEST_F(RedisLimiterTest, RefusalKindIsTheFirstRefusingLimit) {
  const LimitRule budget =
      make_rule("kind-budget", {.budget = BudgetSpec{.usd = 0, .period = BudgetPeriod::kMonth}});
  const LimitRule rate = make_rule("kind-rate", {.tpm = 10});
  auto limiter = connected_limiter(io_, options());
  const LimitRule* budget_first[] = {&budget, &rate};
  auto a = admit_now(io_, *limiter, budget_first, make_demand(100, 1.0));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->refusal, Refusal::kBudget);
  EXPECT_EQ(a->retry_after_ms, std::max<int64_t>(a->retry_after_ms, 60000));  // the later of both
  const LimitRule* rate_first[] = {&rate, &budget};
  a = admit_now(io_, *limiter, rate_first, make_demand(100, 1.0));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->refusal, Refusal::kRateLimit);
  EXPECT_GT(a->retry_after_ms, 60000);  // the budget's period end is later than the window
}

TEST_F(RedisLimiterTest, KilledRedisOpensOrClosesAndRestartResumesEnforcement) {
  RedisServer own;
  ASSERT_TRUE(own.start()) << own.error();
  const LimitRule rule = make_rule("restart", {.rpm = 2, .burst = 2});
  const LimitRule* rules[] = {&rule};
  RedisLimiterOptions open_options = options(own.port());
  RedisLimiterOptions closed_options = options(own.port());
  closed_options.on_backend_error = BackendErrorPolicy::kClosed;
  auto open = connected_limiter(io_, open_options);
  auto closed = connected_limiter(io_, closed_options);

  own.kill();
  for (int i = 0; i < 5; ++i) {
    SteadyClock::duration took{};
    auto a = admit_now(io_, *open, rules, make_demand(), &took);
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->admitted());
    EXPECT_TRUE(a->backend_error);
    EXPECT_LT(took, kCallDeadline);
    auto c = admit_now(io_, *closed, rules, make_demand(), &took);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->refusal, Refusal::kUnavailable);
    EXPECT_TRUE(c->backend_error);
    EXPECT_LT(took, kCallDeadline);
  }
  EXPECT_GE(open->backend_errors(), 5u);

  ASSERT_TRUE(own.start()) << own.error();
  ASSERT_TRUE(run_until(
      io_, [&] { return open->connected(); }, 20s));
  EXPECT_EQ(admit_concurrently(io_, *open, rules, 5), 2);
}

TEST_F(RedisLimiterTest, ServerThatNeverAnswersCostsAtMostTheTimeout) {
  SilentServer silent;
  ASSERT_NE(silent.port(), 0);
  const LimitRule rule = make_rule("silent", {.rpm = 1});
  const LimitRule* rules[] = {&rule};
  RedisLimiter limiter(io_.get_executor(), options(silent.port()));
  io_.run_for(50ms);  // let it try to connect
  for (int i = 0; i < 10; ++i) {
    SteadyClock::duration took{};
    auto a = admit_now(io_, limiter, rules, make_demand(), &took);
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->backend_error);
    EXPECT_TRUE(a->admitted());
    EXPECT_LT(took, kCallDeadline);
  }
}

// A connected Redis that stops answering (SIGSTOP): every admission ends at its timeout, the
// connection is given up, and enforcement resumes once Redis answers again.
TEST_F(RedisLimiterTest, HungRedisTimesOutThenRecovers) {
  RedisServer own;
  ASSERT_TRUE(own.start()) << own.error();
  const LimitRule rule = make_rule("hung", {.rpm = 3, .burst = 3});
  const LimitRule* rules[] = {&rule};
  RedisLimiterOptions o = options(own.port());
  o.connection.stall_timeout = 200ms;
  auto limiter = connected_limiter(io_, o);
  own.pause();
  for (int i = 0; i < 10; ++i) {
    SteadyClock::duration took{};
    auto a = admit_now(io_, *limiter, rules, make_demand(), &took);
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->backend_error);
    EXPECT_LT(took, kCallDeadline);
    io_.run_for(30ms);
  }
  own.resume();
  const auto end = SteadyClock::now() + 20s;
  std::optional<Admission> a;
  while (SteadyClock::now() < end) {
    a = admit_now(io_, *limiter, rules, make_demand());
    if (a && !a->backend_error) break;
    io_.run_for(20ms);
  }
  ASSERT_TRUE(a && !a->backend_error);
}

// Not a test: the median round trip of one admission on loopback.
// Run with --gtest_also_run_disabled_tests --gtest_filter='*RoundTrip*'.
// rediss://: a server with a certificate signed by a throwaway CA (testing/redis_server.h).
class RedisTlsLimiterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new RedisServer(/*tls=*/true);
    ASSERT_TRUE(server_->start()) << server_->error();
  }
  static void TearDownTestSuite() { delete server_; }

  void SetUp() override {
    ASSERT_TRUE(server_ != nullptr);
    server_->query({"FLUSHALL"});
  }

  RedisLimiterOptions options(std::string host = "127.0.0.1") const {
    RedisLimiterOptions o;
    o.connection.host = std::move(host);
    o.connection.port = server_->tls_port();
    o.connection.tls = true;
    o.connection.ca_file = server_->ca_file();
    o.connection.command_timeout = 2s;
    o.connection.connect_timeout = 2s;
    return o;
  }

  // A limiter whose TLS handshake must fail: it never connects, and an admission is a prompt
  // backend_error instead of a hang.
  void expect_refused_connection(RedisLimiterOptions o) {
    RedisLimiter limiter(io_.get_executor(), std::move(o));
    run_until(
        io_, [&] { return limiter.connected(); }, 500ms);
    EXPECT_FALSE(limiter.connected());
    EXPECT_EQ(limiter.client().connects(), 0u);
    const LimitRule rule = make_rule("untrusted", {.rpm = 60});
    const LimitRule* rules[] = {&rule};
    SteadyClock::duration took{};
    auto a = admit_now(io_, limiter, rules, make_demand(), &took);
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->backend_error);
    EXPECT_LT(took, kCallDeadline);
  }

  std::unique_ptr<RedisLimiter> connected_tls_limiter(RedisLimiterOptions o) {
    auto limiter = std::make_unique<RedisLimiter>(io_.get_executor(), std::move(o));
    EXPECT_TRUE(run_until(io_, [&] { return limiter->connected(); }));
    return limiter;
  }

  static RedisServer* server_;
  asio::io_context io_;
};
RedisServer* RedisTlsLimiterTest::server_ = nullptr;

TEST_F(RedisTlsLimiterTest, AdmissionsOverTlsAreExact) {
  const LimitRule rule = make_rule("tls-gcra", {.rpm = 60, .burst = 60});
  const LimitRule* rules[] = {&rule};
  auto limiter = connected_tls_limiter(options());
  ASSERT_TRUE(limiter->connected());
  EXPECT_EQ(admit_concurrently(io_, *limiter, rules, 300), 60);
  EXPECT_EQ(limiter->backend_errors(), 0u);
}

TEST_F(RedisTlsLimiterTest, HostNameIsResolvedAndVerified) {
  auto limiter = connected_tls_limiter(options("localhost"));
  ASSERT_TRUE(limiter->connected());
  const LimitRule rule = make_rule("tls-name", {.rpm = 60});
  const LimitRule* rules[] = {&rule};
  auto a = admit_now(io_, *limiter, rules, make_demand());
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->admitted());
}

TEST_F(RedisTlsLimiterTest, UntrustedCertificateFailsPromptly) {
  RedisLimiterOptions o = options();
  o.connection.ca_file.clear();  // the system store does not know the test CA
  expect_refused_connection(std::move(o));
}

TEST_F(RedisTlsLimiterTest, CertificateForAnotherNameFailsPromptly) {
  RedisLimiterOptions o = options();
  o.connection.server_name = "redis.example.com";
  expect_refused_connection(std::move(o));
}

TEST_F(RedisLimiterTest, UnixSocketAdmits) {
  RedisLimiterOptions o = options();
  o.connection.unix_path = server_->unix_path();
  o.connection.port = 1;  // ignored: the socket is used
  auto limiter = connected_limiter(io_, std::move(o));
  const LimitRule rule = make_rule("unix", {.rpm = 60, .burst = 5});
  const LimitRule* rules[] = {&rule};
  EXPECT_EQ(admit_concurrently(io_, *limiter, rules, 20), 5);
}

TEST_F(RedisLimiterTest, DISABLED_RoundTrip) {
  const LimitRule key = make_rule("rtt-key", {.rpm = 1000000, .tpm = 100000000});
  const LimitRule team = make_rule("rtt-team", {.max_in_flight = 1000000});
  const LimitRule* rules[] = {&key, &team};
  auto limiter = connected_limiter(io_, options());
  std::vector<double> micros;
  bool done = false;
  // One coroutine times each admission itself: the test's polling loop would add its own waits.
  auto loop = [&]() -> Task<void> {
    for (int i = 0; i < 2000; ++i) {
      const Demand demand = make_demand(100);
      const auto start = SteadyClock::now();
      Admission a = co_await limiter->admit(rules, demand);
      micros.push_back(
          std::chrono::duration<double, std::micro>(SteadyClock::now() - start).count());
      EXPECT_TRUE(a.admitted());
    }
    done = true;
  };
  asio::co_spawn(io_, loop(), asio::detached);
  ASSERT_TRUE(run_until(
      io_, [&] { return done; }, 60s));
  std::sort(micros.begin(), micros.end());
  std::printf("admission round trip: median %.0f us, p90 %.0f us, p99 %.0f us\n",
              micros[micros.size() / 2], micros[micros.size() * 9 / 10],
              micros[micros.size() * 99 / 100]);
}

}  // namespace
}  // namespace rolter
