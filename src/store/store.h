// The control plane's persistent store: providers, routes, groups and keys as JSON documents,
// settings, admin tokens, the audit log, the fleet's nodes and their route telemetry.
//
// One interface over two backends, SQLite (a single control plane) and PostgreSQL (several
// control planes sharing one database). Both run the same numbered migrations on open, so a
// database created by one version of rolter is upgraded in place by the next.
//
// Every change to configuration is written together with its audit entry in one transaction:
// either both are stored or neither is. The store does not read the clock; callers pass times.
// JSON values are stored as given; validating them is the caller's job.
//
// Usage (SPEC §15) is stored as counters per (hour, key, team, route, model): add_usage() adds a
// node's batch to them in one transaction, usage() sums them up over a time range. Spend is kept
// as whole nano-dollars (a BIGINT on both backends, so sums are exact and alike on both).
//
// Usage:
//   auto store = Store::open("sqlite:/var/lib/rolter/rolter.db");
//   if (!store) return fail(store.error());
//   AuditEntry audit{.at_ms = now_ms, .actor = "ops", .action = "route.create",
//                    .subject = "route/qwen3", .before_json = "null", .after_json = json};
//   auto done = (*store)->put_entity({EntityKind::kRoute, "qwen3", json}, audit);
//
// Thread-safety: every method may be called from any thread. One mutex serialises all calls on
// a Store (a control plane's traffic is small; one connection keeps transactions simple).
// Errors are returned as values; no exception escapes. An error message never contains the
// password of a PostgreSQL URL.
#pragma once

#include <tl/expected.hpp>

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/mutex.h"
#include "usage/usage_ledger.h"

namespace rolter {

class SqlDb;

enum class EntityKind { kProvider, kRoute, kProviderGroup, kKey, kTeam };

// "provider", "route", "provider_group", "key": the name stored in the database.
std::string_view entity_kind_name(EntityKind kind);

struct Entity {
  EntityKind kind = EntityKind::kProvider;
  std::string name;
  std::string json;  // one JSON object
};

struct AuditEntry {
  int64_t id = 0;           // assigned by the store, increasing
  int64_t at_ms = 0;        // unix ms
  std::string actor;        // admin token name, e.g. "ops" or "env:ROLTER_ADMIN_TOKEN"
  std::string action;       // e.g. "route.create"; never empty
  std::string subject;      // e.g. "route/qwen3"
  std::string before_json;  // "null" when none
  std::string after_json;   // "null" when none
};

struct AdminToken {
  std::string id;  // short public id
  std::string name;
  std::string role;  // "superadmin" | "admin" | "viewer"
  std::string salt_hex;
  std::string sha256_hex;  // sha256(salt bytes || token), lowercase hex
  int64_t created_ms = 0;
  bool revoked = false;
};

struct NodeRecord {
  std::string node_id;
  std::string version;  // the node's software version
  uint64_t snapshot_version = 0;
  int64_t last_contact_ms = 0;
  std::string stats_json;  // last POST /internal/node-stats body, "null" when none
  int64_t stats_at_ms = 0;
};

struct TelemetryRow {
  std::string node_id;
  std::string route;
  int64_t at_ms = 0;
  std::string json;
};

// What usage() sums by, in the order given (usage_group_name() is each one's query word).
enum class UsageGroup { kModel, kRoute, kKey, kTeam, kDay, kHour };
std::string_view usage_group_name(UsageGroup group);
std::optional<UsageGroup> usage_group_from(std::string_view name);

struct UsageQuery {
  // The hours counted: those that start at or after the start of the hour holding from_ms, and
  // before to_ms (unix ms). Usage is kept per hour, so a range is as fine as an hour.
  int64_t from_ms = 0;
  int64_t to_ms = std::numeric_limits<int64_t>::max();
  std::string key;                   // "" = every key
  std::string team;                  // "" = every team
  std::string route;                 // "" = every route
  std::vector<UsageGroup> group_by;  // empty = one total
};

// The error is a message for an operator, never containing a password from the URL.
template <typename T>
using StoreResult = tl::expected<T, std::string>;

class Store {
 public:
  // "sqlite:PATH", "sqlite://PATH" (PATH relative or absolute; "sqlite::memory:" for tests), or
  // "postgres://..." / "postgresql://..." (any libpq URI, including host=/socket/dir query
  // parameters). Connects, then applies the numbered migrations not yet applied, one
  // transaction each. A SQLite file is created if missing, but its directory must exist.
  static StoreResult<std::unique_ptr<Store>> open(const std::string& url);

  virtual ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  std::string_view backend() const;  // "sqlite" | "postgres"
  int schema_version() const;        // highest applied migration

  // All entities, by kind (in EntityKind order) then name (bytewise).
  StoreResult<std::vector<Entity>> entities();
  // Creates or replaces an entity and appends `audit`, in one transaction.
  StoreResult<void> put_entity(const Entity& entity, const AuditEntry& audit);
  // Deletes an entity and appends `audit`, in one transaction. Deleting a missing entity is not
  // an error (the audit entry is still written).
  StoreResult<void> delete_entity(EntityKind kind, const std::string& name,
                                  const AuditEntry& audit);

  // The value of a setting, or nullopt when it was never set.
  StoreResult<std::optional<std::string>> setting(const std::string& key);
  // Creates or replaces a setting; `audit`, when given, is appended in the same transaction.
  StoreResult<void> put_setting(const std::string& key, const std::string& value,
                                const std::optional<AuditEntry>& audit = std::nullopt);

  // Fails if a token with the same id exists.
  StoreResult<void> add_admin_token(const AdminToken& token, const AuditEntry& audit);
  // Oldest first (by created_ms, then id).
  StoreResult<std::vector<AdminToken>> admin_tokens();
  // Marks a token revoked and appends `audit`. Fails, writing nothing, when no token has `id`;
  // revoking a revoked token succeeds.
  StoreResult<void> revoke_admin_token(const std::string& id, const AuditEntry& audit);

  // Newest first. `contains` (empty = all) keeps the entries whose actor, action, subject,
  // before or after contains it, ignoring the case of ASCII letters. At most `limit` entries,
  // skipping the first `offset`; a negative limit or offset counts as 0.
  StoreResult<std::vector<AuditEntry>> audit(const std::string& contains, int limit, int offset);

  // Creates or updates a node's row: version, snapshot_version, last_contact_ms = now_ms.
  StoreResult<void> touch_node(const std::string& node_id, const std::string& version,
                               uint64_t snapshot_version, int64_t now_ms);
  // Records a node's stats (stats_json, stats_at_ms = now_ms). A node that reports is alive, so
  // last_contact_ms = now_ms as well; a missing row is created with an empty version.
  StoreResult<void> put_node_stats(const std::string& node_id, const std::string& stats_json,
                                   int64_t now_ms);
  // All nodes, by node_id (bytewise).
  StoreResult<std::vector<NodeRecord>> nodes();

  // Appends rows, all in one transaction.
  StoreResult<void> add_telemetry(const std::vector<TelemetryRow>& rows);
  // The newest row per (node_id, route) among those with at_ms >= since_ms, by node_id then
  // route. Of rows with equal at_ms, the one added last counts as newest.
  StoreResult<std::vector<TelemetryRow>> latest_telemetry(int64_t since_ms);
  // Deletes the rows with at_ms < before_ms and returns how many there were.
  StoreResult<uint64_t> prune_telemetry(int64_t before_ms);

  // Adds each row's counts to the stored counters of its (hour, key, team, route, model), all in
  // one transaction: either every row is added or none is. No rows = no transaction.
  StoreResult<void> add_usage(const std::vector<UsageRow>& rows);
  // The counters of `query`'s hours and filters, summed per distinct value of its group_by
  // fields. In each row only the grouped fields are set: key.hour_ms is the start of the UTC day
  // or hour (0 when neither is grouped by), the names not grouped by are "". Ordered by hour_ms,
  // then key, team, route, model (bytewise). Without group_by: one row, or none when no hour
  // matched.
  StoreResult<std::vector<UsageRow>> usage(const UsageQuery& query);
  // Transactions add_usage() ran since this Store was opened (failed ones too): the count of
  // writes usage costs the database.
  uint64_t usage_writes() const { return usage_writes_.load(std::memory_order_relaxed); }

 private:
  Store(std::unique_ptr<SqlDb> db, int schema_version);

  Mutex mu_;
  const std::unique_ptr<SqlDb> db_ PT_GUARDED_BY(mu_);
  const std::string_view backend_;  // the connection's backend(), a constant
  const int schema_version_;
  std::atomic<uint64_t> usage_writes_{0};
};

}  // namespace rolter
