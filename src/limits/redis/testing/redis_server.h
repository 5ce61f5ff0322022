// RedisServer: a real redis-server for tests, on a free loopback port, in a temporary directory,
// without persistence. It can be killed, restarted on the same port, paused and resumed, to play
// the faults the Redis limiter must survive. It also listens on a Unix socket and, when built with
// `tls`, on a second TLS port whose certificate (for localhost and 127.0.0.1) is signed by a
// throwaway CA made at start-up with the openssl command (ca_file()).
//
//   RedisServer redis;
//   ASSERT_TRUE(redis.start()) << redis.error();
//   options.connection.port = redis.port();
//
// Thread-safety: not thread-safe; drive it from the test's main thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rolter {

class RedisServer {
 public:
  explicit RedisServer(bool tls = false);
  ~RedisServer();  // kills the server and removes its directory
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // Starts redis-server and waits until it answers PING. The first start picks a free port; later
  // starts reuse it. Returns false with error() set when it could not.
  bool start();
  // SIGKILL, then waits for the process to end.
  void kill();
  // SIGSTOP / SIGCONT: a stopped server keeps its connections open and answers nothing.
  void pause();
  void resume();

  uint16_t port() const { return port_; }  // plain TCP
  uint16_t tls_port() const { return tls_port_; }
  std::string unix_path() const { return dir_ + "/redis.sock"; }
  std::string ca_file() const { return dir_ + "/ca.pem"; }  // the CA that signed the TLS cert
  const std::string& error() const { return error_; }

  // One command over a blocking connection of its own; the reply as text ("" on failure), an
  // integer reply in decimal, an array's elements joined by ','.
  std::string query(const std::vector<std::string>& args) const;

 private:
  bool start_once();
  bool make_certificates();

  bool tls_ = false;
  std::string dir_;
  uint16_t port_ = 0;
  uint16_t tls_port_ = 0;
  pid_t pid_ = -1;
  std::string error_;
};

// A free loopback TCP port: bound to port 0, read, and closed (so it may be taken again).
uint16_t free_loopback_port();

// A TCP listener that lets clients connect (the kernel completes the handshake) and never reads
// or answers: a server that is up but hung.
class SilentServer {
 public:
  SilentServer();
  ~SilentServer();
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

}  // namespace rolter
