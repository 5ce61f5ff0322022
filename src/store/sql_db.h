// SqlDb: the narrow interface the store runs its SQL through, one implementation per backend
// (sqlite_db.h, postgres_db.h). Internal to src/store/.
//
// Statements are parameterised: values are never spliced into SQL text. Parameters are written
// $1, $2, ... in both dialects (SQLite binds them by name, PostgreSQL by position). Results come
// back as text, the way both backends can render any column; NULL reads as "".
//
// Thread-safety: none. A SqlDb is one connection; its owner serialises every call.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "store/store.h"

namespace rolter {

// A statement parameter; strings are viewed, so they must outlive the call.
using SqlValue = std::variant<int64_t, std::string_view>;

struct SqlResult {
  std::vector<std::vector<std::string>> rows;
  uint64_t changes = 0;  // rows inserted, updated or deleted by the statement
};

class SqlDb {
 public:
  virtual ~SqlDb() = default;

  virtual std::string_view backend() const = 0;  // "sqlite" | "postgres"

  // The column type of an auto-increment 64-bit primary key, for the migrations' DDL.
  virtual std::string_view auto_id_type() const = 0;

  // Runs one statement with `params` bound to $1..$n.
  virtual StoreResult<SqlResult> run(std::string_view sql, std::span<const SqlValue> params) = 0;

  // Starts a transaction that will write: SQLite takes the write lock now (so a transaction never
  // fails halfway waiting to upgrade a read lock); PostgreSQL starts an ordinary one.
  virtual StoreResult<void> begin() = 0;

  // Inside a transaction: waits until no other connection is changing the schema, until the
  // transaction ends. Migrations hold it so that two processes opening one database at once
  // do not both apply a migration.
  virtual StoreResult<void> lock_schema() = 0;

  StoreResult<void> commit() { return run_plain("COMMIT"); }
  // Best effort: a failed rollback leaves nothing to do but report the first error.
  void rollback() { (void)run_plain("ROLLBACK"); }

  StoreResult<SqlResult> run(std::string_view sql, std::initializer_list<SqlValue> params) {
    return run(sql, std::span<const SqlValue>(params.begin(), params.size()));
  }

 protected:
  StoreResult<void> run_plain(std::string_view sql) {
    auto result = run(sql, std::span<const SqlValue>());
    if (!result) return tl::unexpected(std::move(result.error()));
    return {};
  }
};

// The outcome of a statement whose rows do not matter.
inline StoreResult<void> succeeded(StoreResult<SqlResult> result) {
  if (!result) return tl::unexpected(std::move(result.error()));
  return {};
}

// Runs `step(db)` (returning a StoreResult) in a transaction: commits if it succeeds, rolls back
// if it or the commit fails. The step is handed the connection, so a caller that guards it with a
// lock need not reach for it again from inside the step.
template <typename Step>
auto in_transaction(SqlDb& db, Step step) -> decltype(step(db)) {
  if (auto begun = db.begin(); !begun) return tl::unexpected(std::move(begun.error()));
  auto result = step(db);
  if (!result) {
    db.rollback();
    return result;
  }
  if (auto committed = db.commit(); !committed) {
    db.rollback();
    return tl::unexpected(std::move(committed.error()));
  }
  return result;
}

// Neither backend keeps a NUL byte in text the same way (libpq would cut the value short), so
// both refuse one: returns the error to report when a string parameter holds a NUL byte.
std::optional<std::string> nul_byte_error(std::span<const SqlValue> params);

// A column read back as text, as an integer; 0 when it is not one (a NULL reads as "").
int64_t int64_column(std::string_view text);

// The first words of a statement, to say in an error which one failed without quoting values
// (there are none in the text: they are parameters).
std::string statement_excerpt(std::string_view sql);

}  // namespace rolter
