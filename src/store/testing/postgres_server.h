// A throwaway PostgreSQL server for tests: initdb into a new temporary directory, started with
// pg_ctl listening on a unix socket in that directory only (no TCP port, so tests running at
// once never collide), trust authentication for the user "rolter", fsync off. Stopping it
// deletes the directory.
//
// initdb refuses to run as root, so when the test runs as root the server's commands run as the
// "postgres" user (through runuser) and the directory is handed to that user first. The
// binaries come from $ROLTER_POSTGRES_BIN, else the newest /usr/lib/postgresql/*/bin, else PATH;
// when none is found start() fails saying so. Every wait has a deadline.
//
// Usage (gtest):
//   PostgresEnvironment* const kPostgres = PostgresEnvironment::install();
//   ...
//   auto server = kPostgres->server();           // started on first use, stopped at the end
//   ASSERT_TRUE(server) << server.error();
//   auto url = (*server)->create_database("t1");  // "postgresql:///t1?host=/tmp/...&user=rolter"
//
// Thread-safety: a PostgresServer is used from one thread at a time. Tests only.
#pragma once

#include <gtest/gtest.h>
#include <tl/expected.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace rolter {

class PostgresServer {
 public:
  static tl::expected<std::unique_ptr<PostgresServer>, std::string> start();

  // Stops the server and deletes its directory.
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // The URL of `database` on this server, as user "rolter".
  std::string url(std::string_view database = "postgres") const;
  // The directory holding the data directory, the log and the socket.
  const std::string& dir() const { return dir_; }

  // Creates an empty database and returns its URL.
  tl::expected<std::string, std::string> create_database(std::string_view name);
  // Runs one SQL statement on `database`, e.g. to cut other connections.
  tl::expected<void, std::string> execute(const std::string& sql,
                                          std::string_view database = "postgres");

 private:
  PostgresServer(std::string dir, std::string bin_dir);
  void stop();

  const std::string dir_;
  const std::string bin_dir_;
  bool running_ = false;
};

// One server per test binary, as a gtest Environment: started on the first server() call (tests
// that never ask never pay for it), stopped when the test program ends. A failed start is
// remembered, so every test that asks fails with the same message.
class PostgresEnvironment : public ::testing::Environment {
 public:
  // Registers an environment with gtest and returns it; call once, from a static initialiser.
  static PostgresEnvironment* install();

  tl::expected<PostgresServer*, std::string> server();
  void TearDown() override;

 private:
  std::unique_ptr<PostgresServer> server_;
  std::optional<std::string> start_error_;
};

}  // namespace rolter
