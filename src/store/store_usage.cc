// Store: usage counters per hour (SPEC §15), added to by nodes' batches and summed for the API.
#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

#include "store/sql_db.h"
#include "store/store.h"

namespace rolter {
namespace {

constexpr double kNanosPerUsd = 1e9;

struct GroupColumn {
  UsageGroup group;
  std::string_view name;    // the query word
  std::string_view select;  // the SQL expression grouped by
};

// Days and hours are UTC: hour_ms is never negative (the JSON reader refuses it), so integer
// division rounds down on both backends.
constexpr std::array<GroupColumn, 6> kGroupColumns = {{
    {UsageGroup::kModel, "model", "model"},
    {UsageGroup::kRoute, "route", "route"},
    {UsageGroup::kKey, "key", "key_name"},
    {UsageGroup::kTeam, "team", "team"},
    {UsageGroup::kDay, "day", "(hour_ms / 86400000) * 86400000"},
    {UsageGroup::kHour, "hour", "hour_ms"},
}};

const GroupColumn& column_of(UsageGroup group) {
  return *std::find_if(kGroupColumns.begin(), kGroupColumns.end(),
                       [group](const GroupColumn& c) { return c.group == group; });
}

int64_t to_nanos(double usd) {
  if (!std::isfinite(usd) || usd <= 0) return 0;
  return std::llround(std::min(usd * kNanosPerUsd, 9e18));
}

StoreResult<void> add_usage_row(SqlDb& db, const UsageRow& row) {
  const UsageKey& k = row.key;
  const UsageCounts& c = row.counts;
  return succeeded(db.run(
      "INSERT INTO usage_hours (hour_ms, key_name, team, route, model, requests, input_tokens, "
      "cached_input_tokens, output_tokens, estimated, usd_nanos) "
      "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
      "ON CONFLICT (hour_ms, key_name, team, route, model) DO UPDATE SET "
      "requests = usage_hours.requests + excluded.requests, "
      "input_tokens = usage_hours.input_tokens + excluded.input_tokens, "
      "cached_input_tokens = usage_hours.cached_input_tokens + excluded.cached_input_tokens, "
      "output_tokens = usage_hours.output_tokens + excluded.output_tokens, "
      "estimated = usage_hours.estimated + excluded.estimated, "
      "usd_nanos = usage_hours.usd_nanos + excluded.usd_nanos",
      {k.hour_ms, k.key, k.team, k.route, k.model, static_cast<int64_t>(c.requests),
       static_cast<int64_t>(c.input_tokens), static_cast<int64_t>(c.cached_input_tokens),
       static_cast<int64_t>(c.output_tokens), static_cast<int64_t>(c.estimated), to_nanos(c.usd)}));
}

// The SELECT of `query`, its parameters $1.. in `params` (viewing the query's strings).
std::string usage_sql(const UsageQuery& query, std::vector<SqlValue>& params) {
  std::string groups;
  for (UsageGroup group : query.group_by) {
    groups += (groups.empty() ? "" : ", ") + std::string(column_of(group).select);
  }
  std::string sql =
      "SELECT COUNT(*), SUM(requests), SUM(input_tokens), SUM(cached_input_tokens), "
      "SUM(output_tokens), SUM(estimated), SUM(usd_nanos)";
  if (!groups.empty()) sql += ", " + groups;
  params.push_back(usage_hour(query.from_ms));
  params.push_back(query.to_ms);
  sql += " FROM usage_hours WHERE hour_ms >= $1 AND hour_ms < $2";
  const std::pair<std::string_view, const std::string*> filters[] = {
      {"key_name", &query.key}, {"team", &query.team}, {"route", &query.route}};
  for (const auto& [column, value] : filters) {
    if (value->empty()) continue;
    params.push_back(std::string_view(*value));
    sql += " AND " + std::string(column) + " = $" + std::to_string(params.size());
  }
  if (!groups.empty()) sql += " GROUP BY " + groups;
  return sql;
}

UsageRow usage_from_row(const UsageQuery& query, const std::vector<std::string>& row) {
  UsageRow out;
  auto count = [&](size_t i) { return static_cast<uint64_t>(int64_column(row[i])); };
  out.counts = UsageCounts{.requests = count(1),
                           .input_tokens = count(2),
                           .cached_input_tokens = count(3),
                           .output_tokens = count(4),
                           .estimated = count(5),
                           .usd = static_cast<double>(int64_column(row[6])) / kNanosPerUsd};
  for (size_t i = 0; i < query.group_by.size(); ++i) {
    const std::string& value = row[7 + i];
    switch (query.group_by[i]) {
      case UsageGroup::kModel:
        out.key.model = value;
        break;
      case UsageGroup::kRoute:
        out.key.route = value;
        break;
      case UsageGroup::kKey:
        out.key.key = value;
        break;
      case UsageGroup::kTeam:
        out.key.team = value;
        break;
      case UsageGroup::kDay:
      case UsageGroup::kHour:
        out.key.hour_ms = int64_column(value);
        break;
    }
  }
  return out;
}

}  // namespace

std::string_view usage_group_name(UsageGroup group) { return column_of(group).name; }

std::optional<UsageGroup> usage_group_from(std::string_view name) {
  for (const GroupColumn& c : kGroupColumns) {
    if (c.name == name) return c.group;
  }
  return std::nullopt;
}

StoreResult<void> Store::add_usage(const std::vector<UsageRow>& rows) {
  if (rows.empty()) return {};
  MutexLock lock(mu_);
  usage_writes_.fetch_add(1, std::memory_order_relaxed);
  return in_transaction(*db_, [&](SqlDb& db) -> StoreResult<void> {
    for (const UsageRow& row : rows) {
      if (auto added = add_usage_row(db, row); !added) return added;
    }
    return {};
  });
}

StoreResult<std::vector<UsageRow>> Store::usage(const UsageQuery& query) {
  std::vector<SqlValue> params;
  const std::string sql = usage_sql(query, params);
  MutexLock lock(mu_);
  auto result = db_->run(sql, std::span<const SqlValue>(params));
  if (!result) return tl::unexpected(std::move(result.error()));
  std::vector<UsageRow> rows;
  rows.reserve(result->rows.size());
  for (const auto& row : result->rows) {
    if (int64_column(row[0]) == 0) continue;  // no group_by and no matching hour
    rows.push_back(usage_from_row(query, row));
  }
  // Sorted here, not in SQL: PostgreSQL would order names by the database's collation.
  std::sort(rows.begin(), rows.end(), [](const UsageRow& a, const UsageRow& b) {
    return std::tie(a.key.hour_ms, a.key.key, a.key.team, a.key.route, a.key.model) <
           std::tie(b.key.hour_ms, b.key.key, b.key.team, b.key.route, b.key.model);
  });
  return rows;
}

}  // namespace rolter
