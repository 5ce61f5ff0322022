// Store: the fleet half of the store (nodes and their route telemetry). The configuration half
// is in store.cc.
#include <algorithm>
#include <tuple>

#include "store/sql_db.h"
#include "store/store.h"

namespace rolter {
StoreResult<void> Store::touch_node(const std::string& node_id, const std::string& version,
                                    uint64_t snapshot_version, int64_t now_ms) {
  MutexLock lock(mu_);
  return succeeded(db_->run(
      "INSERT INTO nodes (node_id, version, snapshot_version, last_contact_ms, stats_json, "
      "stats_at_ms) VALUES ($1, $2, $3, $4, 'null', 0) "
      "ON CONFLICT (node_id) DO UPDATE SET version = excluded.version, "
      "snapshot_version = excluded.snapshot_version, last_contact_ms = excluded.last_contact_ms",
      {node_id, version, static_cast<int64_t>(snapshot_version), now_ms}));
}

StoreResult<void> Store::put_node_stats(const std::string& node_id, const std::string& stats_json,
                                        int64_t now_ms) {
  MutexLock lock(mu_);
  return succeeded(db_->run(
      "INSERT INTO nodes (node_id, version, snapshot_version, last_contact_ms, stats_json, "
      "stats_at_ms) VALUES ($1, '', 0, $3, $2, $3) "
      "ON CONFLICT (node_id) DO UPDATE SET stats_json = excluded.stats_json, "
      "stats_at_ms = excluded.stats_at_ms, last_contact_ms = excluded.last_contact_ms",
      {node_id, stats_json, now_ms}));
}

StoreResult<std::vector<NodeRecord>> Store::nodes() {
  MutexLock lock(mu_);
  auto result = db_->run(
      "SELECT node_id, version, snapshot_version, last_contact_ms, stats_json, stats_at_ms "
      "FROM nodes",
      {});
  if (!result) return tl::unexpected(std::move(result.error()));
  std::vector<NodeRecord> nodes;
  nodes.reserve(result->rows.size());
  for (auto& row : result->rows) {
    nodes.push_back(NodeRecord{std::move(row[0]), std::move(row[1]),
                               static_cast<uint64_t>(int64_column(row[2])), int64_column(row[3]),
                               std::move(row[4]), int64_column(row[5])});
  }
  // Sorted here, not in SQL: PostgreSQL would order ids by the database's collation.
  std::sort(nodes.begin(), nodes.end(),
            [](const NodeRecord& a, const NodeRecord& b) { return a.node_id < b.node_id; });
  return nodes;
}

StoreResult<void> Store::add_telemetry(const std::vector<TelemetryRow>& rows) {
  if (rows.empty()) return {};
  MutexLock lock(mu_);
  return in_transaction(*db_, [&](SqlDb& db) -> StoreResult<void> {
    for (const TelemetryRow& row : rows) {
      auto added = succeeded(
          db.run("INSERT INTO telemetry (node_id, route, at_ms, json) VALUES ($1, $2, $3, $4)",
                   {row.node_id, row.route, row.at_ms, row.json}));
      if (!added) return added;
    }
    return {};
  });
}

StoreResult<std::vector<TelemetryRow>> Store::latest_telemetry(int64_t since_ms) {
  MutexLock lock(mu_);
  auto result = db_->run(
      "SELECT node_id, route, at_ms, json FROM ("
      "  SELECT node_id, route, at_ms, json, ROW_NUMBER() OVER ("
      "    PARTITION BY node_id, route ORDER BY at_ms DESC, id DESC) AS newest"
      "  FROM telemetry WHERE at_ms >= $1) AS recent "
      "WHERE newest = 1",
      {since_ms});
  if (!result) return tl::unexpected(std::move(result.error()));
  std::vector<TelemetryRow> rows;
  rows.reserve(result->rows.size());
  for (auto& row : result->rows) {
    rows.push_back(TelemetryRow{std::move(row[0]), std::move(row[1]), int64_column(row[2]),
                                std::move(row[3])});
  }
  std::sort(rows.begin(), rows.end(), [](const TelemetryRow& a, const TelemetryRow& b) {
    return std::tie(a.node_id, a.route) < std::tie(b.node_id, b.route);
  });
  return rows;
}

StoreResult<uint64_t> Store::prune_telemetry(int64_t before_ms) {
  MutexLock lock(mu_);
  auto result = db_->run("DELETE FROM telemetry WHERE at_ms < $1", {before_ms});
  if (!result) return tl::unexpected(std::move(result.error()));
  return result->changes;
}

}  // namespace rolter
