// The store's schema, as numbered migrations applied in order, and the code that brings a
// database up to date. Internal to src/store/.
//
// A migration, once released, never changes: a later change to the schema is a new migration
// appended to the list. Each runs in its own transaction with the schema lock held, and records
// its number in schema_migrations, so a crash between two leaves a consistent database and two
// processes opening one database at once apply each migration once.
//
// Thread-safety: apply_migrations() uses the SqlDb it is given; its caller serialises.
#pragma once

#include "store/sql_db.h"

namespace rolter {

// The number of the newest migration this build knows.
int latest_schema_version();

// Applies the migrations the database lacks; returns its schema version afterwards. Fails when
// the database was migrated by a newer build than this one.
StoreResult<int> apply_migrations(SqlDb& db);

}  // namespace rolter
