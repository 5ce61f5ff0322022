// Store: opening a database, and the configuration half of the store (entities, settings, admin
// tokens, audit). The fleet half (nodes, telemetry) is in store_fleet.cc.
#include "store/store.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <tuple>

#include "store/migrations.h"
#include "store/postgres_db.h"
#include "store/sql_db.h"
#include "store/sqlite_db.h"
#include "store/store_url.h"

namespace rolter {
namespace {

constexpr std::array kEntityKinds = {EntityKind::kProvider, EntityKind::kRoute,
                                     EntityKind::kProviderGroup, EntityKind::kKey,
                                     EntityKind::kTeam};

std::optional<EntityKind> entity_kind_from(std::string_view name) {
  for (EntityKind kind : kEntityKinds) {
    if (entity_kind_name(kind) == name) return kind;
  }
  return std::nullopt;
}

StoreResult<void> append_audit(SqlDb& db, const AuditEntry& audit) {
  return succeeded(
      db.run("INSERT INTO audit_log (at_ms, actor, action, subject, before_json, after_json) "
             "VALUES ($1, $2, $3, $4, $5, $6)",
             {audit.at_ms, audit.actor, audit.action, audit.subject, audit.before_json,
              audit.after_json}));
}

StoreResult<void> upsert_setting(SqlDb& db, const std::string& key, const std::string& value) {
  return succeeded(
      db.run("INSERT INTO settings (name, value) VALUES ($1, $2) "
             "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
             {key, value}));
}

// "%needle%" for LIKE ... ESCAPE '!', lower-cased as the columns it is matched against are. The
// escape is '!' rather than a backslash, whose meaning in a literal depends on a server setting.
std::string contains_pattern(std::string_view needle) {
  std::string pattern = "%";
  for (char c : needle) {
    if (c == '%' || c == '_' || c == '!') pattern += '!';
    pattern += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return pattern + "%";
}

AuditEntry audit_from_row(const std::vector<std::string>& row) {
  return AuditEntry{
      int64_column(row[0]), int64_column(row[1]), row[2], row[3], row[4], row[5], row[6]};
}

}  // namespace

std::string_view entity_kind_name(EntityKind kind) {
  switch (kind) {
    case EntityKind::kProvider:
      return "provider";
    case EntityKind::kRoute:
      return "route";
    case EntityKind::kProviderGroup:
      return "provider_group";
    case EntityKind::kKey:
      return "key";
    case EntityKind::kTeam:
      return "team";
  }
  return "unknown";
}

StoreResult<std::unique_ptr<Store>> Store::open(const std::string& url) {
  auto parsed = parse_store_url(url);
  if (!parsed) return tl::unexpected(std::move(parsed.error()));
  auto db = parsed->backend == StoreBackend::kSqlite ? open_sqlite(parsed->target)
                                                     : open_postgres(parsed->target);
  if (!db) return tl::unexpected(hide_password(std::move(db.error()), url));
  auto version = apply_migrations(**db);
  if (!version) {
    return tl::unexpected(hide_password(
        "cannot prepare the store at \"" + redact_password(url) + "\": " + version.error(), url));
  }
  return std::unique_ptr<Store>(new Store(std::move(*db), *version));
}

Store::Store(std::unique_ptr<SqlDb> db, int schema_version)
    : db_(std::move(db)), backend_(db_->backend()), schema_version_(schema_version) {}

Store::~Store() = default;

std::string_view Store::backend() const { return backend_; }

int Store::schema_version() const { return schema_version_; }

StoreResult<std::vector<Entity>> Store::entities() {
  MutexLock lock(mu_);
  auto result = db_->run("SELECT kind, name, json FROM entities", {});
  if (!result) return tl::unexpected(std::move(result.error()));
  std::vector<Entity> entities;
  entities.reserve(result->rows.size());
  for (auto& row : result->rows) {
    auto kind = entity_kind_from(row[0]);
    if (!kind)
      return tl::unexpected("the store holds an entity of unknown kind \"" + row[0] + "\"");
    entities.push_back(Entity{*kind, std::move(row[1]), std::move(row[2])});
  }
  // Sorted here, not in SQL: PostgreSQL would order names by the database's collation.
  std::sort(entities.begin(), entities.end(), [](const Entity& a, const Entity& b) {
    return std::tie(a.kind, a.name) < std::tie(b.kind, b.name);
  });
  return entities;
}

StoreResult<void> Store::put_entity(const Entity& entity, const AuditEntry& audit) {
  MutexLock lock(mu_);
  return in_transaction(*db_, [&](SqlDb& db) -> StoreResult<void> {
    auto put =
        succeeded(db.run("INSERT INTO entities (kind, name, json) VALUES ($1, $2, $3) "
                         "ON CONFLICT (kind, name) DO UPDATE SET json = excluded.json",
                         {entity_kind_name(entity.kind), entity.name, entity.json}));
    if (!put) return put;
    return append_audit(db, audit);
  });
}

StoreResult<void> Store::delete_entity(EntityKind kind, const std::string& name,
                                       const AuditEntry& audit) {
  MutexLock lock(mu_);
  return in_transaction(*db_, [&](SqlDb& db) -> StoreResult<void> {
    auto deleted = succeeded(db.run("DELETE FROM entities WHERE kind = $1 AND name = $2",
                                    {entity_kind_name(kind), name}));
    if (!deleted) return deleted;
    return append_audit(db, audit);
  });
}

StoreResult<std::optional<std::string>> Store::setting(const std::string& key) {
  MutexLock lock(mu_);
  auto result = db_->run("SELECT value FROM settings WHERE name = $1", {key});
  if (!result) return tl::unexpected(std::move(result.error()));
  if (result->rows.empty()) return std::optional<std::string>();
  return std::optional<std::string>(std::move(result->rows[0][0]));
}

StoreResult<void> Store::put_setting(const std::string& key, const std::string& value,
                                     const std::optional<AuditEntry>& audit) {
  MutexLock lock(mu_);
  if (!audit) return upsert_setting(*db_, key, value);
  return in_transaction(*db_, [&](SqlDb& db) -> StoreResult<void> {
    auto put = upsert_setting(db, key, value);
    if (!put) return put;
    return append_audit(db, *audit);
  });
}

StoreResult<void> Store::add_admin_token(const AdminToken& token, const AuditEntry& audit) {
  MutexLock lock(mu_);
  return in_transaction(*db_, [&](SqlDb& db) -> StoreResult<void> {
    auto added = succeeded(db.run(
        "INSERT INTO admin_tokens (id, name, role, salt_hex, sha256_hex, created_ms, revoked) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7)",
        {token.id, token.name, token.role, token.salt_hex, token.sha256_hex, token.created_ms,
         int64_t{token.revoked ? 1 : 0}}));
    if (!added) return added;
    return append_audit(db, audit);
  });
}

StoreResult<std::vector<AdminToken>> Store::admin_tokens() {
  MutexLock lock(mu_);
  auto result = db_->run(
      "SELECT id, name, role, salt_hex, sha256_hex, created_ms, revoked FROM admin_tokens", {});
  if (!result) return tl::unexpected(std::move(result.error()));
  std::vector<AdminToken> tokens;
  tokens.reserve(result->rows.size());
  for (auto& row : result->rows) {
    tokens.push_back(AdminToken{std::move(row[0]), std::move(row[1]), std::move(row[2]),
                                std::move(row[3]), std::move(row[4]), int64_column(row[5]),
                                int64_column(row[6]) != 0});
  }
  std::sort(tokens.begin(), tokens.end(), [](const AdminToken& a, const AdminToken& b) {
    return std::tie(a.created_ms, a.id) < std::tie(b.created_ms, b.id);
  });
  return tokens;
}

StoreResult<void> Store::revoke_admin_token(const std::string& id, const AuditEntry& audit) {
  MutexLock lock(mu_);
  return in_transaction(*db_, [&](SqlDb& db) -> StoreResult<void> {
    auto revoked = db.run("UPDATE admin_tokens SET revoked = 1 WHERE id = $1", {id});
    if (!revoked) return tl::unexpected(std::move(revoked.error()));
    if (revoked->changes == 0) return tl::unexpected("no admin token has id \"" + id + "\"");
    return append_audit(db, audit);
  });
}

StoreResult<std::vector<AuditEntry>> Store::audit(const std::string& contains, int limit,
                                                  int offset) {
  const int64_t rows = std::max(limit, 0);
  const int64_t skip = std::max(offset, 0);
  MutexLock lock(mu_);
  StoreResult<SqlResult> result;
  if (contains.empty()) {
    result = db_->run(
        "SELECT id, at_ms, actor, action, subject, before_json, after_json FROM audit_log "
        "ORDER BY id DESC LIMIT $1 OFFSET $2",
        {rows, skip});
  } else {
    const std::string pattern = contains_pattern(contains);
    result = db_->run(
        "SELECT id, at_ms, actor, action, subject, before_json, after_json FROM audit_log "
        "WHERE lower(actor) LIKE $1 ESCAPE '!' OR lower(action) LIKE $1 ESCAPE '!' "
        "OR lower(subject) LIKE $1 ESCAPE '!' OR lower(before_json) LIKE $1 ESCAPE '!' "
        "OR lower(after_json) LIKE $1 ESCAPE '!' "
        "ORDER BY id DESC LIMIT $2 OFFSET $3",
        {pattern, rows, skip});
  }
  if (!result) return tl::unexpected(std::move(result.error()));
  std::vector<AuditEntry> entries;
  entries.reserve(result->rows.size());
  for (const auto& row : result->rows) entries.push_back(audit_from_row(row));
  return entries;
}

}  // namespace rolter
