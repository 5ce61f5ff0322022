// The PostgreSQL backend of SqlDb: one libpq connection. A statement that fails because the
// connection broke (a server restart, an idle connection cut by a proxy) is retried once on a
// fresh connection, unless it ran inside a transaction: then the transaction's outcome is not
// known, so the failure is reported and the next statement reconnects. Internal to src/store/.
//
// Thread-safety: as SqlDb; the owner serialises calls.
#pragma once

#include <memory>
#include <string>

#include "store/sql_db.h"

namespace rolter {

// Connects to a libpq URI ("postgres://..." or "postgresql://..."). Errors never contain the
// URL's password.
StoreResult<std::unique_ptr<SqlDb>> open_postgres(const std::string& url);

}  // namespace rolter
