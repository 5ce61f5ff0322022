#include "store/migrations.h"

#include <vector>

namespace rolter {
namespace {

// Statements run as written on both backends, except that "{auto_id}" becomes the backend's
// auto-increment primary key type (SqlDb::auto_id_type()).
struct Migration {
  int version;
  std::vector<std::string_view> statements;
};

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> kMigrations = {
      {1,
       {
           // Providers, routes, groups and keys: each a JSON document under its name.
           R"(CREATE TABLE entities (
                kind TEXT NOT NULL,
                name TEXT NOT NULL,
                json TEXT NOT NULL,
                PRIMARY KEY (kind, name)))",
           R"(CREATE TABLE settings (
                name TEXT PRIMARY KEY,
                value TEXT NOT NULL))",
           // An entry that does not say what happened is a bug in its writer; refusing it also
           // refuses the change it describes.
           R"(CREATE TABLE audit_log (
                id {auto_id},
                at_ms BIGINT NOT NULL,
                actor TEXT NOT NULL,
                action TEXT NOT NULL CHECK (action <> ''),
                subject TEXT NOT NULL,
                before_json TEXT NOT NULL,
                after_json TEXT NOT NULL))",
           R"(CREATE TABLE admin_tokens (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                role TEXT NOT NULL,
                salt_hex TEXT NOT NULL,
                sha256_hex TEXT NOT NULL,
                created_ms BIGINT NOT NULL,
                revoked INTEGER NOT NULL DEFAULT 0))",
           // snapshot_version is a uint64 stored in a signed BIGINT: it round-trips bit for bit.
           R"(CREATE TABLE nodes (
                node_id TEXT PRIMARY KEY,
                version TEXT NOT NULL,
                snapshot_version BIGINT NOT NULL,
                last_contact_ms BIGINT NOT NULL,
                stats_json TEXT NOT NULL,
                stats_at_ms BIGINT NOT NULL))",
           // id orders rows added in the same millisecond.
           R"(CREATE TABLE telemetry (
                id {auto_id},
                node_id TEXT NOT NULL,
                route TEXT NOT NULL,
                at_ms BIGINT NOT NULL,
                json TEXT NOT NULL))",
           "CREATE INDEX telemetry_by_time ON telemetry (at_ms)",
           "CREATE INDEX telemetry_by_series ON telemetry (node_id, route, at_ms)",
       }},
      {2,
       {
           // Usage counters per hour (SPEC §15); nodes add to them, never replace them. Spend is in
           // nano-dollars so that sums are exact integers on both backends.
           R"(CREATE TABLE usage_hours (
                hour_ms BIGINT NOT NULL,
                key_name TEXT NOT NULL,
                team TEXT NOT NULL,
                route TEXT NOT NULL,
                model TEXT NOT NULL,
                requests BIGINT NOT NULL,
                input_tokens BIGINT NOT NULL,
                cached_input_tokens BIGINT NOT NULL,
                output_tokens BIGINT NOT NULL,
                estimated BIGINT NOT NULL,
                usd_nanos BIGINT NOT NULL,
                PRIMARY KEY (hour_ms, key_name, team, route, model)))",
           "CREATE INDEX usage_hours_by_key ON usage_hours (key_name, hour_ms)",
           "CREATE INDEX usage_hours_by_team ON usage_hours (team, hour_ms)",
       }},
  };
  return kMigrations;
}

std::string with_auto_id(std::string_view statement, std::string_view auto_id_type) {
  constexpr std::string_view kPlaceholder = "{auto_id}";
  std::string out(statement);
  for (size_t pos = out.find(kPlaceholder); pos != std::string::npos;
       pos = out.find(kPlaceholder, pos + auto_id_type.size())) {
    out.replace(pos, kPlaceholder.size(), auto_id_type);
  }
  return out;
}

// The highest migration recorded; REQUIRES: inside a transaction holding the schema lock.
StoreResult<int> recorded_version(SqlDb& db) {
  auto max = db.run("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", {});
  if (!max) return tl::unexpected(std::move(max.error()));
  return static_cast<int>(int64_column(max->rows.at(0).at(0)));
}

// Runs `step` in a transaction holding the schema lock.
template <typename Step>
auto locked(SqlDb& db, Step step) -> decltype(step()) {
  return in_transaction(db, [&](SqlDb&) -> decltype(step()) {
    if (auto lock = db.lock_schema(); !lock) return tl::unexpected(std::move(lock.error()));
    return step();
  });
}

StoreResult<int> apply_one(SqlDb& db, const Migration& migration) {
  return locked(db, [&]() -> StoreResult<int> {
    auto version = recorded_version(db);
    // Another process may have applied it since this one looked.
    if (!version || *version >= migration.version) return version;
    for (std::string_view statement : migration.statements) {
      if (auto done = db.run(with_auto_id(statement, db.auto_id_type()), {}); !done) {
        return tl::unexpected(std::move(done.error()));
      }
    }
    auto recorded = db.run("INSERT INTO schema_migrations (version) VALUES ($1)",
                           {SqlValue(int64_t{migration.version})});
    if (!recorded) return tl::unexpected(std::move(recorded.error()));
    return migration.version;
  });
}

}  // namespace

int latest_schema_version() { return migrations().back().version; }

StoreResult<int> apply_migrations(SqlDb& db) {
  auto version = locked(db, [&]() -> StoreResult<int> {
    auto created =
        db.run("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)", {});
    if (!created) return tl::unexpected(std::move(created.error()));
    return recorded_version(db);
  });
  if (!version) return tl::unexpected("cannot read the schema version: " + version.error());
  if (*version > latest_schema_version()) {
    return tl::unexpected("the database's schema version " + std::to_string(*version) +
                          " is newer than this build of rolter knows (" +
                          std::to_string(latest_schema_version()) + "); upgrade rolter");
  }
  for (const Migration& migration : migrations()) {
    if (migration.version <= *version) continue;
    version = apply_one(db, migration);
    if (!version) {
      return tl::unexpected("migration " + std::to_string(migration.version) +
                            " failed: " + version.error());
    }
  }
  return version;
}

}  // namespace rolter
