#include "http/retry_after.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

using std::chrono::seconds;
using std::chrono::sys_days;
using namespace std::chrono_literals;

// 1994-11-06 08:49:37 UTC, the RFC's example date.
const std::chrono::sys_seconds kExample =
    sys_days{std::chrono::year{1994} / 11 / 6} + 8h + 49min + 37s;

TEST(HttpDate, ThreeForms) {
  struct Case {
    const char* text;
    std::optional<std::chrono::sys_seconds> expected;
  };
  const Case cases[] = {
      {"Sun, 06 Nov 1994 08:49:37 GMT", kExample},
      {"Sunday, 06-Nov-94 08:49:37 GMT", kExample},
      {"Sun Nov  6 08:49:37 1994", kExample},
      {"Sun Nov 16 08:49:37 1994", kExample + 10 * 24h},
      {"  Sun, 06 Nov 1994 08:49:37 GMT  ", kExample},
      {"Sun, 06 Nov 1994 08:49:37 UTC", std::nullopt},
      {"Sun, 31 Nov 1994 08:49:37 GMT", std::nullopt},  // no such day
      {"Sun, 06 Foo 1994 08:49:37 GMT", std::nullopt},
      {"Sun, 06 Nov 1994 24:49:37 GMT", std::nullopt},
      {"Sun, 6 Nov 1994 08:49:37 GMT", std::nullopt},
      {"yesterday", std::nullopt},
      {"", std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_http_date(c.text), c.expected) << c.text;
}

TEST(RetryAfter, SecondsAndDates) {
  const auto now = std::chrono::system_clock::time_point(kExample);
  struct Case {
    const char* value;
    std::optional<std::chrono::milliseconds> expected;
  };
  const Case cases[] = {
      {"0", 0s},
      {"7", 7s},
      {" 120 ", 120s},
      {"86400", 86400s},
      {"86401", 86400s},                    // capped at a day
      {"99999999999999999999999", 86400s},  // capped, never overflowing
      {"-1", std::nullopt},
      {"1.5", std::nullopt},
      {"7s", std::nullopt},
      {"", std::nullopt},
      {"Sun, 06 Nov 1994 08:50:07 GMT", 30s},  // 30 s after now
      {"Sun, 06 Nov 1994 08:49:37 GMT", 0s},
      {"Sat, 05 Nov 1994 08:49:37 GMT", 0s},  // in the past: now
      {"Mon, 07 Nov 1994 08:49:37 GMT", 86400s},
      {"Tue, 08 Nov 1994 08:49:37 GMT", 86400s},  // capped
      {"Sun, 06 Nov 1994 08:49:37", std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_retry_after(c.value, now), c.expected) << c.value;
}

TEST(RetryAfter, ADateEndsTheWaitAtThatDateToTheMillisecond) {
  const auto now = std::chrono::system_clock::time_point(kExample) + 400ms;
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now), 9600ms);
  const auto just_after = std::chrono::system_clock::time_point(kExample) + 1us;
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:38 GMT", just_after), 1000ms);
}

}  // namespace
}  // namespace rolter
