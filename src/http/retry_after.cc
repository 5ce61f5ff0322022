#include "http/retry_after.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "http/tokens.h"

namespace rolter {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr auto kMaxWait = seconds(86400);

// Reads `count` digits at `pos`; advances `pos`.
std::optional<int> digits(std::string_view text, size_t& pos, size_t count) {
  if (pos + count > text.size()) return std::nullopt;
  int value = 0;
  for (size_t i = 0; i < count; ++i) {
    const char c = text[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  pos += count;
  return value;
}

bool literal(std::string_view text, size_t& pos, std::string_view expected) {
  if (text.substr(pos, expected.size()) != expected) return false;
  pos += expected.size();
  return true;
}

std::optional<unsigned> month(std::string_view text, size_t& pos) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (unsigned i = 0; i < kMonths.size(); ++i) {
    if (text.substr(pos, 3) == kMonths[i]) {
      pos += 3;
      return i + 1;
    }
  }
  return std::nullopt;
}

// "HH:MM:SS"
std::optional<seconds> time_of_day(std::string_view text, size_t& pos) {
  auto h = digits(text, pos, 2);
  if (!h || !literal(text, pos, ":")) return std::nullopt;
  auto m = digits(text, pos, 2);
  if (!m || !literal(text, pos, ":")) return std::nullopt;
  auto s = digits(text, pos, 2);
  if (!s || *h > 23 || *m > 59 || *s > 60) return std::nullopt;
  return seconds(*h * 3600 + *m * 60 + *s);
}

std::optional<std::chrono::sys_seconds> make_time(int year, unsigned mon, int day, seconds tod) {
  const std::chrono::year_month_day date{std::chrono::year(year), std::chrono::month(mon),
                                         std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok()) return std::nullopt;
  return std::chrono::sys_days(date) + tod;
}

// The part after "Day, " of IMF-fixdate: "06 Nov 1994 08:49:37 GMT".
std::optional<std::chrono::sys_seconds> imf_fixdate(std::string_view text, size_t pos) {
  auto day = digits(text, pos, 2);
  if (!day || !literal(text, pos, " ")) return std::nullopt;
  auto mon = month(text, pos);
  if (!mon || !literal(text, pos, " ")) return std::nullopt;
  auto year = digits(text, pos, 4);
  if (!year || !literal(text, pos, " ")) return std::nullopt;
  auto tod = time_of_day(text, pos);
  if (!tod || !literal(text, pos, " GMT") || pos != text.size()) return std::nullopt;
  return make_time(*year, *mon, *day, *tod);
}

// The part after "Weekday, " of RFC 850: "06-Nov-94 08:49:37 GMT". A two-digit year is read
// in 1970-2069 (RFC 9110 asks for "the most recent year in the past" with that ending; engines do
// not send this form, so the simple window serves).
std::optional<std::chrono::sys_seconds> rfc850(std::string_view text, size_t pos) {
  auto day = digits(text, pos, 2);
  if (!day || !literal(text, pos, "-")) return std::nullopt;
  auto mon = month(text, pos);
  if (!mon || !literal(text, pos, "-")) return std::nullopt;
  auto yy = digits(text, pos, 2);
  if (!yy || !literal(text, pos, " ")) return std::nullopt;
  auto tod = time_of_day(text, pos);
  if (!tod || !literal(text, pos, " GMT") || pos != text.size()) return std::nullopt;
  return make_time(*yy < 70 ? 2000 + *yy : 1900 + *yy, *mon, *day, *tod);
}

// asctime: "Sun Nov  6 08:49:37 1994".
std::optional<std::chrono::sys_seconds> asctime_date(std::string_view text) {
  size_t pos = 4;
  if (text.size() < 24 || text[3] != ' ') return std::nullopt;
  auto mon = month(text, pos);
  if (!mon || !literal(text, pos, " ")) return std::nullopt;
  int day = 0;
  if (text[pos] == ' ') {  // a space pads a one-digit day
    ++pos;
    auto d = digits(text, pos, 1);
    if (!d) return std::nullopt;
    day = *d;
  } else {
    auto d = digits(text, pos, 2);
    if (!d) return std::nullopt;
    day = *d;
  }
  if (!literal(text, pos, " ")) return std::nullopt;
  auto tod = time_of_day(text, pos);
  if (!tod || !literal(text, pos, " ")) return std::nullopt;
  auto year = digits(text, pos, 4);
  if (!year || pos != text.size()) return std::nullopt;
  return make_time(*year, *mon, day, *tod);
}

}  // namespace

std::optional<std::chrono::sys_seconds> parse_http_date(std::string_view text) {
  text = trim_ows(text);
  const size_t comma = text.find(',');
  if (comma == 3 && text.size() > 5 && text[4] == ' ') return imf_fixdate(text, 5);
  if (comma != std::string_view::npos && comma > 3 && comma + 2 < text.size() &&
      text[comma + 1] == ' ') {
    return rfc850(text, comma + 2);
  }
  if (comma == std::string_view::npos) return asctime_date(text);
  return std::nullopt;
}

std::optional<milliseconds> parse_retry_after(std::string_view value,
                                              std::chrono::system_clock::time_point now) {
  value = trim_ows(value);
  if (value.empty()) return std::nullopt;
  if (value.front() >= '0' && value.front() <= '9') {
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (end != value.data() + value.size()) return std::nullopt;
    if (ec == std::errc::result_out_of_range || n > static_cast<uint64_t>(kMaxWait.count())) {
      return kMaxWait;
    }
    if (ec != std::errc()) return std::nullopt;
    return seconds(n);
  }
  auto date = parse_http_date(value);
  if (!date) return std::nullopt;
  const auto wait = std::chrono::ceil<milliseconds>(*date - now);
  return std::clamp<milliseconds>(wait, milliseconds(0), kMaxWait);
}

}  // namespace rolter
