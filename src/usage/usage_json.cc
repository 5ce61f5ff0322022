#include "usage/usage_json.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace rolter {
namespace {

using Json = nlohmann::json;
constexpr int64_t kHourMs = 3'600'000;

Json row_json(const UsageRow& row) {
  const UsageKey& k = row.key;
  const UsageCounts& c = row.counts;
  return Json{{"hour_ms", k.hour_ms},
              {"key", k.key},
              {"team", k.team},
              {"route", k.route},
              {"model", k.model},
              {"requests", c.requests},
              {"input_tokens", c.input_tokens},
              {"cached_input_tokens", c.cached_input_tokens},
              {"output_tokens", c.output_tokens},
              {"usd", c.usd},
              {"estimated", c.estimated}};
}

using Problem = std::string;  // "" = none

Problem read_name(const Json& row, const char* field, std::string& out) {
  const auto it = row.find(field);
  if (it == row.end()) return "";  // absent = ""
  if (!it->is_string()) return std::string(field) + ": expected a string";
  out = it->get<std::string>();
  if (out.size() > kMaxUsageNameBytes) {
    return std::string(field) + ": longer than " + std::to_string(kMaxUsageNameBytes) + " bytes";
  }
  return "";
}

Problem read_count(const Json& row, const char* field, uint64_t& out) {
  const auto it = row.find(field);
  if (it == row.end()) return "";  // absent = 0
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0)) {
    return std::string(field) + ": expected an unsigned integer";
  }
  out = it->get<uint64_t>();
  return "";
}

Problem read_row(const Json& row, UsageRow& out) {
  if (!row.is_object()) return ": expected an object";
  const auto hour = row.find("hour_ms");
  if (hour == row.end() || !hour->is_number_integer()) {
    return ".hour_ms: expected an integer (unix ms)";
  }
  out.key.hour_ms = hour->get<int64_t>();
  if (out.key.hour_ms < 0 || out.key.hour_ms % kHourMs != 0) {
    return ".hour_ms: expected the start of an hour (a multiple of 3600000)";
  }
  for (auto [field, target] : {std::pair{"key", &out.key.key},
                               {"team", &out.key.team},
                               {"route", &out.key.route},
                               {"model", &out.key.model}}) {
    if (Problem p = read_name(row, field, *target); !p.empty()) return "." + p;
  }
  UsageCounts& c = out.counts;
  for (auto [field, target] : {std::pair{"requests", &c.requests},
                               {"input_tokens", &c.input_tokens},
                               {"cached_input_tokens", &c.cached_input_tokens},
                               {"output_tokens", &c.output_tokens},
                               {"estimated", &c.estimated}}) {
    if (Problem p = read_count(row, field, *target); !p.empty()) return "." + p;
  }
  if (c.cached_input_tokens > c.input_tokens) return ".cached_input_tokens: more than input_tokens";
  if (c.estimated > c.requests) return ".estimated: more than requests";
  const auto usd = row.find("usd");
  if (usd != row.end()) {
    if (!usd->is_number() || !std::isfinite(usd->get<double>()) || usd->get<double>() < 0) {
      return ".usd: expected a finite number, at least 0";
    }
    c.usd = usd->get<double>();
  }
  return "";
}

}  // namespace

std::string usage_rows_json(const std::vector<UsageRow>& rows) {
  Json list = Json::array();
  for (const UsageRow& row : rows) list.push_back(row_json(row));
  return Json{{"rows", std::move(list)}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

tl::expected<std::vector<UsageRow>, std::string> parse_usage_rows(std::string_view text) {
  const Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return tl::unexpected(std::string("expected a JSON object"));
  const auto list = doc.find("rows");
  if (list == doc.end() || !list->is_array())
    return tl::unexpected(std::string("rows: expected a list"));
  if (list->size() > kMaxUsageRows) {
    return tl::unexpected("rows: more than " + std::to_string(kMaxUsageRows) + " rows");
  }
  std::vector<UsageRow> rows(list->size());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (Problem p = read_row((*list)[i], rows[i]); !p.empty()) {
      return tl::unexpected("rows[" + std::to_string(i) + "]" + p);
    }
  }
  return rows;
}

}  // namespace rolter
