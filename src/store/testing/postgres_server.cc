#include "store/testing/postgres_server.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace rolter {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// initdb takes a second or two; far more means the machine is stuck, not slow.
constexpr auto kCommandDeadline = std::chrono::seconds(90);
// pg_ctl's own wait for the server to accept connections (or to stop), in seconds.
constexpr const char* kPgCtlWaitSeconds = "60";
constexpr const char* kUser = "rolter";

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The directory holding initdb and pg_ctl, or "" when there is none.
std::string find_bin_dir() {
  std::error_code ec;
  if (const char* chosen = std::getenv("ROLTER_POSTGRES_BIN"); chosen && *chosen) {
    return fs::exists(fs::path(chosen) / "initdb", ec) ? chosen : "";
  }
  std::string newest;
  int newest_major = -1;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string name = entry.path().filename().string();
    const int major = std::atoi(name.c_str());
    if (major > newest_major && fs::exists(entry.path() / "bin" / "initdb", ec)) {
      newest_major = major;
      newest = (entry.path() / "bin").string();
    }
  }
  if (!newest.empty()) return newest;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && fs::exists(fs::path(dir) / "initdb", ec) &&
        fs::exists(fs::path(dir) / "pg_ctl", ec)) {
      return dir;
    }
  }
  return "";
}

// Runs argv with stdout and stderr appended to `log`, waiting at most kCommandDeadline. When the
// test runs as root the command runs as the postgres user.
tl::expected<void, std::string> run(std::vector<std::string> argv, const fs::path& log) {
  if (::geteuid() == 0) {
    std::error_code ec;
    const char* runuser = fs::exists("/usr/sbin/runuser", ec) ? "/usr/sbin/runuser" : "runuser";
    argv.insert(argv.begin(), {runuser, "-u", "postgres", "--"});
  }
  std::string shown;
  for (const auto& arg : argv) shown += (shown.empty() ? "" : " ") + arg;
  // Everything the child needs is made before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (auto& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) return tl::unexpected("cannot write " + log.string());
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  if (null >= 0) ::close(null);
  ::close(out);
  if (pid < 0) return tl::unexpected("cannot fork to run " + shown);
  const auto deadline = Clock::now() + kCommandDeadline;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 || Clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return tl::unexpected(shown + " did not finish in time\n" + read_file(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return tl::unexpected(shown + " failed (status " + std::to_string(status) + ")\n" +
                          read_file(log));
  }
  return {};
}

// A new directory for the server. A unix socket's path is limited to 107 bytes, so a long
// $TMPDIR is passed over for /tmp; as root, /tmp too, which the postgres user can reach.
tl::expected<std::string, std::string> make_dir() {
  std::error_code ec;
  std::string base = fs::temp_directory_path(ec).string();
  if (ec || ::geteuid() == 0 || base.size() > 60) base = "/tmp";
  std::string path = base + "/rolter-pg-XXXXXX";
  if (!::mkdtemp(path.data())) return tl::unexpected("cannot create a directory in " + base);
  if (::geteuid() == 0) {
    const passwd* user = ::getpwnam("postgres");
    if (!user) {
      fs::remove_all(path, ec);
      return tl::unexpected(std::string(
          "running as root, the PostgreSQL server must run as the \"postgres\" user, which "
          "does not exist"));
    }
    if (::chown(path.c_str(), user->pw_uid, user->pw_gid) != 0) {
      fs::remove_all(path, ec);
      return tl::unexpected("cannot hand " + path + " to the postgres user");
    }
  }
  return path;
}

}  // namespace

tl::expected<std::unique_ptr<PostgresServer>, std::string> PostgresServer::start() {
  const std::string bin = find_bin_dir();
  if (bin.empty()) {
    return tl::unexpected(std::string(
        "the PostgreSQL server binaries (initdb, pg_ctl) were not found in $ROLTER_POSTGRES_BIN, "
        "/usr/lib/postgresql/*/bin or PATH: install postgresql-15"));
  }
  auto dir = make_dir();
  if (!dir) return tl::unexpected(std::move(dir.error()));
  std::unique_ptr<PostgresServer> server(new PostgresServer(*dir, bin));
  const fs::path log = fs::path(*dir) / "commands.log";
  const std::string data = *dir + "/data";
  auto initialised = run({bin + "/initdb", "-D", data, "-U", kUser, "--auth=trust", "--no-sync",
                          "--no-locale", "--encoding=UTF8"},
                         log);
  if (!initialised) return tl::unexpected("initdb: " + initialised.error());
  // Unix socket only, in the server's own directory; durability is not what tests check.
  const std::string options = "-k " + *dir +
                              " -c listen_addresses='' -c fsync=off"
                              " -c full_page_writes=off -c synchronous_commit=off";
  auto started = run({bin + "/pg_ctl", "-D", data, "-l", *dir + "/server.log", "-o", options, "-w",
                      "-t", kPgCtlWaitSeconds, "start"},
                     log);
  if (!started) {
    return tl::unexpected("pg_ctl start: " + started.error() + "\nserver log:\n" +
                          read_file(*dir + "/server.log"));
  }
  server->running_ = true;
  return server;
}

PostgresServer::PostgresServer(std::string dir, std::string bin_dir)
    : dir_(std::move(dir)), bin_dir_(std::move(bin_dir)) {}

PostgresServer::~PostgresServer() {
  stop();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void PostgresServer::stop() {
  if (!running_) return;
  running_ = false;
  const fs::path log = fs::path(dir_) / "commands.log";
  const std::string data = dir_ + "/data";
  // "fast" ends sessions and shuts down cleanly; "immediate" if that did not work in time.
  if (!run({bin_dir_ + "/pg_ctl", "-D", data, "-m", "fast", "-w", "-t", kPgCtlWaitSeconds, "stop"},
           log)) {
    (void)run({bin_dir_ + "/pg_ctl", "-D", data, "-m", "immediate", "-w", "-t", kPgCtlWaitSeconds,
               "stop"},
              log);
  }
}

std::string PostgresServer::url(std::string_view database) const {
  return "postgresql:///" + std::string(database) + "?host=" + dir_ + "&user=" + kUser;
}

tl::expected<void, std::string> PostgresServer::execute(const std::string& sql,
                                                        std::string_view database) {
  PGconn* conn = PQconnectdb(url(database).c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string error = PQerrorMessage(conn);
    PQfinish(conn);
    return tl::unexpected("cannot connect to the test server: " + error);
  }
  PGresult* res = PQexec(conn, sql.c_str());
  const ExecStatusType status = PQresultStatus(res);
  std::string error = PQresultErrorMessage(res);
  PQclear(res);
  PQfinish(conn);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return tl::unexpected(sql + ": " + error);
  }
  return {};
}

tl::expected<std::string, std::string> PostgresServer::create_database(std::string_view name) {
  for (char c : name) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '_')) {
      return tl::unexpected("database names here are [a-z0-9_]+, not \"" + std::string(name) +
                            "\"");
    }
  }
  auto created = execute("CREATE DATABASE " + std::string(name));
  if (!created) return tl::unexpected(std::move(created.error()));
  return url(name);
}

PostgresEnvironment* PostgresEnvironment::install() {
  auto* environment = new PostgresEnvironment();
  ::testing::AddGlobalTestEnvironment(environment);  // gtest owns it
  return environment;
}

tl::expected<PostgresServer*, std::string> PostgresEnvironment::server() {
  if (server_) return server_.get();
  if (start_error_) return tl::unexpected(*start_error_);
  auto started = PostgresServer::start();
  if (!started) {
    start_error_ = "cannot start a PostgreSQL server for the tests: " + started.error();
    return tl::unexpected(*start_error_);
  }
  server_ = std::move(*started);
  return server_.get();
}

void PostgresEnvironment::TearDown() { server_.reset(); }

}  // namespace rolter
