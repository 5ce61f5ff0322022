#include "store/sqlite_db.h"

#include <sqlite3.h>

#include <filesystem>
#include <system_error>
#include <unordered_map>

namespace rolter {
namespace {

// How long a writer waits for another connection's write transaction before it fails: far
// longer than any of the store's transactions, short enough to surface a stuck process.
constexpr int kBusyTimeoutMs = 5000;

class SqliteDb final : public SqlDb {
 public:
  explicit SqliteDb(sqlite3* db) : db_(db) {}

  ~SqliteDb() override {
    for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }

  using SqlDb::run;

  std::string_view backend() const override { return "sqlite"; }
  std::string_view auto_id_type() const override { return "INTEGER PRIMARY KEY AUTOINCREMENT"; }

  StoreResult<SqlResult> run(std::string_view sql, std::span<const SqlValue> params) override {
    if (auto error = nul_byte_error(params)) return fail(sql, *error);
    auto stmt = prepare(sql);
    if (!stmt) return tl::unexpected(std::move(stmt.error()));
    auto result = bind_and_step(*stmt, sql, params);
    sqlite3_reset(*stmt);
    sqlite3_clear_bindings(*stmt);
    return result;
  }

  // IMMEDIATE takes the write lock at once; a deferred transaction that read first could fail
  // with SQLITE_BUSY on its first write, which the busy timeout cannot wait out.
  StoreResult<void> begin() override { return run_plain("BEGIN IMMEDIATE"); }

  // The write lock that begin() took already keeps other connections from changing the schema.
  StoreResult<void> lock_schema() override { return {}; }

 private:
  tl::unexpected<std::string> fail(std::string_view sql, std::string_view message) const {
    return tl::unexpected("sqlite: " + std::string(message) + " (in \"" + statement_excerpt(sql) +
                          "\")");
  }

  // Statements are prepared once per connection and reused: the store runs a fixed set.
  StoreResult<sqlite3_stmt*> prepare(std::string_view sql) {
    auto found = statements_.find(std::string(sql));
    if (found != statements_.end()) return found->second;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) !=
        SQLITE_OK) {
      sqlite3_finalize(stmt);
      return fail(sql, sqlite3_errmsg(db_));
    }
    statements_.emplace(std::string(sql), stmt);
    return stmt;
  }

  StoreResult<SqlResult> bind_and_step(sqlite3_stmt* stmt, std::string_view sql,
                                       std::span<const SqlValue> params) {
    for (size_t i = 0; i < params.size(); ++i) {
      const std::string name = "$" + std::to_string(i + 1);
      const int index = sqlite3_bind_parameter_index(stmt, name.c_str());
      if (index == 0) continue;  // the statement does not use this parameter
      int rc;
      if (const auto* number = std::get_if<int64_t>(&params[i])) {
        rc = sqlite3_bind_int64(stmt, index, *number);
      } else {
        const auto text = std::get<std::string_view>(params[i]);
        // STATIC: the caller's strings outlive the statement's use, which ends with reset.
        rc = sqlite3_bind_text64(stmt, index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8);
      }
      if (rc != SQLITE_OK) return fail(sql, sqlite3_errmsg(db_));
    }
    SqlResult result;
    const int columns = sqlite3_column_count(stmt);
    for (;;) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return fail(sql, sqlite3_errmsg(db_));
      auto& row = result.rows.emplace_back();
      row.reserve(columns);
      for (int c = 0; c < columns; ++c) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
        const int size = sqlite3_column_bytes(stmt, c);
        row.emplace_back(text ? std::string(text, size) : std::string());
      }
    }
    if (!sqlite3_stmt_readonly(stmt)) result.changes = sqlite3_changes64(db_);
    return result;
  }

  sqlite3* const db_;
  std::unordered_map<std::string, sqlite3_stmt*> statements_;
};

}  // namespace

StoreResult<std::unique_ptr<SqlDb>> open_sqlite(const std::string& path) {
  if (path != ":memory:") {
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      return tl::unexpected("sqlite: cannot open \"" + path + "\": directory \"" + dir.string() +
                            "\" does not exist");
    }
  }
  sqlite3* handle = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = handle ? sqlite3_errmsg(handle) : sqlite3_errstr(rc);
    sqlite3_close_v2(handle);
    return tl::unexpected("sqlite: cannot open \"" + path + "\": " + message);
  }
  auto db = std::make_unique<SqliteDb>(handle);
  // The busy timeout first, so that switching to WAL waits for another process's lock too. The
  // switch is the first statement to read the file: where a file that is no database fails.
  const std::string busy = "PRAGMA busy_timeout = " + std::to_string(kBusyTimeoutMs);
  for (const std::string& pragma : {busy, std::string("PRAGMA journal_mode = WAL")}) {
    if (!db->run(pragma, {})) {
      return tl::unexpected("sqlite: cannot open \"" + path + "\": " + sqlite3_errmsg(handle));
    }
  }
  return std::unique_ptr<SqlDb>(std::move(db));
}

}  // namespace rolter
