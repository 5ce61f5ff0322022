#include "limits/rate_limit_headers.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace rolter {
namespace {

LimitRule make_rule(std::string id, uint64_t rpm, uint64_t burst, uint64_t tpm,
                    std::string glob = "") {
  LimitRule r;
  r.id = std::move(id);
  r.route_glob = std::move(glob);
  r.spec.rpm = rpm;
  r.spec.burst = burst;
  r.spec.tpm = tpm;
  return r;
}

TEST(RateLimitHeaders, MostRestrictiveFirst) {
  const LimitRule key = make_rule("key:a", 60, 60, 0);
  const LimitRule team = make_rule("team:t", 0, 0, 100'000);
  Admission a;
  a.readings[0] = {&key, 60, 12, 3'000, 0, 0, 0};
  a.readings[1] = {&team, 0, 0, 0, 100'000, 40'000, 16'500};
  a.reading_count = 2;
  std::string out = "HTTP/1.1 200 OK\r\n";
  append_rate_limit_headers(a, out);
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\n"
            "RateLimit-Policy: \"key-rpm\";q=60;w=60, \"team-tpm\";q=100000;w=60\r\n"
            "RateLimit: \"key-rpm\";r=12;t=3, \"team-tpm\";r=40000;t=17\r\n"
            "x-ratelimit-limit-requests: 60\r\n"
            "x-ratelimit-remaining-requests: 12\r\n"
            "x-ratelimit-reset-requests: 3s\r\n"
            "x-ratelimit-limit-tokens: 100000\r\n"
            "x-ratelimit-remaining-tokens: 40000\r\n"
            "x-ratelimit-reset-tokens: 16.5s\r\n");
}

TEST(RateLimitHeaders, ItemsAreOrderedByTheirOwnRemainingFraction) {
  // One rule with both limits: its tokens are tighter than its requests; a route rule's
  // requests are tighter than both. rpm 600 with burst 60 refills a burst in 6 s.
  const LimitRule key = make_rule("key:a", 60, 60, 1000);
  const LimitRule route = make_rule("key:a|route:qwen*", 600, 60, 0, "qwen*");
  Admission a;
  a.readings[0] = {&route, 60, 3, 5'700, 0, 0, 0};
  a.readings[1] = {&key, 60, 50, 10'000, 1000, 100, 120};
  a.reading_count = 2;
  a.refusal = Refusal::kRateLimit;
  a.retry_after_ms = 1'001;
  std::string out;
  append_rate_limit_headers(a, out);
  EXPECT_EQ(out,
            "RateLimit-Policy: \"key-route-rpm\";q=60;w=6, \"key-tpm\";q=1000;w=60, "
            "\"key-rpm\";q=60;w=60\r\n"
            "RateLimit: \"key-route-rpm\";r=3;t=6, \"key-tpm\";r=100;t=1, "
            "\"key-rpm\";r=50;t=10\r\n"
            "x-ratelimit-limit-requests: 60\r\n"
            "x-ratelimit-remaining-requests: 3\r\n"
            "x-ratelimit-reset-requests: 5.7s\r\n"
            "x-ratelimit-limit-tokens: 1000\r\n"
            "x-ratelimit-remaining-tokens: 100\r\n"
            "x-ratelimit-reset-tokens: 120ms\r\n"
            "Retry-After: 2\r\n");
}

TEST(RateLimitHeaders, RefusedWithoutReadingsStillSaysWhenToRetry) {
  Admission a;
  a.refusal = Refusal::kBudget;
  a.retry_after_ms = 0;
  std::vector<std::pair<std::string, std::string>> fields;
  visit_rate_limit_headers(
      a, [&](std::string_view n, std::string_view v) { fields.emplace_back(n, v); });
  ASSERT_EQ(fields.size(), 1u);
  EXPECT_EQ(fields[0].first, "Retry-After");
  EXPECT_EQ(fields[0].second, "1");  // at least one second

  Admission admitted;
  std::string out;
  append_rate_limit_headers(admitted, out);
  EXPECT_EQ(out, "");
}

TEST(RateLimitHeaders, ResetTextLikeOpenAI) {
  const std::pair<int64_t, const char*> cases[] = {
      {-5, "0s"},
      {0, "0s"},
      {1, "1ms"},
      {120, "120ms"},
      {999, "999ms"},
      {1'000, "1s"},
      {1'500, "1.5s"},
      {1'250, "1.25s"},
      {1'005, "1.005s"},
      {59'000, "59s"},
      {60'000, "1m0s"},
      {360'000, "6m0s"},
      {61'500, "1m1.5s"},
      {3'600'000, "1h0m0s"},
      {3'723'000, "1h2m3s"},
  };
  for (const auto& [ms, text] : cases) EXPECT_EQ(format_reset(ms).view(), text) << ms;
}

}  // namespace
}  // namespace rolter
