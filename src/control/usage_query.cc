#include "control/usage_query.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>

namespace rolter {
namespace {

using json = nlohmann::json;

constexpr int64_t kMsPerDay = 86'400'000;

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// The inverse, for the answer's dates.
void civil_from_days(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
}

// The number in text[pos, pos + width), all digits; nullopt otherwise.
std::optional<unsigned> digits(std::string_view text, size_t pos, size_t width) {
  if (pos + width > text.size()) return std::nullopt;
  unsigned value = 0;
  const char* begin = text.data() + pos;
  auto [ptr, ec] = std::from_chars(begin, begin + width, value);
  if (ec != std::errc() || ptr != begin + width) return std::nullopt;
  return value;
}

std::string utc_text(int64_t ms, bool with_time) {
  const int64_t days = ms >= 0 ? ms / kMsPerDay : (ms - kMsPerDay + 1) / kMsPerDay;
  int64_t y = 0;
  unsigned m = 0;
  unsigned d = 0;
  civil_from_days(days, y, m, d);
  const int64_t in_day = (ms - days * kMsPerDay) / 1000;
  char out[96];  // room for any 64-bit year; real dates take 20 bytes
  if (with_time) {
    std::snprintf(out, sizeof out, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                  static_cast<long long>(y), m, d, static_cast<long long>(in_day / 3600),
                  static_cast<long long>(in_day / 60 % 60), static_cast<long long>(in_day % 60));
  } else {
    std::snprintf(out, sizeof out, "%04lld-%02u-%02u", static_cast<long long>(y), m, d);
  }
  return out;
}

ControlError bad(std::string message, std::string param) {
  ControlError e;
  e.message = std::move(message);
  e.param = std::move(param);
  return e;
}

tl::expected<std::vector<UsageGroup>, ControlError> parse_group_by(std::string_view text) {
  std::vector<UsageGroup> groups;
  bool time = false;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view word = text.substr(0, comma);
    const auto group = usage_group_from(word);
    if (!group) {
      return tl::unexpected(bad("unknown group '" + std::string(word) +
                                    "': expected model, route, key, team, day or hour",
                                "group_by"));
    }
    const bool is_time = *group == UsageGroup::kDay || *group == UsageGroup::kHour;
    if (std::find(groups.begin(), groups.end(), *group) != groups.end() || (is_time && time)) {
      return tl::unexpected(bad("each group at most once, and day or hour, not both", "group_by"));
    }
    time = time || is_time;
    groups.push_back(*group);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return groups;
}

json counts_json(const UsageCounts& c) {
  return json{{"requests", c.requests},
              {"input_tokens", c.input_tokens},
              {"cached_input_tokens", c.cached_input_tokens},
              {"output_tokens", c.output_tokens},
              {"usd", c.usd},
              {"estimated", c.estimated}};
}

}  // namespace

std::optional<int64_t> parse_usage_instant(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text.find('-') == std::string_view::npos) {
    int64_t ms = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
    if (ec != std::errc() || ptr != text.data() + text.size() || ms < 0) return std::nullopt;
    return ms;
  }
  const auto y = digits(text, 0, 4);
  const auto m = digits(text, 5, 2);
  const auto d = digits(text, 8, 2);
  if (!y || !m || !d || text[4] != '-' || text[7] != '-' || *m < 1 || *m > 12 || *d < 1 ||
      *d > 31) {
    return std::nullopt;
  }
  const int64_t day_ms = days_from_civil(*y, *m, *d) * kMsPerDay;
  // A day that does not exist (Feb 30) comes back as another date: refuse it.
  if (utc_text(day_ms, false) != text.substr(0, 10)) return std::nullopt;
  if (text.size() == 10) return day_ms;
  const auto hh = digits(text, 11, 2);
  const auto mm = digits(text, 14, 2);
  const auto ss = digits(text, 17, 2);
  if (text.size() != 20 || text[10] != 'T' || text[13] != ':' || text[16] != ':' ||
      text[19] != 'Z' || !hh || !mm || !ss || *hh > 23 || *mm > 59 || *ss > 59) {
    return std::nullopt;
  }
  return day_ms + ((*hh * 60 + *mm) * 60 + *ss) * int64_t{1000};
}

tl::expected<UsageQuery, ControlError> parse_usage_query(
    const std::function<std::string(std::string_view)>& param) {
  UsageQuery query;
  for (auto [name, target] : {std::pair{"from", &query.from_ms}, {"to", &query.to_ms}}) {
    const std::string text = param(name);
    if (text.empty()) continue;
    const auto at = parse_usage_instant(text);
    if (!at) {
      return tl::unexpected(bad(std::string(name) +
                                    " must be unix ms or a UTC date or time, e.g. 2026-01-01 "
                                    "or 2026-01-01T10:00:00Z",
                                name));
    }
    *target = *at;
  }
  if (query.to_ms <= query.from_ms) return tl::unexpected(bad("to must be after from", "to"));
  query.key = param("key");
  query.team = param("team");
  query.route = param("route");
  auto groups = parse_group_by(param("group_by"));
  if (!groups) return tl::unexpected(groups.error());
  query.group_by = std::move(*groups);
  return query;
}

json usage_answer(const UsageQuery& query, const std::vector<UsageRow>& rows) {
  json data = json::array();
  UsageCounts totals;
  for (const UsageRow& row : rows) {
    json item;
    for (UsageGroup group : query.group_by) {
      switch (group) {
        case UsageGroup::kModel:
          item["model"] = row.key.model;
          break;
        case UsageGroup::kRoute:
          item["route"] = row.key.route;
          break;
        case UsageGroup::kKey:
          item["key"] = row.key.key;
          break;
        case UsageGroup::kTeam:
          item["team"] = row.key.team;
          break;
        case UsageGroup::kDay:
        case UsageGroup::kHour:
          item[std::string(usage_group_name(group))] =
              utc_text(row.key.hour_ms, group == UsageGroup::kHour);
          item["start_ms"] = row.key.hour_ms;
          break;
      }
    }
    item.update(counts_json(row.counts));
    data.push_back(std::move(item));
    totals += row.counts;
  }
  json group_by = json::array();
  for (UsageGroup group : query.group_by) group_by.push_back(usage_group_name(group));
  const bool open_end = query.to_ms == std::numeric_limits<int64_t>::max();
  return json{{"object", "list"},
              {"from_ms", query.from_ms},
              {"to_ms", open_end ? json(nullptr) : json(query.to_ms)},
              {"group_by", std::move(group_by)},
              {"data", std::move(data)},
              {"totals", counts_json(totals)}};
}

}  // namespace rolter
