#include "proxy/fallback.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

using On = RoutePool::FallbackOn;

struct CauseCase {
  const char* name;
  On on;
  unsigned attempts;
  bool all_rate_limited;
  FallbackCause expected;
};

TEST(FallbackCause, WhichConditionTheFailuresMeet) {
  const On unavailable{};  // the default: unavailable only
  const On rate_limited{.unavailable = false, .rate_limited = true};
  const On both{.unavailable = true, .rate_limited = true};
  const On neither{.unavailable = false};
  const CauseCase cases[] = {
      {"every candidate out", unavailable, 0, true, FallbackCause::kUnavailable},
      {"every attempt failed", unavailable, 2, false, FallbackCause::kUnavailable},
      {"every target 429, not asked for", unavailable, 2, true, FallbackCause::kNone},
      {"every target 429", rate_limited, 2, true, FallbackCause::kRateLimited},
      {"some 429, some down, rate_limited only", rate_limited, 2, false, FallbackCause::kNone},
      {"some 429, some down", both, 2, false, FallbackCause::kUnavailable},
      {"every target 429, both", both, 1, true, FallbackCause::kRateLimited},
      {"out, rate_limited only", rate_limited, 0, true, FallbackCause::kNone},
      {"nothing asked for", neither, 0, true, FallbackCause::kNone},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(fallback_cause(c.on, c.attempts, c.all_rate_limited), c.expected) << c.name;
  }
}

TEST(FallbackCause, APromptTooLongForEveryTarget) {
  const On context{.unavailable = false, .context_length = true};
  const On unavailable{};
  EXPECT_EQ(fallback_cause(context, 2, false, true), FallbackCause::kContextLength);
  EXPECT_EQ(fallback_cause(context, 2, false, false), FallbackCause::kNone);
  EXPECT_EQ(fallback_cause(context, 0, false, true), FallbackCause::kNone) << "no attempt made";
  EXPECT_EQ(fallback_cause(unavailable, 2, false, true), FallbackCause::kNone)
      << "an answer, not unavailability, unless asked for";
}

TEST(FallbackCause, ContentEveryTargetFiltered) {
  const On filter{.unavailable = false, .content_filter = true};
  EXPECT_EQ(fallback_cause(filter, 1, false, false, true), FallbackCause::kContentFilter);
  EXPECT_EQ(fallback_cause(filter, 1, false, false, false), FallbackCause::kNone);
  EXPECT_EQ(fallback_cause(On{}, 1, false, false, true), FallbackCause::kNone);
}

TEST(SaysContentFilter, AzureAndOpenAiCodes) {
  EXPECT_TRUE(says_content_filter(R"({"error":{"code":"content_filter","status":400}})"));
  EXPECT_TRUE(says_content_filter(R"({"error":{"code":"content_policy_violation"}})"));
  EXPECT_FALSE(says_content_filter(R"({"error":{"message":"a content filter word in a prompt"}})"));
  EXPECT_FALSE(says_content_filter(""));
}

TEST(SaysContextLength, TheWordsOfEachEngineAndApi) {
  const std::pair<const char*, bool> cases[] = {
      {R"({"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens","type":"BadRequestError","code":400})",
       true},
      {R"({"error":{"message":"...","type":"invalid_request_error","code":"context_length_exceeded"}})",
       true},
      {R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}})",
       true},
      {R"({"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}})",
       true},
      {R"({"error":{"message":"temperature must be at most 2","type":"invalid_request_error"}})",
       false},
      {"", false},
  };
  for (const auto& [body, want] : cases) EXPECT_EQ(says_context_length(body), want) << body;
}

TEST(FallbackHops, TheListCappedByMaxFallbacks) {
  RoutePool b, c, origin;
  origin.fallbacks = {&b, &c};
  EXPECT_EQ(fallback_hops(origin, 0), 0u);
  EXPECT_EQ(fallback_hops(origin, 1), 1u);
  EXPECT_EQ(fallback_hops(origin, 2), 2u);
  EXPECT_EQ(fallback_hops(origin, 5), 2u);
  EXPECT_EQ(fallback_hops(b, 2), 0u);
}

ApiError error(unsigned status, const char* message) {
  ApiError e;
  e.status = status;
  e.message = message;
  return e;
}

TEST(FallbackTrail, NamesEveryRouteGivenUpOn) {
  FallbackTrail trail;
  trail.attempts = 2;
  trail.give_up("a", error(502, "all 2 attempts failed: x: refused"), false, false);
  trail.give_up("b", error(503, "no eligible target for 'b': y: parked"), true, true);
  EXPECT_EQ(trail.given_up, "a,b");
  const ApiError final_error = trail.final_error();
  EXPECT_EQ(final_error.status, 502);
  EXPECT_EQ(final_error.message,
            "no route could answer (a,b): route 'a': all 2 attempts failed: x: refused; "
            "route 'b': no eligible target for 'b': y: parked");
  EXPECT_TRUE(final_error.code.empty());
}

TEST(FallbackTrail, StatusOfTheFinalError) {
  FallbackTrail none;  // no route made an attempt
  none.give_up("a", error(503, "out"), true, true);
  none.give_up("b", error(503, "out"), true, true);
  EXPECT_EQ(none.final_error().status, 503);

  FallbackTrail timeouts;
  timeouts.attempts = 3;
  timeouts.give_up("a", error(504, "t"), true, false);
  timeouts.give_up("b", error(503, "out"), true, true);
  EXPECT_EQ(timeouts.final_error().status, 504);

  FallbackTrail auth;
  auth.attempts = 2;
  auth.give_up("a", error(502, "creds"), false, true);
  auth.give_up("b", error(502, "creds"), false, true);
  EXPECT_EQ(auth.final_error().status, 502);
  EXPECT_EQ(auth.final_error().code, "upstream_auth_failed");
}

}  // namespace
}  // namespace rolter
