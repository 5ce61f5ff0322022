// The SQLite backend of SqlDb: one connection to a file (or ":memory:"), in WAL mode with a busy
// timeout, so that a reader never waits for a writer and a writer waits for another a while
// before it fails. Internal to src/store/.
//
// Thread-safety: as SqlDb; the owner serialises calls.
#pragma once

#include <memory>
#include <string>

#include "store/sql_db.h"

namespace rolter {

// Opens (creating if missing) the database at `path`, or ":memory:". Fails when the file's
// directory does not exist.
StoreResult<std::unique_ptr<SqlDb>> open_sqlite(const std::string& path);

}  // namespace rolter
