// Reading a store URL: which backend, and what to hand it; and hiding a URL's password before it
// appears in a message.
//
//   auto url = parse_store_url("sqlite:///var/lib/rolter/rolter.db");
//   // url->backend == StoreBackend::kSqlite, url->target == "/var/lib/rolter/rolter.db"
//   redact_password("postgres://ops:hunter2@db/rolter")  // "postgres://ops:***@db/rolter"
//   hide_password("bad token \"hunter2\"", "postgres://ops:hunter2@db")  // "bad token \"***\""
//
// Thread-safety: pure functions; call from any thread.
#pragma once

#include <tl/expected.hpp>

#include <string>
#include <string_view>

namespace rolter {

enum class StoreBackend { kSqlite, kPostgres };

struct StoreUrl {
  StoreBackend backend = StoreBackend::kSqlite;
  // SQLite: the file path, or ":memory:". PostgreSQL: the whole URL, for libpq to parse.
  std::string target;
};

// The backend a URL names, or a message (without the URL's password) saying what is wrong.
tl::expected<StoreUrl, std::string> parse_store_url(std::string_view url);

// `url` with the password in its userinfo and any password= query parameter replaced by "***".
std::string redact_password(std::string_view url);

// `message` with every occurrence of the password in `url` (as written, and percent-decoded)
// replaced by "***": for messages from a library that may quote what it was given.
std::string hide_password(std::string message, std::string_view url);

}  // namespace rolter
